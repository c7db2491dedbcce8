"""Storyline rows as Arrow record batches, for any engine: ``read_batches(path, format)`` gives the rows
``load_dataset("pchronicle", format, data_files=path)`` gives, in the same order and with the same schema
(``STORYLINE_FEATURES``), without ``datasets``' cache, so Daft, Ray, DuckDB or plain pyarrow can take them
(recipes in ``docs/scaling.md``).

The builder reads its files with the same two steps, so both give the same rows: ``file_records`` (which reader
reads a file, subagent links added) and ``tables`` (the bad-record policy applied, each document a row).

>>> import pyarrow as pa
>>> table = pa.Table.from_batches(read_batches("pchronicle_datasets/samples/openai_msg/gateway_capture.jsonl"))
>>> table.num_rows, table.schema == STORY_SCHEMA
(3, True)
>>> table.column("origin").to_pylist()[0]["document_id"]
'gateway_capture.jsonl'
"""

from __future__ import annotations

import io
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from typing import Any, BinaryIO

import fsspec
import pyarrow as pa

from ..compression import MAX_DECOMPRESSED_SIZE
from ..errors import BadRecordError
from ..features import STORYLINE_FEATURES, rows_to_table, story_to_row
from ..formats import capability, format_names, get_format, iter_records
from ..formats.base import Record
from ..formats.residual import origin
from ..formats.source import MAX_RECORD_SIZE, check_record_size
from ..gc_pause import gc_paused
from ..quarantine import MAX_EXAMPLES, Quarantine, new_run_id
from ..session_links import parent_links, with_children
from ..sidecars import FOLDER_EXTENSIONS, folder_files, groups, index_note, join_members, pair, read_sidecar
from .ids import document_ids
from .line_parts import part_records
from .policy import BadRecords, Policy, check_policy, no_conversation_note, prepare_quarantine

__all__ = ["BATCH_SIZE", "STORY_SCHEMA", "check_options", "file_records", "input_files", "read_batches", "tables"]

logger = logging.getLogger("pchronicle_datasets")

BATCH_SIZE = 256  # documents per Arrow batch, by default
STORY_SCHEMA: pa.Schema = STORYLINE_FEATURES.arrow_schema


def check_options(
    fmt: str, on_bad_records: object, batch_size: object, max_decompressed_size: object, max_record_size: object
) -> None:
    """Refuse a read's options that make no sense (``ValueError`` naming the option), before anything is read:
    the builder's configuration and ``read_batches`` take the same options."""
    if fmt != "auto" and fmt not in format_names():
        raise ValueError(f"unknown pchronicle format {fmt!r}; known: auto, {', '.join(format_names())}")
    check_policy(on_bad_records)
    if type(batch_size) is not int or batch_size < 1:
        raise ValueError(f"batch_size must be a positive integer, got {batch_size!r}")
    if type(max_decompressed_size) is not int or max_decompressed_size < 1:
        raise ValueError(f"max_decompressed_size must be a positive integer, got {max_decompressed_size!r}")
    check_record_size(max_record_size)


def file_records(
    f: BinaryIO | Any,
    name: str,
    fmt: str,
    *,
    sidecar: bytes | None = None,
    links: dict[str, list[str]] | None = None,
    split: tuple[str, str] | None = None,
    byte_range: tuple[int, int | None] | None = None,
    max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
) -> Iterator[Record]:
    """The records of one open file named ``name``, read as a stream by format ``fmt`` (or ``"auto"``), with the
    ``/children`` the other files of the read give (``session_links``). ``split``: how a local plain file may be
    read in parts (``loading.split.split_kind``: kind and format); then ``byte_range``, when given, is the part
    read: its lines (kind ``"lines"``, ``line_parts``), or the sessions that start in it (kind ``"range"``, whose
    reader also reads spilled rows again by offset instead of copying them to a temporary file, part or not)."""
    if split is not None and split[0] == "lines" and byte_range is not None:
        records = part_records(f, name, get_format(split[1]), byte_range, max_record_size=max_record_size)
    elif split is not None and split[0] == "range":
        module = capability(split[1], "splittable")
        records = module.iter_records(f, name, byte_range=byte_range, max_record_size=max_record_size)
    else:
        records = iter_records(
            fmt, f, name, max_size=max_decompressed_size, sidecar=sidecar, max_record_size=max_record_size
        )
    return with_children(records, links or {})


