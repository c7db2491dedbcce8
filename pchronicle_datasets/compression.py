"""Decompression the readers own: gzip, zstd, bzip2 and xz, each as an incremental reader with a size limit.

Compression is recognised by content (magic bytes), never by file name. Every codec is read the same way:

- concatenated members / frames / streams are read one after the other (and the zero padding gzip and xz
  writers may leave between them is skipped);
- data that ends early (a crashed or still-running writer, a cut download) is never silent:
  ``decompress_file`` keeps the decompressed text up to its last complete line and reports the cut as one
  error naming the file, the byte offset where the compressed data ends and the first line lost;
- corrupt data is the same error, naming the bytes where the decoder refused it;
- more than ``max_size`` decompressed bytes (``MAX_DECOMPRESSED_SIZE``, 64 GiB, by default) stops the read with
  a ``FormatError`` naming the limit: a decompression bomb cannot fill the memory or the disk.

>>> import gzip
>>> data = gzip.compress(b"".join(b'{"n": %d}\\n' % i for i in range(1000)))
>>> out = decompress_file(data[:-8], "cut.jsonl.gz")  # its 8-byte trailer never reached the disk
>>> out.text.count(b"\\n"), out.cut
(1000, b'')
>>> print(out.error)  # doctest: +ELLIPSIS
(root): the gzip data ends early at byte ... of the file (its end): the file is cut short \
(10,890 byte(s) decompressed); lines 1–1000 are complete in cut.jsonl.gz line 1001
"""

from __future__ import annotations

import bz2
import lzma
import zlib
from collections.abc import Iterable, Iterator
from typing import Any, NamedTuple

from .errors import FormatError

__all__ = [
    "MAX_DECOMPRESSED_SIZE",
    "Decompressed",
    "DecompressionLimitError",
    "compression_of",
    "decompress",
    "decompress_file",
    "iter_decompressed",
]

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
BZIP2_MAGIC = b"BZh"
XZ_MAGIC = b"\xfd7zXZ\x00"
MAGIC_SIZE = len(XZ_MAGIC)  # the longest magic: bytes needed to tell the codecs apart

MAX_DECOMPRESSED_SIZE = 64 * 2**30  # 64 GiB: far beyond a real capture, far below a bomb's 10¹⁵
IN_CHUNK = 64 * 1024  # compressed bytes given to a decoder at a time
OUT_CHUNK = 1024 * 1024  # the most a bounded decoder returns per call
ZSTD_IN_CHUNK = 2 * 1024  # zstd cannot bound its output per call: small inputs bound it (≤ 64 × 128 KiB blocks)


class DecompressionLimitError(FormatError):
    """The data decompresses to more than the ``max_size`` limit (a decompression bomb, or a limit set too low)."""


def compression_of(head: bytes) -> str | None:
    """``"gzip"``, ``"zstd"``, ``"bzip2"``, ``"xz"`` or None, from the first bytes (content, not the file name).

    >>> compression_of(b"\\x1f\\x8b\\x08"), compression_of(b"BZh9"), compression_of(b'{"a"')
    ('gzip', 'bzip2', None)
    """
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    if head.startswith(BZIP2_MAGIC) and len(head) > 3 and head[3:4].isdigit():
        return "bzip2"
    if head.startswith(XZ_MAGIC):
        return "xz"
    return None


class _Bounded:
    """A stdlib decoder (zlib, bz2, lzma) driven so that no call returns more than ``OUT_CHUNK`` bytes."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        if kind == "gzip":
            self.d: Any = zlib.decompressobj(wbits=31)
        elif kind == "bzip2":
            self.d = bz2.BZ2Decompressor()
        else:
            self.d = lzma.LZMADecompressor(format=lzma.FORMAT_XZ)

    def feed(self, data: bytes) -> Iterator[bytes]:
        out = self.d.decompress(data, OUT_CHUNK)
        yield out
        while not self.d.eof and self._more(out):
            out = self.d.decompress(self.d.unconsumed_tail if self.kind == "gzip" else b"", OUT_CHUNK)
            yield out

    def _more(self, last: bytes) -> bool:
        if self.kind == "gzip":
            # All input consumed and a short output: zlib has nothing pending.
            return bool(self.d.unconsumed_tail) or len(last) == OUT_CHUNK
        return not self.d.needs_input

    @property
    def eof(self) -> bool:
        return self.d.eof

    @property
    def unused_data(self) -> bytes:
        return self.d.unused_data


class _Zstd:
    """zstandard's decompressobj for one frame (its output is bounded by feeding it small inputs)."""

    def __init__(self) -> None:
        try:
            import zstandard
        except ImportError:  # pragma: no cover - zstandard is a dependency
            raise FormatError("zstd input needs the zstandard package") from None
        self.d = zstandard.ZstdDecompressor().decompressobj()

    def feed(self, data: bytes) -> Iterator[bytes]:
        for start in range(0, len(data), ZSTD_IN_CHUNK):
            yield self.d.decompress(data[start : start + ZSTD_IN_CHUNK])
            if self.d.eof:
                # What follows the frame is the next frame's: hand it back whole.
                self._rest = self.d.unused_data + data[start + ZSTD_IN_CHUNK :]
                return

    @property
    def eof(self) -> bool:
        return self.d.eof

    @property
    def unused_data(self) -> bytes:
        return getattr(self, "_rest", b"")


