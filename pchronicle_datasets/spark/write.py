"""Writing from Spark: Parquet for ``datasets``, the project's own formats in files, and the Hub.

- ``write_parquet(df, path)``: ``df.write.parquet``; ``load_dataset("parquet", data_files=f"{path}/*.parquet",
  features=pc.STORYLINE_FEATURES)`` (or ``SHAREGPT_FEATURES`` / ``MESSAGES_FEATURES``) reads it back.
- ``write_format(df, path, fmt)``: Storyline rows encoded by a format's writer (``from_storyline``), one file
  per partition, ``part-NNNNN<extension>``; a retried task rewrites its file.
- ``push_to_hub(df, repo_id, …)``: Parquet in a staging folder, loaded with ``datasets``, then
  ``pchronicle_datasets.push_to_hub`` (Parquet shards and the dataset card).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from functools import partial
from typing import Any

import fsspec
import pyarrow as pa
from pyspark import TaskContext
from pyspark.sql import DataFrame

from ..features import STORYLINE_FEATURES, row_to_story
from ..formats import from_storyline, get_format
from ..training.output_features import MESSAGES_FEATURES, SHAREGPT_FEATURES

__all__ = ["features_of", "push_to_hub", "write_format", "write_parquet"]

_WRITTEN = "file string, documents long"


def write_parquet(df: DataFrame, path: str, mode: str = "error") -> None:
    """Write ``df`` as Parquet in the folder ``path`` (``mode``: Spark's save mode)."""
    df.write.mode(mode).parquet(path)


def _encode_partition(batches: Iterator[pa.RecordBatch], folder: str, fmt: str) -> Iterator[pa.RecordBatch]:
    stories = [row_to_story(row) for batch in batches for row in batch.to_pylist()]
    if not stories:
        return
    module = get_format(fmt)
    extension = getattr(module, "EXTENSION", ".jsonl")
    path = f"{folder.rstrip('/')}/part-{TaskContext.get().partitionId():05d}{extension}"
    with fsspec.open(path, "w", encoding="utf-8") as f:
        f.write(from_storyline(fmt, stories))
    yield pa.RecordBatch.from_pylist([{"file": path, "documents": len(stories)}])


def write_format(df: DataFrame, path: str, fmt: str) -> list[tuple[str, int]]:
    """Encode the Storyline rows of ``df`` with format ``fmt``'s writer, one file per partition in the
    folder ``path``; returns ``(file, documents)`` for each file written."""
    get_format(fmt)  # an unknown format fails before the job starts
    fs, root = fsspec.core.url_to_fs(path)
    fs.makedirs(root, exist_ok=True)
    written = df.mapInArrow(partial(_encode_partition, folder=path, fmt=fmt), _WRITTEN).collect()
    return sorted((r["file"], r["documents"]) for r in written)


def features_of(df: DataFrame) -> Any:
    """The project's ``datasets.Features`` whose columns ``df`` has (Storyline rows, ShareGPT or messages
    examples), else None."""
    for features in (STORYLINE_FEATURES, SHAREGPT_FEATURES, MESSAGES_FEATURES):
        if df.columns == list(features):
            return features
    return None


def push_to_hub(
    df: DataFrame,
    repo_id: str,
    *,
    conversion: str,
    staging: str | None = None,
    split: str = "train",
    **options: Any,
) -> Any:
    """Push ``df`` to the Hub as ``pchronicle_datasets.push_to_hub`` does (Parquet shards and a card).

    ``staging``: a folder both the executors and this process can reach, for the Parquet files (on a
    cluster: object storage, ``s3://…``); default a local temporary folder, which only a local master can
    use. ``options`` go to ``pchronicle_datasets.push_to_hub`` (``token``, ``private``…).
    """
    from datasets import load_dataset

    from ..hub import push_to_hub as push

    with tempfile.TemporaryDirectory() as tmp:
        folder = staging or f"{tmp}/parquet"
        write_parquet(df, folder, mode="overwrite")
        ds = load_dataset(
            "parquet",
            data_files=f"{folder.rstrip('/')}/*.parquet",
            features=features_of(df),
            split="train",
            cache_dir=f"{tmp}/cache",
        )
        return push(ds, repo_id, conversion=conversion, split=split, **options)
