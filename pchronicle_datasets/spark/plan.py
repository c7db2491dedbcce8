"""Which task reads which bytes: the files of a read, their document ids, and the line-boundary splits.

Planning runs where Spark plans (the driver); it lists files through fsspec (local paths, ``s3://``,
``gs://``, ``hf://``… with the filesystem's package installed) and reads only each file's first bytes.

A file is one **whole** task, read by the local reader, unless it is an uncompressed JSON Lines file bigger
than ``split_size`` (``split_kind`` says which): then it is cut into parts of about ``split_size`` bytes. A
part holds the lines that *start* in it (a line that crosses the cut belongs to the part it starts in), which
is how Hadoop splits text. Two kinds of parts:

- **lines**: a format whose records are one per line and stand alone (``line_reader``: storyline, chat,
  atif, sharegpt): each part's records are read in place, numbered as in the whole file (``loading.line_parts``);
- **range**: a format whose reader regroups rows (``SPLITTABLE``: openai-msg, rows grouped by session): the
  rows of all ranges must be shuffled by session before documents are built, which only
  ``pchronicle_datasets.spark.read`` does; a caller that cannot shuffle (the Data Source) plans with
  ``regroup=False`` and gets such a file whole.

Compressed files (gzip, zstd, bzip2) cannot be entered in the middle: one task each.

>>> import os, tempfile
>>> folder = tempfile.mkdtemp()
>>> rows = b"".join(b'{"session_id": "s%d", "step_id": 1}\\n' % i for i in range(100))
>>> with open(os.path.join(folder, "cap.jsonl"), "wb") as f:
...     _ = f.write(rows)
>>> [(p.document_id, p.kind) for p in plan_files([folder], "openai-msg", split_size=1000)][:2]
[('cap.jsonl', 'range'), ('cap.jsonl', 'range')]
>>> len(plan_files([folder], "openai-msg", split_size=1000))
4
>>> [p.kind for p in plan_files([folder], "openai-msg", split_size=10_000)]
['whole']
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import fsspec
from fsspec.core import url_to_fs
from fsspec.implementations.local import LocalFileSystem

from ..formats import capability
from ..formats.base import as_bytes
from ..formats.source import MAX_RECORD_SIZE
from ..loading.ids import document_ids as _document_ids
from ..loading.ranges import count_lines, read_lines
from ..loading.split import HEAD, split_kind
from ..session_links import parent_links
from ..sidecars import FOLDER_EXTENSIONS, copies_note, groups, index_note, pair, sidecar_names

__all__ = [
    "DEFAULT_SPLIT_SIZE",
    "Part",
    "count_lines",
    "count_parts",
    "document_ids",
    "input_files",
    "line_range",
    "list_files",
    "plan_files",
    "plan_links",
    "range_bytes",
    "split_kind",
    "with_offsets",
]

logger = logging.getLogger("pchronicle_datasets")

DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024  # Spark's own default for file splits (spark.sql.files.maxPartitionBytes)


@dataclass(frozen=True)
class Part:
    """One task's share of the input: a whole file, or the lines starting in ``[start, end)`` of one."""

    path: str  # the URL fsspec opens
    document_id: str  # the file as errors and /origin name it (relative, as the local loader names it)
    order: int  # the file's place among the inputs
    kind: str  # "whole", "lines" (records read in place) or "range" (rows regrouped by a shuffle)
    start: int = 0
    end: int = 0
    index: int = 0  # the part's place in its file
    first_line: int = 1  # 1-based physical line of the part's first line (from the counting pass)
    first_row: int = 0  # 0-based index among the file's non-blank lines of the part's first non-blank line
    format: str = ""  # the format of a split file (detected at planning when the read is "auto")
    sidecar: str = ""  # the URL of the file's sidecar (sidecars.py), whose bytes its reader gets; "" for none
    members: tuple[str, ...] = ()  # the URLs of the files that are one document with it (sidecars.groups), in order

    def to_json(self) -> dict:
        return asdict(self)


def list_files(paths: Sequence[str]) -> list[tuple[str, int]]:
    """``(url, size)`` of every file the paths name (``input_files``)."""
    return input_files(paths)[0]


