"""``to_sharegpt`` and ``to_messages`` on DataFrames of Storyline rows, as Arrow-batch functions.

``sharegpt_batches`` and ``messages_batches`` take and give Arrow record batches (the ``mapInArrow``
contract) and hand each batch to the local map functions of ``training/``, which read a batch's Arrow columns
themselves (the same core as ``ds.map(..., batched=True)``), so the values are theirs; the
output schemas are fixed (``output_features``): ``to_messages``' arguments and tools are JSON text (its
default, ``arguments="string"``, is that form).

>>> import pyarrow as pa
>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
>>> batch = pc.rows_to_table([pc.story_to_row(story)]).to_batches()[0]
>>> [out] = sharegpt_batches(iter([batch]))
>>> out.column("conversations").to_pylist()[0][2]
{'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}
>>> [out] = messages_batches(iter([batch]))
>>> out.column("messages").to_pylist()[0][1]["content"], out.schema.field("tools").type
('hello', DataType(string))
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql.pandas.types import from_arrow_schema

from ..training import MESSAGES_FEATURES, SHAREGPT_FEATURES
from ..training import to_messages as _local_messages
from ..training import to_sharegpt as _local_sharegpt

__all__ = [
    "MESSAGES_SCHEMA",
    "SHAREGPT_SCHEMA",
    "messages_batches",
    "sharegpt_batches",
    "to_messages",
    "to_sharegpt",
]

SHAREGPT_ARROW: pa.Schema = SHAREGPT_FEATURES.arrow_schema
MESSAGES_ARROW: pa.Schema = MESSAGES_FEATURES.arrow_schema
SHAREGPT_SCHEMA = from_arrow_schema(SHAREGPT_ARROW)
"""The Spark schema of ``to_sharegpt``'s output (from ``SHAREGPT_FEATURES``)."""
MESSAGES_SCHEMA = from_arrow_schema(MESSAGES_ARROW)
"""The Spark schema of ``to_messages``' output (from ``MESSAGES_FEATURES``)."""


def sharegpt_batches(batches: Iterator[pa.RecordBatch], **options: Any) -> Iterator[pa.RecordBatch]:
    """``to_sharegpt`` (same options) over record batches of Storyline rows: the local map function's batch core,
    which reads each batch's Arrow columns (``training/maps.py``), so the values are the local ones."""
    for batch in batches:
        yield _as_schema(_local_sharegpt(batch, **options), SHAREGPT_ARROW)


def messages_batches(batches: Iterator[pa.RecordBatch], **options: Any) -> Iterator[pa.RecordBatch]:
    """``to_messages`` (same options, ``arguments="string"``: the ``MESSAGES_FEATURES`` form) over record batches
    of Storyline rows, JSON values as JSON text."""
    options = {**options, "arguments": "string"}
    for batch in batches:
        yield _as_schema(_local_messages(batch, **options), MESSAGES_ARROW)


def _as_schema(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    """``batch`` in the DataFrame's declared schema (an option's extra field, ``train``, is not in it)."""
    if batch.schema.equals(schema):
        return batch
    return pa.RecordBatch.from_pylist(batch.to_pylist(), schema=schema)


def to_sharegpt(df: DataFrame, **options: Any) -> DataFrame:
    """A DataFrame of ``conversations`` from one of Storyline rows (options as ``pc.to_sharegpt``'s)."""
    return df.mapInArrow(partial(sharegpt_batches, **options), SHAREGPT_SCHEMA)


def to_messages(df: DataFrame, **options: Any) -> DataFrame:
    """A DataFrame of ``messages`` and ``tools`` from one of Storyline rows (options as ``pc.to_messages``')."""
    return df.mapInArrow(partial(messages_batches, **options), MESSAGES_SCHEMA)