def _row(story: dict[str, Any], name: str) -> dict[str, Any]:
    if "origin" not in story:
        # A Storyline document without provenance gets its file's (documents that have an origin keep it).
        story = {**story, "origin": origin("storyline", name)}
    return story_to_row(story, check=False)  # readers return validated documents


def _next_table(records: Iterator[Record], name: str, bad: BadRecords, size: int) -> pa.Table | None:
    rows: list[dict[str, Any]] = []
    for rec in records:
        if rec.error is not None:
            bad.take(name, rec)  # raises under on_bad_records="error"
            continue
        rows.append(_row(rec.story, name))
        if len(rows) >= size:
            break
    return rows_to_table(rows) if rows else None


def tables(
    records: Iterator[Record], name: str, bad: BadRecords, batch_size: int = BATCH_SIZE, first: int | None = None
) -> Iterator[pa.Table]:
    """The documents of ``records`` (of the file ``name``) as Arrow tables of ``batch_size`` rows (``first`` rows
    in the first one, when given: a streaming reader sees its first rows sooner); bad records go to ``bad``."""
    size = first or batch_size
    while True:
        # Decoding and row building allocate many containers without cycles: the collector waits (gc_pause.py)
        # while a table is built, and runs again while the caller uses it.
        with gc_paused():
            table = _next_table(records, name, bad, size)
        if table is None:
            return
        yield table
        size = batch_size


def read_error(exc: OSError, name: str) -> BadRecordError:
    """A file that cannot be opened or read stops the read under either policy: no record of it can be set aside."""
    return BadRecordError(f"cannot read the file: {exc}", document_id=name)


def _has_glob(path: str) -> bool:
    return any(c in path.split("::")[0] for c in "*?[")


