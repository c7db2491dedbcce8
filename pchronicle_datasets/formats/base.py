"""What every format module shares: the per-record result type and the input normalisation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from ..errors import FormatError, PchronicleError

__all__ = ["Record", "as_bytes", "parses"]

_BOM = b"\xef\xbb\xbf"


@dataclass(frozen=True)
class Record:
    """One source record: the document it gave, or the error that refused it (never both)."""

    line: int | None  # 1-based line for JSON Lines input; None for a single-document file
    raw: bytes  # the record's source bytes, for a quarantine file
    story: dict[str, Any] | None = None
    error: PchronicleError | None = None
    value: Any = None  # the parsed JSON value, also when it was refused (for reporting every error)


def as_bytes(data: str | bytes | bytearray | memoryview, document_id: str | None = None) -> bytes:
    """The input as bytes, without a leading UTF-8 byte-order mark (``str`` is encoded as UTF-8)."""
    if isinstance(data, str):
        try:
            data = data.encode("utf-8")
        except UnicodeEncodeError:
            raise FormatError(
                "text holds a lone surrogate, which is not valid UTF-8", document_id=document_id
            ) from None
    data = bytes(data)
    return data[len(_BOM) :] if data.startswith(_BOM) else data


def parses(raw: bytes) -> bool:
    """Whether ``raw`` is one JSON text (orjson alone: a value it would misread still counts as JSON here,
    so that the strict parse of that line reports it with its pointer)."""
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True
