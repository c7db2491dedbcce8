"""The document id of each input file: the name errors, quarantine entries and ``/origin`` give it.

Every engine names a file the same way, so rows read by ``load_dataset``, the CLI or Spark carry the same ids:
relative to ``base`` (``data_dir``) when given, else to the common parent folder of all inputs; POSIX
separators; protocols (``s3://``, ``hf://``) and fsspec chains (``zip://x::file.zip``) left out, so an id
is the same with and without streaming (datasets resolves inputs to absolute paths or URLs first).

>>> document_ids(["file:///data/a/x.jsonl", "file:///data/b/y.jsonl"])
['a/x.jsonl', 'b/y.jsonl']
>>> document_ids(["/data/a/x.jsonl", "/data/a/y.jsonl"], "/data")
['a/x.jsonl', 'a/y.jsonl']
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from pathlib import Path

__all__ = ["document_ids", "resolved_dir", "strip_protocol"]


def strip_protocol(path: str) -> str:
    """The path of ``path`` without its protocol or fsspec chain, with POSIX separators."""
    path = path.split("::")[0]
    if "://" in path:
        path = path.split("://", 1)[1]
    return path.replace(os.sep, "/") if os.sep != "/" else path


def resolved_dir(data_dir: str) -> str:
    """A ``data_dir`` as ``datasets`` resolves a local one before it lists its files (home expanded, made absolute,
    links followed; a URL or fsspec chain as it is): the base its files' ids are relative to. Given as typed
    (``data_dir="tests/data"``), it matched none of the resolved files, and every id was a machine path.

    >>> resolved_dir("s3://bucket/logs"), resolved_dir("/") == Path("/").resolve().as_posix()
    ('s3://bucket/logs', True)
    """
    if "://" in data_dir or "::" in data_dir:
        return data_dir
    return Path(data_dir).expanduser().resolve().as_posix()


def _common_parent(paths: Sequence[str]) -> str:
    if not paths:
        return ""
    parents = [posixpath.dirname(p) for p in paths]
    try:
        return posixpath.commonpath(parents) if len({p.startswith("/") for p in parents}) == 1 else ""
    except ValueError:
        return ""


def _relative(path: str, base: str) -> str:
    if base and (path == base or path.startswith(base.rstrip("/") + "/")):
        return posixpath.relpath(path, base)
    return path


def document_ids(paths: Sequence[str], base: str | None = None) -> list[str]:
    """The id of each of ``paths`` (files or URLs), in order: relative to ``base`` when given, else to the
    common parent of all of them."""
    stripped = [strip_protocol(str(p)) for p in paths]
    root = strip_protocol(base) if base else _common_parent(stripped)
    return [_relative(p, root) for p in stripped]
