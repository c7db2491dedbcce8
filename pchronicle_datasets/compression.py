"""Decompression the readers own: gzip member by member, zstd and bzip2 streams.

A truncated gzip file keeps the records of its complete members (each member is decompressed on its own),
so with the skip policy only what was cut is lost, and that is reported.
"""

from __future__ import annotations

import bz2
import zlib
from collections.abc import Iterator

from .errors import FormatError

__all__ = ["compression_of", "decompress", "gzip_members"]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BZIP2_MAGIC = b"BZh"


def compression_of(head: bytes) -> str | None:
    """``"gzip"``, ``"zstd"``, ``"bzip2"`` or None, from the first bytes (content, not the file name)."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    if head.startswith(BZIP2_MAGIC) and len(head) > 3 and head[3:4].isdigit():
        return "bzip2"
    return None


def gzip_members(data: bytes, document_id: str | None = None) -> Iterator[bytes | FormatError]:
    """The decompressed members of a (possibly multi-member) gzip stream, in order; a truncated or corrupt
    member is yielded as a ``FormatError`` after the complete ones, and ends the stream."""
    while data:
        d = zlib.decompressobj(wbits=31)
        try:
            out = d.decompress(data)
        except zlib.error as exc:
            yield FormatError(f"not valid gzip data: {exc}", document_id=document_id)
            return
        if not d.eof:
            yield FormatError("the gzip stream is truncated: its last member ends early", document_id=document_id)
            return
        yield out
        data = d.unused_data.lstrip(b"\0")


def decompress_whole(data: bytes, kind: str, document_id: str | None = None) -> bytes:
    """A whole zstd or bzip2 stream; a truncated or corrupt one is a ``FormatError``."""
    try:
        if kind == "zstd":
            try:
                import zstandard
            except ImportError:  # pragma: no cover - zstandard is a dependency
                raise FormatError("zstd input needs the zstandard package", document_id=document_id) from None
            reader = zstandard.ZstdDecompressor().stream_reader(data, read_across_frames=True)
            out = reader.read()
            if not out and data:
                raise FormatError("the zstd stream is empty or truncated", document_id=document_id)
            return out
        return bz2.decompress(data)
    except FormatError:
        raise
    except Exception as exc:  # zstandard.ZstdError, OSError, EOFError from bz2
        raise FormatError(f"the {kind} stream cannot be read: {exc}", document_id=document_id) from None


def decompress(data: bytes, document_id: str | None = None) -> tuple[bytes, FormatError | None]:
    """``(text bytes, error)``: the data itself when it is not compressed; else what could be decompressed
    (every complete gzip member) and the error that stopped it, if any."""
    kind = compression_of(data[:4])
    if kind is None:
        return data, None
    if kind != "gzip":
        try:
            return decompress_whole(data, kind, document_id), None
        except FormatError as exc:
            return b"", exc
    parts: list[bytes] = []
    for member in gzip_members(data, document_id):
        if isinstance(member, FormatError):
            return b"".join(parts), member
        parts.append(member)
    return b"".join(parts), None
