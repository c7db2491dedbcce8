"""The ``pchronicle`` Spark data source (Spark 4's Python Data Source API).

After ``pchronicle_datasets.spark.register(spark)``::

    df = spark.read.format("pchronicle").option("format", "storyline").load("s3://bucket/stories/")

gives one row of ``STORYLINE_FEATURES`` per document: the local loader's rows. A folder is listed as
``data_dir`` is (``plan.input_files``; sidecars given to their files' readers, index files left out). Its partitions are
``plan.plan_files``' parts, as for ``pchronicle_datasets.spark.read``: every file is at least one partition,
read by the local reader; an uncompressed JSON Lines file bigger than the split size whose records are one
per line (storyline, chat, atif, sharegpt: ``line_reader``) is cut at line starts into parts of about that size,
each a partition that reads its lines in place. Their line and record numbers are the whole file's: planning
counts the lines of each such file once (a read of its bytes without parsing, on the driver), so errors name
the physical line and documents named by their place (``chat.jsonl#1234``) keep that name.

Not split, each file one partition: compressed files (a stream cannot be entered in the middle), files that
are one JSON value, ShareGPT files (see ``lines``), and openai-msg captures: their rows are regrouped by
session, and a Data Source has no shuffle; a warning names each such file bigger than the split size, which
``pchronicle_datasets.spark.read`` splits (it shuffles the rows by session). Options:

- ``format``: a format name or ``auto`` (default: detected per file from its content);
- ``on_bad_records``: ``error`` (default; the job fails naming file, line and pointer) or ``skip``;
- ``quarantine``: with ``skip``, a folder where each partition's bad records are written as JSON Lines
  (``part-NNNNN.jsonl`` for a whole file, ``part-NNNNN-KKKKK.jsonl`` for part KKKKK of a split one; NNNNN the
  file's place among the inputs; rewritten by a retried task; a file of that pattern the read does not write
  is removed at planning, as it is an earlier read's); ``skip`` without it is refused, since the bad records
  would be lost;
- ``output``: ``documents`` (default), ``bad_records`` (the bad records as rows instead: ``file``, ``line``,
  ``pointer``, ``error``, ``error_type``, ``record``) or ``records`` (both, with the file order); a file that
  holds no conversation is none of the documents or bad records (``loading.policy``): it is left out and named
  in the executor's log, under either policy. ``records``, the form ``pchronicle_datasets.spark.read`` reads,
  keeps it as a ``_bad`` entry whose ``error_type`` is ``records.NO_CONVERSATION``, which ``read(…)`` sets
  apart as ``.no_conversation``;
- ``splitSize`` (or ``split_size``, the name ``pchronicle_datasets.spark.read`` takes): the split size in bytes
  (default ``DEFAULT_SPLIT_SIZE``, 128 MiB);
- ``base``: the folder document ids are relative to (default: the one folder given, as ``data_dir`` is, else
  the common parent of the files);
- ``maxDecompressedSize`` (or ``max_decompressed_size``): the most bytes one compressed file may decompress to
  (default ``compression.MAX_DECOMPRESSED_SIZE``, 64 GiB); past it the file ends with the local reader's
  ``DecompressionLimitError`` bad record;
- ``maxRecordSize`` (or ``max_record_size``): the most bytes one record may hold (a line, or a file that is one
  JSON value; default ``source.MAX_RECORD_SIZE``, 512 MiB); a longer one is the local reader's
  ``RecordTooLargeError`` bad record, its text never held.

``pchronicle_datasets.spark.read`` uses this source for each of its steps, with the internal options ``plan``,
``output=rows|line_counts`` and ``links`` (the subagent links of all its files, ``plan.plan_links``; the
source computes them itself, at planning, when it plans a read of its own).
"""

from __future__ import annotations

import io
import logging
import re
from collections.abc import Iterator
from typing import Any

import fsspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ..compression import MAX_DECOMPRESSED_SIZE
from ..formats import format_names
from ..formats.source import MAX_RECORD_SIZE
from ..loading.policy import check_policy, no_conversation_note
from ..sidecars import join_members
from .plan import (
    DEFAULT_SPLIT_SIZE,
    Part,
    count_parts,
    line_range,
    plan_files,
    plan_links,
    range_bytes,
    with_offsets,
)
from .records import (
    BAD_FIELDS,
    COUNTS_SCHEMA,
    NO_CONVERSATION,
    RANGE_SCHEMA,
    RECORDS_SCHEMA,
    STORY_SCHEMA,
    counts_table,
    lines_tables,
    range_tables,
    whole_file_tables,
)

__all__ = ["SCHEMAS", "PchronicleSource"]

