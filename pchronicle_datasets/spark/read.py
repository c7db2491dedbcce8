"""``read``: the whole reading pipeline, with big files split across tasks, openai-msg captures included.

1. Plan on the driver (``plan.plan_files``, as the Data Source plans): whole files, line-boundary parts of big
   JSON Lines files whose records are one per line (``lines``), and ranges of big openai-msg files.
2. Count the lines of every split part (a Spark job that reads the parts without parsing them), so each part
   knows the number of its first line and of its first row, which the documents and errors carry.
3. Read the ranges' rows, shuffle them by (file, ``session_id``) and build each session's document from its
   rows in file order: the local reader's document, whatever range its rows were in.
4. Read the whole files with the local reader and the ``lines`` parts in place, one task each, in file order;
   with ranges, put everything in the file order.

The result holds the documents and the bad records side by side (``SparkRead``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import orjson
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema

from ..compression import MAX_DECOMPRESSED_SIZE
from ..formats.source import MAX_RECORD_SIZE
from .plan import DEFAULT_SPLIT_SIZE, Part, plan_files, plan_links, with_offsets
from .records import NO_CONVERSATION, RECORDS_SCHEMA, STORY_SCHEMA, session_table
from .source import NAME, PchronicleSource, options_of

__all__ = ["SparkRead", "read", "register"]


def register(spark: SparkSession) -> None:
    """Make ``spark.read.format("pchronicle")`` available in this session (idempotent)."""
    spark.dataSource.register(PchronicleSource)


@dataclass(frozen=True)
class SparkRead:
    """What a read gave: ``records`` (documents and bad records, in file order) and its two views."""

    records: DataFrame

    @property
    def rows(self) -> DataFrame:
        """One row of ``STORYLINE_FEATURES`` per document."""
        return self.records.filter(F.col("_bad").isNull()).select(*STORY_SCHEMA.names)

    @property
    def bad_records(self) -> DataFrame:
        """One row per bad record: ``file``, ``line``, ``pointer``, ``error``, ``error_type``, ``record``
        (the fields of the local loader's quarantine entries). Empty under ``on_bad_records="error"``."""
        return self.records.filter(F.col("_bad").isNotNull() & ~_no_conversation()).select("_bad.*")

    @property
    def no_conversation(self) -> DataFrame:
        """The files left out as holding no conversation (``errors.NoConversationError``, under either policy):
        ``file`` and ``error``, what ``loading.policy.no_conversation_note`` says of them."""
        return self.records.filter(F.col("_bad").isNotNull() & _no_conversation()).select("_bad.file", "_bad.error")

    def cache(self) -> SparkRead:
        """The same read, computed once for both views (``rows`` and ``bad_records`` each scan otherwise)."""
        return SparkRead(self.records.cache())

    def write_quarantine(self, path: str, mode: str = "error") -> int:
        """Write the bad records as JSON Lines files in the folder ``path``; returns how many there were.

        ``mode``: Spark's save mode. The default ("error", as ``write_parquet``) refuses a folder that exists, so a
        mistyped path never replaces a folder of data; ``mode="overwrite"`` replaces an earlier quarantine."""
        bad = self.bad_records
        bad.write.mode(mode).json(path)
        return bad.count()


def _no_conversation():
    return F.col("_bad.error_type") == NO_CONVERSATION


def _load(
    spark: SparkSession, parts: Sequence[Part], output: str, options: dict[str, str], links: str = ""
) -> DataFrame:
    plan = orjson.dumps([p.to_json() for p in parts]).decode()
    reader = spark.read.format(NAME).options(**options).option("output", output).option("plan", plan)
    return (reader.option("links", links) if links else reader).load()


def read(
    spark: SparkSession,
    paths: str | Sequence[str],
    format: str = "auto",
    *,
    on_bad_records: str = "error",
    split_size: int = DEFAULT_SPLIT_SIZE,
    base: str | None = None,
    ordered: bool = True,
    max_decompressed_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
) -> SparkRead:
    """Read trajectory files into Storyline rows on Spark, with the local loader's documents.

    ``paths``: files, folders or glob patterns (fsspec URLs: local, ``s3://``, ``gs://``, ``hf://``…); a folder
    is listed as ``data_dir`` is (``plan.input_files``: the readers' extensions, sidecars given to their files'
    readers, the files that hold no session left out and named).
    ``format``: a format name or ``auto``. ``on_bad_records``: ``error`` (the job fails naming the file,
    line and pointer) or ``skip`` (the bad records are in ``.bad_records``). ``split_size``: an uncompressed
    JSON Lines file bigger than this many bytes is read by several tasks (openai-msg, storyline, chat, atif, sharegpt;
    see ``plan``). ``base``: the folder the document ids are relative to (default: the one folder given, as
    ``data_dir`` is, else the common parent of the files, as the local loader does).
    ``ordered``: put the documents of split files back in file order (a sort; without it each file's
    documents are all there, in no set order). ``max_decompressed_size`` and ``max_record_size``: the local
    loader's limits (``load_dataset(..., max_decompressed_size=…, max_record_size=…)``), with its errors: a
    decompression bomb, or a record larger than the limit, is a bad record naming the file (and line), and
    fails the job under ``on_bad_records="error"``.
    """
    register(spark)
    if isinstance(paths, str):
        paths = [paths]
    checked = options_of(
        {
            "format": format,
            "on_bad_records": on_bad_records,
            "output": "records",
            "max_decompressed_size": max_decompressed_size,
            "max_record_size": max_record_size,
        }
    )
    options = {k: str(checked[k]) for k in ("format", "on_bad_records", "max_decompressed_size", "max_record_size")}
    parts = plan_files(list(paths), format, split_size=split_size, base=base)
    split = [p for p in parts if p.kind != "whole"]
    if split:
        counts = _load(spark, split, "line_counts", options).collect()
        parts = with_offsets(parts, {(c["order"], c["index"]): (c["lines"], c["nonblank"]) for c in counts})
    # The subagent links of all the files (the local loader's, session_links.py), for the parents' /children.
    links = orjson.dumps(plan_links(parts, format)).decode()
    records = _load(spark, [p for p in parts if p.kind != "range"], "records", options, links)  # in file order
    ranges = [p for p in parts if p.kind == "range"]
    if ranges:
        rows = _load(spark, ranges, "rows", options)
        formats_of = {p.order: p.format for p in ranges}  # each split file's format, for its regrouping
        policy = options["on_bad_records"]

        # A plain function without annotations: applyInArrow then takes the (key, table) form (it reads type
        # hints, and cannot read them from a functools.partial).
        def sessions_of(key, table):
            group = table.to_pydict()
            return session_table(group, policy, formats_of[group["order"][0]])

        sessions = rows.groupBy("order", "document_id", "session_id").applyInArrow(
            sessions_of, from_arrow_schema(RECORDS_SCHEMA)
        )
        records = records.unionByName(sessions)
        if ordered:
            records = records.orderBy("_order", "_pos")
    return SparkRead(records)
