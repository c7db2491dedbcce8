"""One source file read front to back, once, in bounded memory: its lines one at a time, or its whole text
when it is one JSON document.

A reader never needs a file whole to read JSON Lines: ``Source`` splits the (decompressed) byte stream into
lines as it comes, so memory holds one line and one chunk, not the file. It also keeps what a reader needs
to decide how to read the file — its first two non-blank lines, seen before any is handed out — and the
exact bytes read so far, so a file that turns out to be one pretty-printed JSON document is still read
whole (``read_all``), exactly as before.

Every input a reader takes becomes a ``Source`` (``as_source``): ``str`` and bytes, a binary file object
(``read(n)``), or an iterable of byte chunks (a decompressor's output). A leading UTF-8 byte-order mark is
dropped, as ``base.as_bytes`` does.

Two things never grow memory:

- blank lines and a run of whitespace at the start of a line are not kept beyond ``WHITESPACE_KEPT`` bytes
  (a file of 4 GiB of whitespace reads in constant memory; such a line's ``raw`` then starts at its first
  kept byte, which changes no JSON value);
- the exact bytes read before the first line is handed out are kept only while the reader may still need
  the whole text, and whitespace at the start of the file only up to ``WHITESPACE_KEPT`` bytes.

A file that is one JSON document is held whole (``read_all``): it is one document being assembled.

When the chunks stop with a ``FormatError`` (compressed data cut short or corrupt), the lines before it
are still handed out, the incomplete last line is kept as ``cut``, and ``error`` names the first line lost,
as ``compression.decompress_file`` does for a whole file.

>>> src = as_source(b'{"a": 1}\\n\\n{"b": 2}\\n')
>>> [(n, off, raw) for n, off, raw in src.lines()]
[(1, 0, b'{"a": 1}'), (3, 10, b'{"b": 2}')]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from ..compression import DecompressionLimitError
from ..errors import FormatError

__all__ = ["BOM", "CHUNK", "WHITESPACE_KEPT", "Source", "as_source", "file_chunks", "is_blank_line", "utf8"]

CHUNK = 1 << 20  # bytes read from a file object at a time
WHITESPACE_KEPT = 1 << 20  # whitespace kept at the start of a line (and of the file, for read_all)
BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark, skipped at the start of a file

Line = tuple[int, int, bytes]  # (1-based physical line number, byte offset of raw in the stream, raw)


def is_blank_line(raw: bytes) -> bool:
    """Whether a line (without its newline) is blank: empty, or whitespace only (``bytes.isspace``: space, tab,
    CR, vertical tab, form feed). Every JSON Lines reader, counter and splitter skips these lines.

    >>> is_blank_line(b""), is_blank_line(b" \\t\\r"), is_blank_line(b' {"a": 1}')
    (True, True, False)
    """
    return not raw or raw.isspace()


def utf8(text: str, document_id: str | None = None) -> bytes:
    """Text as UTF-8 bytes; a lone surrogate (which UTF-8 cannot hold) is a ``FormatError``.

    >>> utf8("h\u00e9")
    b'h\xc3\xa9'
    """
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        raise FormatError("text holds a lone surrogate, which is not valid UTF-8", document_id=document_id) from None


def as_source(data: Any, document_id: str | None = None) -> Source:
    """``data`` as a ``Source``: ``str`` (encoded as UTF-8; a lone surrogate is a ``FormatError``), bytes-like,
    a binary file object, an iterable of byte chunks, or a ``Source`` (returned as it is).

    >>> as_source(["{\\"a\\"", ": 1}"]).read_all()
    b'{"a": 1}'
    """
    if isinstance(data, Source):
        return data
    if isinstance(data, str):
        data = utf8(data, document_id)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return Source([bytes(data)], document_id)
    if hasattr(data, "read"):
        return Source(file_chunks(data), document_id)
    if isinstance(data, Iterable):
        return Source((c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in data), document_id)
    raise TypeError(f"a reader takes text, bytes, a binary file or byte chunks, got {type(data).__name__}")


def file_chunks(f: Any, size: int = CHUNK) -> Iterator[bytes]:
    """The bytes of a binary file object, ``size`` at a time, to its end."""
    while True:
        chunk = f.read(size)
        if not chunk:
            return
        yield chunk


class Source:
    """A byte stream read once: ``first_lines`` peeks, then ``lines`` or ``read_all`` consumes it.

    ``error`` / ``cut`` are set once the stream has been read to its end (see the module's docstring);
    ``size`` is the number of bytes read so far.
    """

    def __init__(self, chunks: Iterable[bytes], document_id: str | None = None) -> None:
        self.document_id = document_id
        self.error: FormatError | None = None
        self.cut = b""
        self.size = 0
        self._raw = iter(chunks)
        self._seen: list[bytes] | None = []  # the exact bytes read while read_all may still be asked for
        self._trimmed = False  # leading whitespace was dropped from _seen
        self._leading: int | None = 0  # bytes of whitespace the file starts with (None: past them)
        self._split = self._scan()
        self._peeked: list[Line] = []
        self._started = False
        self._bom = False
        self.text = b""  # the whole text, once read_all has read it
        self._replay = False  # reading the text read_all kept, again

    # ------------------------------------------------------------------ reading

    def _chunks(self) -> Iterator[bytes]:
        first = True
        while True:
            chunk = self._next_raw()
            if chunk is None:
                return
            if first and chunk and not self._replay:
                while len(chunk) < len(BOM) and BOM.startswith(chunk):  # a mark split across chunks
                    more = self._next_raw()
                    if more is None:
                        break
                    chunk += more
                if chunk.startswith(BOM):
                    chunk, self._bom = chunk[len(BOM) :], True
                first = False
            if not chunk:
                continue
            if self._replay:
                yield chunk
                continue
            self.size += len(chunk)
            if self._seen is not None:
                if self._leading is not None and chunk.isspace():
                    # Only whitespace so far (outside any JSON value): keep WHITESPACE_KEPT bytes of it, not a
                    # bomb's gigabytes.
                    self._leading += len(chunk)
                    if self._leading > WHITESPACE_KEPT:
                        self._trimmed = True
                        yield chunk
                        continue
                else:
                    self._leading = None
                self._seen.append(chunk)
            yield chunk

    def _next_raw(self) -> bytes | None:
        """The next chunk, or None at the end or when the stream stopped on an error (kept in ``error``)."""
        if self.error is not None and not self._replay:
            return None
        try:
            return next(self._raw)
        except StopIteration:
            return None
        except FormatError as exc:  # a DecompressionLimitError too: nothing of a bomb is kept, its cut is no line
            self.error = exc  # completed with the line numbers in _scan
            return None

    def _scan(self) -> Iterator[Line]:
        number = offset = carry_len = carry_start = 0
        carry: list[bytes] = []  # the pieces of the current, unterminated line
        first = True
        for chunk in self._chunks():
            if first:  # offsets count the bytes of the stream, a dropped byte-order mark too
                offset, first = (len(BOM) if self._bom else 0), False
            if chunk.isspace() and (not carry or (carry_len <= WHITESPACE_KEPT and b"".join(carry).isspace())):
                # Blank lines only (a whitespace bomb, or padding): counted at C speed, no line handed out.
                nl = chunk.rfind(b"\n")
                rest, rest_start = chunk, offset
                if nl >= 0:
                    number += chunk.count(b"\n")
                    carry, carry_len = [], 0  # the blank lines end here
                    rest, rest_start = chunk[nl + 1 :], offset + nl + 1
                if rest and carry_len + len(rest) <= WHITESPACE_KEPT:
                    if not carry:
                        carry_start = rest_start
                    carry.append(rest)
                    carry_len += len(rest)
                elif rest:
                    carry, carry_len = [], 0  # whitespace beyond WHITESPACE_KEPT at a line's start: not kept
                offset += len(chunk)
                continue
            parts = chunk.split(b"\n")
            last = parts.pop()
            for part in parts:
                number += 1
                if carry:
                    carry.append(part)
                    raw = b"".join(carry)
                    start = carry_start
                    carry, carry_len = [], 0
                else:
                    raw, start = part, offset
                offset += len(part) + 1
                if not is_blank_line(raw):
                    yield number, start, raw
            if last:
                if not carry:
                    carry_start = offset
                carry.append(last)
                carry_len += len(last)
                offset += len(last)
                if carry_len > WHITESPACE_KEPT and last.isspace() and all(p.isspace() for p in carry):
                    carry, carry_len = [], 0  # a line of whitespace so far: nothing to keep
        if self.error is not None and not self._replay:
            self.cut = b"".join(carry)
            if not isinstance(self.error, DecompressionLimitError):
                self.error = _cut_error(self.error, number, self.document_id)
            return
        if carry and (self.error is None or self._replay):
            raw = b"".join(carry)
            if not raw.isspace():
                yield number + 1, carry_start, raw

    # ------------------------------------------------------------------ what readers call

    def first_lines(self, n: int = 2) -> list[Line]:
        """The first ``n`` non-blank lines (fewer when the file has fewer), without consuming them."""
        while len(self._peeked) < n and self.peek_more() is not None:
            pass
        return self._peeked[:n]

    def peek_more(self) -> Line | None:
        """Peek one more non-blank line (None at the end of the file); ``first_lines`` then includes it."""
        if self._started:
            raise RuntimeError("peek after lines(): a Source is read once")
        line = next(self._split, None)
        if line is not None:
            self._peeked.append(line)
        return line

    def whole_if_small(self, limit: int) -> bytes | None:
        """The whole text when the file holds at most ``limit`` bytes, else None (having read about ``limit``)."""
        while self.size <= limit:
            if self.peek_more() is None:
                return self.read_all()
        return None

    def is_blank(self) -> bool:
        """Whether the file holds no non-blank line (empty, or whitespace only)."""
        return not self.first_lines(1)

    def lines(self) -> Iterator[Line]:
        """Every non-blank line ``(number, offset, raw)``, in file order, each handed out once."""
        self._started = True
        self._seen = None  # the whole text is no longer needed: stop keeping it
        peeked, self._peeked = self._peeked, []
        yield from peeked
        del peeked
        yield from self._split

    def read_all(self) -> bytes:
        """The whole file as one text: for a file that is one JSON document. The text ends at the last complete
        line when the stream stopped on an error. Afterwards the Source reads that text again from its start
        (``first_lines``, ``lines``), so a reader may look at a file that detection read whole."""
        if self._replay:
            if self._started:
                raise RuntimeError("read_all after lines(): a Source is read once")
            return self.text
        if self._started or self._seen is None:
            raise RuntimeError("read_all after lines(): a Source is read once")
        for _ in self._split:  # read to the end; _chunks keeps every byte in _seen
            pass
        data = b"".join(self._seen)
        if self.error is not None and not isinstance(self.error, DecompressionLimitError):
            data = data[: len(data) - len(self.cut)] if self.cut and data.endswith(self.cut) else data
        self.text = data
        # Replay the text: the peeked lines and the splitter start again from its first byte.
        self._replay, self._raw, self._seen, self._peeked = True, iter([data]), None, []
        self._split = self._scan()
        return data

    @property
    def skipped(self) -> int:
        """Bytes at the start of the stream that are not in the text (a dropped byte-order mark)."""
        return len(BOM) if self._bom else 0

    @property
    def trimmed(self) -> bool:
        """Whether leading whitespace beyond ``WHITESPACE_KEPT`` bytes was left out of ``read_all``."""
        return self._trimmed


def _cut_error(exc: FormatError, complete: int, document_id: str | None) -> FormatError:
    reason = f"{exc.reason}; lines 1–{complete} are complete" if complete else f"{exc.reason}; no line is complete"
    return FormatError(reason, document_id=document_id or exc.document_id, line=complete + 1)
