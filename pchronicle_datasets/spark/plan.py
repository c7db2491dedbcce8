"""Which task reads which bytes: the files of a read, their document ids, and the line-boundary splits.

Planning runs where Spark plans (the driver); it lists files through fsspec (local paths, ``s3://``,
``gs://``, ``hf://``… with the filesystem's package installed) and reads only each file's first bytes.

A file is one **whole** task, read by the local reader, unless it is an uncompressed openai-msg JSON Lines
file bigger than ``split_size``: then it is cut into **ranges** of about ``split_size`` bytes. A range holds
the lines that *start* in it (a line that crosses the cut belongs to the range it starts in), which is how
Hadoop splits text. Compressed files (gzip, zstd, bzip2) cannot be entered in the middle: one task each.

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

import posixpath
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace

import fsspec
import orjson
from fsspec.core import url_to_fs

from ..compression import compression_of
from ..formats import detect, get_format
from ..formats.base import as_bytes

__all__ = ["DEFAULT_SPLIT_SIZE", "Part", "document_ids", "list_files", "plan_files", "range_bytes"]

DEFAULT_SPLIT_SIZE = 128 * 1024 * 1024  # Spark's own default for file splits (spark.sql.files.maxPartitionBytes)
_HEAD = 65536
_BLOCK = 1 << 20


@dataclass(frozen=True)
class Part:
    """One task's share of the input: a whole file, or the lines starting in ``[start, end)`` of one."""

    path: str  # the URL fsspec opens
    document_id: str  # the file as errors and /origin name it (relative, as the local loader names it)
    order: int  # the file's place among the inputs
    kind: str  # "whole" or "range"
    start: int = 0
    end: int = 0
    index: int = 0  # the range's place in its file
    first_line: int = 1  # 1-based physical line of the range's first line (from the counting pass)
    first_row: int = 0  # 0-based index among the file's non-blank lines of the range's first non-blank line

    def to_json(self) -> dict:
        return asdict(self)


def list_files(paths: Sequence[str]) -> list[tuple[str, int]]:
    """``(url, size)`` of every file the paths name: files, folders (every file below, but names starting
    with ``.`` or ``_`` as Spark skips them) and glob patterns; sorted within each entry."""
    out: list[tuple[str, int]] = []
    for entry in paths:
        fs, root = url_to_fs(entry)
        if fs.isdir(root):
            found = fs.find(root, detail=True)
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
    return out


def _strip(url: str) -> str:
    return url.split("://", 1)[1] if "://" in url else url


def document_ids(urls: Sequence[str], base: str | None = None) -> list[str]:
    """Each file relative to ``base``, else to the common parent of all files: the names the local loader
    (``load_dataset("pchronicle", data_files=…)``) gives them, so rows from both carry the same ids.

    >>> document_ids(["file:///data/a/x.jsonl", "file:///data/b/y.jsonl"])
    ['a/x.jsonl', 'b/y.jsonl']
    """
    stripped = [_strip(u) for u in urls]
    if base is not None:
        root = _strip(base).rstrip("/")
    else:
        parents = [posixpath.dirname(p) for p in stripped]
        try:
            root = posixpath.commonpath(parents) if parents and len({p.startswith("/") for p in parents}) == 1 else ""
        except ValueError:
            root = ""
    return [posixpath.relpath(p, root) if root and p.startswith(root.rstrip("/") + "/") else p for p in stripped]


def _splittable(head: bytes, fmt: str) -> bool:
    """Uncompressed openai-msg JSON Lines: the first non-blank line is, by itself, a JSON object. A file that
    is one JSON value (an array, an envelope) cannot have such a first line and more lines after it."""
    if compression_of(head) is not None:
        return False
    head = as_bytes(head)
    try:
        module = detect(head) if fmt == "auto" else get_format(fmt)
    except ValueError:  # FormatError too: not recognised, or ambiguous; the whole-file reader reports it
        return False
    if module.NAME != "openai-msg":
        return False
    for raw in head.split(b"\n")[:-1]:  # complete lines only
        if raw and not raw.isspace():
            try:
                return isinstance(orjson.loads(raw), dict)
            except orjson.JSONDecodeError:
                return False
    return False


def plan_files(
    paths: Sequence[str], fmt: str = "auto", *, split_size: int = DEFAULT_SPLIT_SIZE, base: str | None = None
) -> list[Part]:
    """The parts of a read, in input order: whole files, and ranges of big openai-msg JSON Lines files."""
    if split_size < 1:
        raise ValueError(f"split_size must be a positive number of bytes, got {split_size!r}")
    files = list_files(paths)
    ids = document_ids([u for u, _ in files], base)
    parts: list[Part] = []
    for order, ((url, size), name) in enumerate(zip(files, ids, strict=True)):
        whole = Part(url, name, order, "whole", 0, size)
        if size <= split_size:
            parts.append(whole)
            continue
        with fsspec.open(url, "rb") as f:
            head = f.read(_HEAD)
        if not _splittable(head, fmt):
            parts.append(whole)
            continue
        count = -(-size // split_size)
        step = -(-size // count)
        parts.extend(Part(url, name, order, "range", i * step, min(size, (i + 1) * step), i) for i in range(count))
    return parts


def with_offsets(parts: Sequence[Part], counts: dict[tuple[int, int], tuple[int, int]]) -> list[Part]:
    """Ranges given their first line and first row from the counting pass: ``counts[(order, index)]`` is
    ``(physical lines, non-blank lines)`` starting in that range."""
    out = []
    line, row, current = 1, 0, None
    for part in parts:
        if part.kind != "range":
            out.append(part)
            continue
        if part.order != current:
            line, row, current = 1, 0, part.order
        out.append(replace(part, first_line=line, first_row=row))
        lines, rows = counts[(part.order, part.index)]
        line, row = line + lines, row + rows
    return out


def range_bytes(part: Part) -> bytes:
    """The bytes of the lines that start in ``[part.start, part.end)``, with their newlines (a leading UTF-8
    byte-order mark of the file dropped, as the local reader drops it)."""
    with fsspec.open(part.path, "rb") as f:
        if part.start == 0:
            begin = 0
        else:
            # A line starts at `start` only when the byte before it ends a line; else the line belongs
            # to the previous range, and this one starts after its newline.
            f.seek(part.start - 1)
            prefix = b""
            while True:
                block = f.read(_BLOCK)
                if not block:
                    return b""
                prefix += block
                cut = prefix.find(b"\n")
                if cut != -1:
                    begin = part.start + cut
                    break
        if begin >= part.end:
            return b""
        f.seek(begin)
        data = f.read(part.end - begin)
        # Finish the last line, which may run past `end`.
        while data and not data.endswith(b"\n"):
            block = f.read(_BLOCK)
            if not block:
                break
            cut = block.find(b"\n")
            data += block if cut == -1 else block[: cut + 1]
            if cut != -1:
                break
    return as_bytes(data) if part.start == 0 else data


def count_lines(data: bytes) -> tuple[int, int]:
    """``(physical lines, non-blank lines)`` in the bytes of a range.

    >>> count_lines(b'{"a": 1}\\n\\n  \\n{"b": 2}\\n')
    (4, 2)
    """
    if not data:
        return 0, 0
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the final newline ends the last line; it does not start one
    return len(lines), sum(1 for raw in lines if raw and not raw.isspace())
