"""The ``pchronicle`` Spark data source (Spark 4's Python Data Source API).

After ``pchronicle_datasets.spark.register(spark)``::

    df = spark.read.format("pchronicle").option("format", "openai-msg").load("s3://bucket/captures/")

gives one row of ``STORYLINE_FEATURES`` per document, each file read in one task by the local reader (so the
rows are the local loader's). Options:

- ``format``: a format name or ``auto`` (default: detected per file from its content);
- ``on_bad_records``: ``error`` (default; the job fails naming file, line and pointer) or ``skip``;
- ``quarantine``: with ``skip``, a folder where each file's bad records are written as JSON Lines
  (``part-NNNNN.jsonl``, NNNNN the file's place among the inputs, rewritten by a retried task); ``skip``
  without it is refused, since the bad records would be lost;
- ``output``: ``documents`` (default), ``bad_records`` (the bad records as rows instead: ``file``, ``line``,
  ``pointer``, ``error``, ``error_type``, ``record``) or ``records`` (both, with the file order);
- ``base``: the folder document ids are relative to (default: the common parent of the files).

A Data Source cannot shuffle, so splitting a big openai-msg file and regrouping its sessions is done by
``pchronicle_datasets.spark.read`` (which uses this source for each step, with the internal options
``plan`` and ``output=rows|line_counts``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import fsspec
import orjson
import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition
from pyspark.sql.pandas.types import from_arrow_schema
from pyspark.sql.types import StructType

from ..formats import format_names
from .plan import Part, plan_files, range_bytes
from .records import (
    BAD_FIELDS,
    COUNTS_SCHEMA,
    RANGE_SCHEMA,
    RECORDS_SCHEMA,
    STORY_SCHEMA,
    counts_table,
    range_tables,
    whole_file_tables,
)

__all__ = ["SCHEMAS", "PchronicleSource"]

NAME = "pchronicle"
_BAD_SCHEMA = pa.schema(list(BAD_FIELDS))
SCHEMAS: dict[str, pa.Schema] = {
    "documents": STORY_SCHEMA,
    "bad_records": _BAD_SCHEMA,
    "records": RECORDS_SCHEMA,
    "rows": RANGE_SCHEMA,
    "line_counts": COUNTS_SCHEMA,
}
"""The Arrow schema of each ``output``; the Spark schemas are derived from them (``from_arrow_schema``)."""


class _Partition(InputPartition):
    def __init__(self, part: dict | None) -> None:
        super().__init__(part)


def options_of(options: Any) -> dict[str, Any]:
    """The source's options, checked: ``ValueError`` naming a wrong one before any task runs."""
    opts = {k.lower(): v for k, v in dict(options).items()}
    fmt = opts.get("format", "auto")
    if fmt != "auto" and fmt not in format_names():
        raise ValueError(f"unknown pchronicle format {fmt!r}; known: auto, {', '.join(format_names())}")
    policy = opts.get("on_bad_records", "error")
    if policy not in ("error", "skip"):
        raise ValueError(f"on_bad_records must be 'error' or 'skip', got {policy!r}")
    output = opts.get("output", "documents")
    if output not in SCHEMAS:
        raise ValueError(f"output must be one of {', '.join(SCHEMAS)}, got {output!r}")
    if policy == "skip" and output == "documents" and not opts.get("quarantine"):
        raise ValueError(
            "on_bad_records='skip' needs a quarantine folder (option 'quarantine'), else the bad records are "
            "lost; or read them with option('output', 'bad_records'), or use pchronicle_datasets.spark.read"
        )
    return {**opts, "format": fmt, "on_bad_records": policy, "output": output}


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

    def _parts(self) -> list[Part]:
        if "plan" in self.options:
            return [Part(**p) for p in orjson.loads(self.options["plan"])]
        if "paths" in self.options:
            paths = orjson.loads(self.options["paths"])
        elif "path" in self.options:
            paths = [self.options["path"]]
        else:
            raise ValueError("name the files: load(path), or option('paths', <JSON list>)")
        # Without the splitting pipeline every file is one task (a split size no file reaches).
        return plan_files(paths, self.options["format"], split_size=1 << 62, base=self.options.get("base"))

    def partitions(self) -> list[InputPartition]:
        kind = "range" if self.options["output"] in ("rows", "line_counts") else "whole"
        parts = [_Partition(p.to_json()) for p in self._parts() if p.kind == kind]
        return parts or [_Partition(None)]  # Spark wants a partition; this one reads nothing

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if partition.value is None:
            return
        part = Part(**partition.value)
        output, policy = self.options["output"], self.options["on_bad_records"]
        if part.kind == "range":
            data = range_bytes(part)
            tables = [counts_table(part, data)] if output == "line_counts" else range_tables(part, policy, data)
        else:
            with fsspec.open(part.path, "rb") as f:
                data = f.read()
            tables = self._whole(part, data)
        for table in tables:
            yield from table.to_batches()

    def _whole(self, part: Part, data: bytes) -> Iterator[pa.Table]:
        output, policy = self.options["output"], self.options["on_bad_records"]
        quarantine = self.options.get("quarantine")
        bad: list[dict] = []
        for table in whole_file_tables(part, self.options["format"], policy, data):
            if output == "records":
                yield table
                continue
            is_bad = table.column("_bad").is_valid()
            if output == "bad_records":
                yield pa.Table.from_struct_array(table.column("_bad").filter(is_bad).combine_chunks())
                continue
            bad.extend(table.column("_bad").filter(is_bad).to_pylist())
            yield table.filter(pc.invert(is_bad)).select(STORY_SCHEMA.names)
        if output == "documents" and quarantine:
            _write_quarantine(quarantine, part.order, bad)


def _write_quarantine(folder: str, order: int, entries: list[dict]) -> None:
    """One file per input file, written whole: a retried task rewrites it instead of appending twice."""
    fs, root = fsspec.core.url_to_fs(folder)
    path = f"{root.rstrip('/')}/part-{order:05d}.jsonl"
    if not entries:
        if fs.exists(path):
            fs.rm(path)  # from an earlier run over the same folder
        return
    fs.makedirs(root, exist_ok=True)
    with fs.open(path, "wb") as f:
        f.write(b"".join(orjson.dumps(e) + b"\n" for e in entries))