NAME = "pchronicle"
logger = logging.getLogger("pchronicle_datasets")
_BAD_SCHEMA = pa.schema(list(BAD_FIELDS))
SCHEMAS: dict[str, pa.Schema] = {
    "documents": STORY_SCHEMA,
    "bad_records": _BAD_SCHEMA,
    "records": RECORDS_SCHEMA,
    "rows": RANGE_SCHEMA,
    "line_counts": COUNTS_SCHEMA,
}
"""The Arrow schema of each ``output``; the Spark schemas are derived from them (``from_arrow_schema``)."""

# The kinds of parts each output reads: the documents are in whole files and in the split parts read in
# place; pchronicle_datasets.spark.read counts every split part, and reads the rows of ranges to shuffle them.
_KINDS = {"rows": ("range",), "line_counts": ("range", "lines")}
_READ_IN_PLACE = ("whole", "lines")
_QUARANTINE_NAME = re.compile(r"part-\d{5}(-\d{5})?\.jsonl")


class _Partition(InputPartition):
    def __init__(self, part: dict | None) -> None:
        super().__init__(part)


def options_of(options: Any) -> dict[str, Any]:
    """The source's options, checked: ``ValueError`` naming a wrong one before any task runs.

    >>> options_of({"splitSize": "1000"})["split_size"], options_of({})["split_size"] == DEFAULT_SPLIT_SIZE
    (1000, True)
    """
    opts = {k.lower(): v for k, v in dict(options).items()}
    fmt = opts.get("format", "auto")
    if fmt != "auto" and fmt not in format_names():
        raise ValueError(f"unknown pchronicle format {fmt!r}; known: auto, {', '.join(format_names())}")
    policy = check_policy(opts.get("on_bad_records", "error"))
    output = opts.get("output", "documents")
    if output not in SCHEMAS:
        raise ValueError(f"output must be one of {', '.join(SCHEMAS)}, got {output!r}")
    if policy == "skip" and output == "documents" and not opts.get("quarantine"):
        raise ValueError(
            "on_bad_records='skip' needs a quarantine folder (option 'quarantine'), else the bad records are "
            "lost; or read them with option('output', 'bad_records'), or use pchronicle_datasets.spark.read"
        )
    sizes = {
        name: _positive(opts, name, default)
        for name, default in (
            ("split_size", DEFAULT_SPLIT_SIZE),
            ("max_decompressed_size", MAX_DECOMPRESSED_SIZE),
            ("max_record_size", MAX_RECORD_SIZE),
        )
    }
    return {**opts, "format": fmt, "on_bad_records": policy, "output": output, **sizes}


def _positive(opts: dict[str, Any], name: str, default: int) -> int:
    """A size option given as ``name`` or in camel case (``splitSize``; Spark lowercases option names)."""
    camel = name.split("_")[0] + "".join(w.title() for w in name.split("_")[1:])
    text = str(opts.get(name.replace("_", ""), opts.get(name, default))).strip()
    if not (text.isascii() and text.isdigit()) or int(text) < 1:
        raise ValueError(f"{camel} must be a positive whole number of bytes, got {text!r}")
    return int(text)


class PchronicleSource(DataSource):
    """``spark.read.format("pchronicle")``: trajectory files of any registered format as Storyline rows."""

    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> StructType:
        return from_arrow_schema(SCHEMAS[options_of(self.options)["output"]])

    def reader(self, schema: StructType) -> DataSourceReader:
        return _Reader(options_of(self.options))