def input_files(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> tuple[list[str], str | None]:
    """``(files, base)``: the files ``paths`` names, in order, and the folder their document ids are relative to
    (None: their common parent, ``loading.ids``). A path or fsspec URL is a file; a glob is the files it matches
    as ``data_files`` matches them (``datasets``' own resolver: sorted, hidden files left out unless named); a
    folder is the files below it of the extensions the CLI reads in a folder (``sidecars.FOLDER_EXTENSIONS``),
    in path order as ``data_dir`` lists them. One folder given alone is the base, as ``data_dir`` is."""
    from datasets.data_files import resolve_pattern  # the builder's own rule for data_files patterns

    entries = [os.fspath(paths)] if isinstance(paths, (str, os.PathLike)) else [os.fspath(p) for p in paths]
    if not entries:
        raise ValueError("read_batches needs at least one file, folder or pattern")
    files: list[str] = []
    folders: list[str] = []
    for entry in entries:
        remote = "://" in entry
        if any(c in entry.split("::")[0] for c in "*?[") and not os.path.isfile(entry):
            files += resolve_pattern(entry, base_path="")
        elif not remote and os.path.isdir(entry):
            folders.append(os.path.abspath(entry))
            found = folder_files([entry])
            if not found:
                raise FileNotFoundError(f"no file with a {', '.join(FOLDER_EXTENSIONS)} extension in {entry}")
            # In path order, as data_dir lists a folder (folder_files lists a folder's files before its subfolders).
            files += sorted(os.path.abspath(p) for p in found)
        elif remote and (folder := _remote_folder(entry)) is not None:
            folders.append(folder)
            files += resolve_pattern(folder + "/**", base_path="", allowed_extensions=FOLDER_EXTENSIONS)
        else:
            files.append(_absolute(entry))
    return files, (folders[0] if len(entries) == 1 and folders else None)


def _absolute(entry: str) -> str:
    return entry if "://" in entry else os.path.abspath(entry)


def _remote_folder(url: str) -> str | None:
    """The URL of the folder ``url`` names, spelled as its filesystem spells its files' URLs; None for a file."""
    fs, root = fsspec.core.url_to_fs(url)
    return fs.unstrip_protocol(root).rstrip("/") if fs.isdir(root) else None


def read_batches(
    path: str | os.PathLike | Sequence[str | os.PathLike],
    format: str = "auto",
    *,
    on_bad_records: Policy = "error",
    quarantine_file: str | os.PathLike | None = None,
    batch_size: int = BATCH_SIZE,
    max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
    base: str | os.PathLike | None = None,
    log: Callable[[str], None] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Record batches of ``STORYLINE_FEATURES`` rows, one per document, of the files ``path`` names (a file, a
    glob, a folder or a list of them; local paths or fsspec URLs, compressed or not), read as ``format``
    (``"auto"``: detected per file): the rows and order of ``load_dataset("pchronicle", format,
    data_files=path)``. A batch holds up to ``batch_size`` documents of one file.

    ``on_bad_records``, ``quarantine_file``, ``max_decompressed_size`` and ``max_record_size`` are the builder's
    (``docs/builder.md``); under ``"error"`` the first bad record raises ``pc.BadRecordError`` naming its file,
    line and pointer. ``base``: the folder document ids are relative to (``data_dir``); by default the one folder
    given, else the files' common parent. ``log``: where skipped records are described (the
    ``pchronicle_datasets`` logger's warnings by default). Files are read one after another as streams, so
    memory is bounded by the largest document, not the file; the batches come as they are built.

    >>> import pyarrow as pa, pchronicle_datasets as pc
    >>> batches = pc.read_batches("pchronicle_datasets/samples/sharegpt/", on_bad_records="skip", batch_size=2)
    >>> table = pa.Table.from_batches(batches, schema=pc.STORYLINE_FEATURES.arrow_schema)
    >>> sorted(set(table.column("origin").combine_chunks().field("document_id").to_pylist()))
    ['batch_0_output.jsonl', 'trajectory_samples.jsonl']
    """
    check_options(format, on_bad_records, batch_size, max_decompressed_size, max_record_size)
    files, folder = input_files(path)
    names = document_ids(files, _absolute(os.fspath(base)) if base is not None else folder)
    run = new_run_id()
    target = os.fspath(quarantine_file) if quarantine_file and on_bad_records == "skip" else None
    if target is not None and (removed := prepare_quarantine(target, files)):  # before any input is read
        logger.warning(f"pchronicle: removed a partial last entry ({removed} bytes) from {target}")
    say = log or (lambda message: logger.warning(f"pchronicle: {message}"))
    bad = BadRecords(on_bad_records, Quarantine(target, run=run, log=say, examples=MAX_EXAMPLES))
    links = parent_links(files, format)
    keep, side = pair(names, files)  # a sidecar listed beside its file is no document: its file's reader gets it
    if note := index_note(names, files):
        say(note)
    grouped = groups(names)  # files that are one document (an OpenHands conversation folder): read as one
    for i in keep:
        file, name = files[i], names[i]
        try:
            sidecar = _read_whole(files[side[i]]) if i in side else read_sidecar(file)
            if i in grouped:
                name = grouped[i][0]
                data = io.BytesIO(join_members([_read_whole(files[j]) for j in grouped[i][1]]))
            else:
                data = fsspec.open(file, "rb")
            with data as f:
                records = file_records(
                    f,
                    name,
                    format,
                    sidecar=sidecar,
                    links=links,
                    max_decompressed_size=max_decompressed_size,
                    max_record_size=max_record_size,
                )
                for table in tables(records, name, bad, batch_size):
                    yield from table.to_batches(max_chunksize=batch_size)
        except OSError as exc:
            raise read_error(exc, name) from None
    if bad.count:
        say(bad.quarantine.summary())
    if note := no_conversation_note(bad.no_conversation):
        say(note)


def _read_whole(path: str) -> bytes:
    with fsspec.open(path, "rb") as f:
        return f.read()