def _decoder(kind: str) -> _Bounded | _Zstd:
    return _Zstd() if kind == "zstd" else _Bounded(kind)


def _pieces(chunks: Iterable[bytes]) -> Iterator[bytes]:
    for chunk in chunks:
        for start in range(0, len(chunk), IN_CHUNK):
            yield bytes(chunk[start : start + IN_CHUNK])


def iter_decompressed(
    chunks: Iterable[bytes], *, document_id: str | None = None, max_size: int = MAX_DECOMPRESSED_SIZE
) -> Iterator[bytes]:
    """The decompressed bytes of a stream given as chunks of its compressed bytes, as they come (the chunks
    themselves when the data is not compressed). Raises ``FormatError`` — after yielding everything decoded
    before — when the data ends early, is corrupt, or decompresses to more than ``max_size`` bytes.

    >>> import lzma
    >>> b"".join(iter_decompressed([lzma.compress(b"x" * 10)]))
    b'xxxxxxxxxx'
    >>> list(iter_decompressed([lzma.compress(b"x" * 10_000)], max_size=100))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pchronicle_datasets.compression.DecompressionLimitError: (root): the xz data decompresses to more than 100 ...
    """
    pieces = _pieces(chunks)
    head = b""
    for piece in pieces:
        head += piece
        if len(head) >= MAGIC_SIZE:
            break
    kind = compression_of(head)
    if kind is None:
        if head:
            yield head
        yield from pieces
        return
    consumed = produced = 0  # compressed bytes given to decoders; decompressed bytes yielded
    decoder: _Bounded | _Zstd | None = None  # None: between two members / frames / streams
    started = False  # the current decoder has been given at least one byte
    for piece in _prepend(head, pieces):
        start, consumed = consumed, consumed + len(piece)
        data = piece
        while data:
            if decoder is None:
                if kind in ("gzip", "xz"):
                    data = data.lstrip(b"\0")  # padding between members / streams
                    if not data:
                        break
                decoder, started = _decoder(kind), False
            started = True
            try:
                for out in decoder.feed(data):
                    produced += len(out)
                    if produced > max_size:
                        raise DecompressionLimitError(
                            f"the {kind} data decompresses to more than {max_size:,} bytes (max_size): refused "
                            "(a decompression bomb?); raise max_size to read it",
                            document_id=document_id,
                        )
                    if out:
                        yield out
            except FormatError:
                raise
            except Exception as exc:  # zlib.error, OSError, EOFError, LZMAError, zstandard.ZstdError
                raise FormatError(
                    f"the {kind} data is corrupt in bytes {start:,}–{consumed:,} of the file ({exc}); "
                    f"{produced:,} byte(s) decompressed before",
                    document_id=document_id,
                ) from None
            if decoder.eof:
                data, decoder = decoder.unused_data, None
            else:
                data = b""
    if decoder is not None and started:
        raise FormatError(
            f"the {kind} data ends early at byte {consumed:,} of the file (its end): the file is cut short "
            f"({produced:,} byte(s) decompressed)",
            document_id=document_id,
        )


def _prepend(head: bytes, rest: Iterator[bytes]) -> Iterator[bytes]:
    yield head
    yield from rest


class Decompressed(NamedTuple):
    """What ``decompress_file`` read: the text (whole lines only when the data was cut), the error that
    stopped it, and the bytes of the cut last line (a quarantine file keeps them)."""

    text: bytes
    error: FormatError | None
    cut: bytes


def decompress_file(
    data: bytes, document_id: str | None = None, *, max_size: int = MAX_DECOMPRESSED_SIZE
) -> Decompressed:
    """A whole file's bytes, decompressed when compressed. When the data ends early or is corrupt, the text is
    kept up to its last complete line and the error (with the 1-based ``line`` of the first line lost) says where
    the compressed data stops; beyond ``max_size`` nothing is kept."""
    parts: list[bytes] = []
    try:
        for out in iter_decompressed([data], document_id=document_id, max_size=max_size):
            parts.append(out)
    except DecompressionLimitError as exc:
        return Decompressed(b"", exc, b"")
    except FormatError as exc:
        text = b"".join(parts)
        keep = text[: text.rfind(b"\n") + 1]
        lines = keep.count(b"\n")
        reason = f"{exc.reason}; lines 1–{lines} are complete" if lines else f"{exc.reason}; no line is complete"
        err = FormatError(reason, document_id=document_id, line=lines + 1)
        return Decompressed(keep, err, text[len(keep) :])
    return Decompressed(b"".join(parts), None, b"")


def decompress(data: bytes, document_id: str | None = None) -> tuple[bytes, FormatError | None]:
    """``(text bytes, error)``: ``decompress_file`` without the cut line's bytes.

    >>> decompress(b'{"a": 1}')
    (b'{"a": 1}', None)
    """
    out = decompress_file(data, document_id)
    return out.text, out.error