class _Reader(DataSourceReader):
    def __init__(self, options: dict[str, Any]) -> None:
        self.options = options
        # Planned when made, not in partitions(): Spark pickles the reader to the tasks before it asks for its
        # partitions, and the tasks need the subagent links of the whole read (plan.plan_links), which no one
        # part holds (pchronicle_datasets.spark.read gives them with its plan, option "links").
        self.parts = self._parts()
        self.links: dict[str, list[str]] = {}
        if options["output"] in ("documents", "records"):
            given = options.get("links")
            self.links = orjson.loads(given) if given else plan_links(self.parts, options["format"])

    def __getstate__(self) -> dict[str, Any]:
        # What travels to every task: the options and the links; each task gets its own part as its partition.
        return {**self.__dict__, "parts": []}

    def _parts(self) -> list[Part]:
        if "plan" in self.options:
            return [Part(**p) for p in orjson.loads(self.options["plan"])]
        if "paths" in self.options:
            paths = orjson.loads(self.options["paths"])
        elif "path" in self.options:
            paths = [self.options["path"]]
        else:
            raise ValueError("name the files: load(path), or option('paths', <JSON list>)")
        parts = plan_files(
            paths, self.options["format"], split_size=self.options["split_size"], base=self.options.get("base"),
            regroup=False,
        )  # fmt: skip
        # The counting pass, here: a Data Source runs one job, so the parts learn their first line from a read
        # of each split file's bytes at planning (pchronicle_datasets.spark.read counts in a job of its own).
        return with_offsets(parts, count_parts(parts, self.options["max_record_size"]))

    def partitions(self) -> list[InputPartition]:
        kinds = _KINDS.get(self.options["output"], _READ_IN_PLACE)
        parts = [p for p in self.parts if p.kind in kinds]
        if self.options["output"] == "documents" and self.options.get("quarantine"):
            _remove_stale_quarantine(self.options["quarantine"], {_quarantine_name(p) for p in parts})
        return [_Partition(p.to_json()) for p in parts] or [_Partition(None)]  # Spark wants one; it reads nothing

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        part = Part(**partition.value)
        output, policy = self.options["output"], self.options["on_bad_records"]
        limit = self.options["max_record_size"]
        if part.kind == "range":
            data = range_bytes(part, limit)
            tables = [counts_table(part, data)] if output == "line_counts" else range_tables(part, policy, data, limit)
        elif part.kind == "lines" and output == "line_counts":
            tables = [counts_table(part, range_bytes(part, limit))]
        elif part.kind == "lines":
            offset, data = line_range(part, limit)
            tables = self._documents(part, lines_tables(part, policy, offset, data, limit))
        else:
            # The file as a stream, as the local loader reads it, with the same limits: a bomb or an over-long
            # record is refused before memory holds it (reading the file whole first would not be).
            sidecar = _read_whole(part.sidecar) if part.sidecar else None
            # the files of one document (sidecars.groups): one JSON Lines text
            members = part.members and io.BytesIO(join_members([_read_whole(url) for url in part.members]))
            with members or fsspec.open(part.path, "rb") as f:
                max_size = self.options["max_decompressed_size"]
                records = whole_file_tables(
                    part, self.options["format"], policy, f, max_size, limit, sidecar, self.links
                )
                for table in self._documents(part, records):
                    yield from table.to_batches()
            return
        for table in tables:
            yield from table.to_batches()

    def _documents(self, part: Part, records: Iterator[pa.Table]) -> Iterator[pa.Table]:
        """The ``output`` of one partition's records; its bad records quarantined when that is asked."""
        output = self.options["output"]
        quarantine = self.options.get("quarantine")
        bad: list[dict] = []
        empty: list[tuple[str, str]] = []
        for table in records:
            if output == "records":
                yield table
                continue
            is_bad = table.column("_bad").is_valid()
            # A file that holds no conversation is no bad record (loading.policy): left out and said, as every
            # read says it (the executor's log; SparkRead.no_conversation on the driver).
            no_conversation = pc.equal(table.column("_bad").combine_chunks().field("error_type"), NO_CONVERSATION)
            is_empty = pc.fill_null(no_conversation, False)
            empty += [(b["file"], "") for b in table.column("_bad").filter(is_empty).to_pylist()]
            really_bad = pc.and_(is_bad, pc.invert(is_empty))
            if output == "bad_records":
                yield pa.Table.from_struct_array(table.column("_bad").filter(really_bad).combine_chunks())
                continue
            bad.extend(table.column("_bad").filter(really_bad).to_pylist())
            yield table.filter(pc.invert(is_bad)).select(STORY_SCHEMA.names)
        if note := no_conversation_note(empty):
            logger.warning(f"pchronicle: {note}")
        if output == "documents" and quarantine:
            _write_quarantine(quarantine, _quarantine_name(part), bad)


def _read_whole(url: str) -> bytes:
    with fsspec.open(url, "rb") as f:
        return f.read()


def _quarantine_name(part: Part) -> str:
    return f"part-{part.order:05d}.jsonl" if part.kind == "whole" else f"part-{part.order:05d}-{part.index:05d}.jsonl"


def _remove_stale_quarantine(folder: str, names: set[str]) -> None:
    """Remove the quarantine files of an earlier read that this one will not rewrite (a file split another
    way, fewer inputs), so that the folder holds this read's bad records only."""
    fs, root = fsspec.core.url_to_fs(folder)
    if not fs.isdir(root):
        return
    for path in fs.ls(root, detail=False):
        name = path.rstrip("/").rsplit("/", 1)[-1]
        if _QUARANTINE_NAME.fullmatch(name) and name not in names:
            fs.rm(path)


def _write_quarantine(folder: str, name: str, entries: list[dict]) -> None:
    """One file per partition, written whole: a retried task rewrites it instead of appending twice."""
    fs, root = fsspec.core.url_to_fs(folder)
    path = f"{root.rstrip('/')}/{name}"
    if not entries:
        if fs.exists(path):
            fs.rm(path)  # from an earlier run over the same folder
        return
    fs.makedirs(root, exist_ok=True)
    with fs.open(path, "wb") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in entries))