def input_files(paths: Sequence[str]) -> tuple[list[tuple[str, int]], str | None]:
    """``(files, base)``: ``(url, size)`` of every file the paths name, sorted within each entry, and the folder
    document ids are relative to when one folder is given alone (as ``data_dir`` is; else None: the files'
    common parent). A folder is listed as the local loader lists a ``data_dir`` and the CLI a folder: the files
    below it whose names end in ``sidecars.FOLDER_EXTENSIONS`` (a Claude Code project's ``tool-results/*.txt``
    is no input), names starting with ``.`` or ``_`` left out as Spark leaves them. A file named on its own or
    matched by a glob is read whatever its name, as ``data_files`` reads it."""
    out: list[tuple[str, int]] = []
    folders: list[str] = []
    for entry in paths:
        fs, root = url_to_fs(entry)
        if fs.isdir(root):
            folders.append(root)
            below = fs.find(root, detail=True)
            found = {p: info for p, info in below.items() if p.endswith(FOLDER_EXTENSIONS)}
            if note := copies_note(sorted(below), entry, "name them, or match them with a glob, to read them"):
                logger.warning(f"pchronicle: {note}")
            if not found:
                raise FileNotFoundError(f"no file with a {', '.join(FOLDER_EXTENSIONS)} extension below {entry}")
        elif any(c in root for c in "*?["):
            found = {p: fs.info(p) for p in fs.glob(root) if not fs.isdir(p)}
        else:
            found = {root: fs.info(root)}  # a file named on its own is read whatever its name
        listed = len(found) > 1 or root not in found
        if not found:
            raise FileNotFoundError(f"no file matches {entry}")
        for name in sorted(found):
            if listed and posixpath.basename(name).startswith((".", "_")):
                continue
            out.append((fs.unstrip_protocol(name), int(found[name].get("size") or 0)))
    return out, (folders[0] if len(paths) == 1 and folders else None)


def _sidecar_beside(url: str) -> str:
    """The URL of the sidecar beside the file ``url`` when it exists, else "": a subagent file read without its
    sidecar among the inputs still says which call started it, as the local loader's ``read_sidecar`` gives it."""
    names = sidecar_names(url)
    if not names:
        return ""
    fs, _ = url_to_fs(url)
    for side in names:
        _, path = url_to_fs(side)
        if fs.isfile(path):
            return fs.unstrip_protocol(path)
    return ""


def document_ids(urls: Sequence[str], base: str | None = None) -> list[str]:
    """Each file relative to ``base``, else to the common parent of all files (``loading.ids``): the names the
    local loader (``load_dataset("pchronicle", data_files=…)``) gives them, so rows from both carry the same ids.

    >>> document_ids(["file:///data/a/x.jsonl", "file:///data/b/y.jsonl"])
    ['a/x.jsonl', 'b/y.jsonl']
    """
    return _document_ids(urls, base)


def plan_files(
    paths: Sequence[str],
    fmt: str = "auto",
    *,
    split_size: int = DEFAULT_SPLIT_SIZE,
    base: str | None = None,
    regroup: bool = True,
) -> list[Part]:
    """The parts of a read, in input order: whole files, and the parts of big JSON Lines files (``split_kind``).
    ``regroup``: whether the caller can shuffle the rows of ``range`` parts; without, such a file is one whole
    part (a warning names it and the way to split it)."""
    if split_size < 1:
        raise ValueError(f"split_size must be a positive number of bytes, got {split_size!r}")
    files, folder = input_files(paths)
    urls = [u for u, _ in files]
    ids = document_ids(urls, base if base is not None else folder)
    # As the local loader and the CLI list a folder (sidecars.py): a sidecar listed beside its file is no
    # document, its file's reader gets it; the files a harness keeps beside its sessions that hold none are left
    # out and named, once, here on the driver.
    keep, sidecars = pair(ids, urls)
    if note := index_note(ids, urls):
        logger.warning(f"pchronicle: {note}")
    grouped = groups(ids)  # files that are one document (an OpenHands conversation folder): one whole part
    parts: list[Part] = []
    for order, i in enumerate(keep):
        (url, size), name = files[i], ids[i]
        if i in grouped:
            group, members = grouped[i]
            size = sum(files[j][1] for j in members)
            parts.append(Part(url, group, order, "whole", 0, size, members=tuple(urls[j] for j in members)))
            continue
        side = urls[sidecars[i]] if i in sidecars else _sidecar_beside(url)
        whole = Part(url, name, order, "whole", 0, size, sidecar=side)
        if size <= split_size:
            parts.append(whole)
            continue
        with fsspec.open(url, "rb") as f:
            head = f.read(HEAD)
        split = split_kind(head, fmt)
        if split is not None and split[0] == "range" and capability(split[1], "regrouping") is None:
            split = None  # its rows cannot be regrouped here: the file is one task
        if split is not None and split[0] == "range" and not regroup:
            logger.warning(
                f"pchronicle: {name} ({size} bytes) is read in one task: its rows are regrouped by session, "
                "which a Spark Data Source cannot do (it has no shuffle); pchronicle_datasets.spark.read "
                "splits it"
            )
            split = None
        if split is None:
            parts.append(whole)
            continue
        kind, format_name = split
        count = -(-size // split_size)
        step = -(-size // count)
        parts.extend(
            Part(url, name, order, kind, i * step, min(size, (i + 1) * step), i, format=format_name)
            for i in range(count)
        )
    return parts


def plan_links(parts: Sequence[Part], fmt: str = "auto") -> dict[str, list[str]]:
    """The subagent links of a read, ``{parent session: [child sessions]}``: the local loader's
    (``session_links.parent_links``, each file's first line read), over the files of ``parts``. Computed on the
    driver, since no task sees the other files; the tasks add them to the parents' documents as they read
    (``records.whole_file_tables``). As ``parent_links`` (and so ``read_batches``), only local files are looked
    at (``file://`` URLs): a remote file's first line is not fetched at planning, so a parent read remotely lists
    no children."""
    paths: list[str] = []
    for url in dict.fromkeys(p.path for p in parts):
        fs, path = url_to_fs(url)
        if isinstance(fs, LocalFileSystem):
            paths.append(path)
    return parent_links(paths, fmt)


def with_offsets(parts: Sequence[Part], counts: dict[tuple[int, int], tuple[int, int]]) -> list[Part]:
    """Split parts given their first line and first row from the counting pass: ``counts[(order, index)]`` is
    ``(physical lines, non-blank lines)`` starting in that part."""
    out = []
    line, row, current = 1, 0, None
    for part in parts:
        if part.kind == "whole":
            out.append(part)
            continue
        if part.order != current:
            line, row, current = 1, 0, part.order
        out.append(replace(part, first_line=line, first_row=row))
        lines, rows = counts[(part.order, part.index)]
        line, row = line + lines, row + rows
    return out


def count_parts(parts: Sequence[Part], limit: int = MAX_RECORD_SIZE) -> dict[tuple[int, int], tuple[int, int]]:
    """The counting pass in this process (``with_offsets``' ``counts``): each split part's bytes read once,
    without parsing. ``pchronicle_datasets.spark.read`` runs the same count as a Spark job instead."""
    return {(p.order, p.index): count_lines(range_bytes(p, limit)) for p in parts if p.kind != "whole"}


def line_range(part: Part, limit: int = MAX_RECORD_SIZE) -> tuple[int, bytes]:
    """``(offset, bytes)`` of the lines that start in ``[part.start, part.end)``, with their newlines
    (``loading.ranges.read_lines``; a leading UTF-8 byte-order mark of the file dropped, as the local reader
    drops it; the offset still counts it). A last line longer than ``limit`` (``max_record_size``) is read only
    up to ``limit + 1`` bytes: the records code refuses it (``records.line_value``)."""
    with fsspec.open(part.path, "rb") as f:
        begin, data = read_lines(f, part.start, part.end, limit)
    if part.start == 0:
        kept = as_bytes(data)
        return len(data) - len(kept), kept
    return begin, data


def range_bytes(part: Part, limit: int = MAX_RECORD_SIZE) -> bytes:
    """The bytes of the lines that start in ``[part.start, part.end)`` (``line_range`` without the offset)."""
    return line_range(part, limit)[1]
