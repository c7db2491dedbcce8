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

``max_record_size`` (``MAX_RECORD_SIZE``, 512 MiB, by default) bounds what one record may hold: a line longer
than it is not buffered past the limit — the rest of it is counted, not kept — and is handed out as an empty
``Oversized`` raw, which ``base.parse_line`` turns into a ``RecordTooLargeError`` naming the file, the line,
the limit and the option that raises it (``record_too_large``); a file that is one JSON value (read whole)
larger than it is refused the same way by ``read_all``. This is the one place every engine's line splitting
goes through (the datasets builder, the CLI, Spark's whole files; Spark's split parts check their lines with
``too_long``). Whitespace runs inside a line are kept only up to ``WHITESPACE_KEPT`` bytes too: trailing
whitespace beyond it is dropped (no JSON value changes), and a line whose text goes on after such a run is
refused, since its exact bytes were not kept.

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

__all__ = [
    "BOM",
    "CHUNK",
    "MAX_RECORD_SIZE",
    "START_KEPT",
    "WHITESPACE_KEPT",
    "Oversized",
    "RecordTooLargeError",
    "Source",
    "as_source",
    "check_record_size",
    "file_chunks",
    "is_blank_line",
    "record_too_large",
    "too_long",
    "utf8",
]

CHUNK = 1 << 20  # bytes read from a file object at a time
WHITESPACE_KEPT = 1 << 20  # whitespace kept at the start of a line (and of the file, for read_all)
BOM = b"\xef\xbb\xbf"  # the UTF-8 byte-order mark, skipped at the start of a file
START_KEPT = 100  # the first bytes of a stream kept for ``Source.head`` (a SQLite header is 100 bytes)
#: The most bytes one record (a JSON Lines line, or a file that is one JSON value) may hold: far beyond any real
#: trajectory line, and small enough that parsing one (orjson builds several times its size) fits in memory.
MAX_RECORD_SIZE = 512 << 20


class RecordTooLargeError(FormatError):
    """A record (a line, or a file that is one JSON value) is larger than ``max_record_size``: refused before it
    is held in memory."""


class Oversized(bytes):
    """The raw of a line that was not kept: empty bytes carrying why (``size``: the line's length; ``limit``;
    ``whitespace``: refused for a dropped whitespace run, not its size). ``base.parse_line`` refuses it."""

    size: int
    limit: int
    whitespace: bool


def _oversized(size: int, limit: int, whitespace: bool = False) -> Oversized:
    raw = Oversized()
    raw.size, raw.limit, raw.whitespace = size, limit, whitespace
    return raw


def record_too_large(
    size: int | None, limit: int, document_id: str | None, line: int | None, *, whole: bool = False
) -> RecordTooLargeError:
    """THE refusal of a record beyond ``max_record_size``, the same in every engine: it names the file and line
    (``document_id``, ``line``), the limit and the options that raise it (``size`` None: not known, the reader
    stopped at the limit).

    >>> print(record_too_large(5000, 4096, "cap.jsonl", 3))  # doctest: +NORMALIZE_WHITESPACE
    (root): the line is 5,000 bytes, more than max_record_size (4,096 bytes): refused without holding it; raise
    max_record_size (load_dataset(..., max_record_size=N), --max-record-size) to read it in cap.jsonl line 3
    """
    if whole:
        amount = f"the file is one JSON value of more than {limit:,} bytes (max_record_size)"
    elif size is None:
        amount = f"the line is more than max_record_size ({limit:,} bytes)"
    else:
        amount = f"the line is {size:,} bytes, more than max_record_size ({limit:,} bytes)"
    return RecordTooLargeError(
        f"{amount}: refused without holding it; raise max_record_size (load_dataset(..., max_record_size=N), "
        "--max-record-size) to read it",
        document_id=document_id,
        line=line,
    )


def too_long(raw: bytes, document_id: str | None, line: int | None) -> FormatError | None:
    """The error of a line the splitter did not keep (an ``Oversized`` raw), else None."""
    if not isinstance(raw, Oversized):
        return None
    if raw.whitespace:
        return FormatError(
            f"the line holds a run of more than {WHITESPACE_KEPT:,} bytes of whitespace followed by more text: "
            "refused (such a run is not kept in memory, so the line's exact text is lost); remove the run",
            document_id=document_id,
            line=line,
        )
    return record_too_large(raw.size, raw.limit, document_id, line)


def check_record_size(limit: object) -> int:
    """``limit`` when it is a positive whole number of bytes; ``ValueError`` otherwise."""
    if type(limit) is not int or limit < 1:
        raise ValueError(f"max_record_size must be a positive integer (bytes), got {limit!r}")
    return limit


Line = tuple[int, int, bytes]  # (1-based physical line number, byte offset of raw in the stream, raw)
_DRAINED = (0, 0, b"")  # what the splitter hands read_all for each chunk while it reads to the end


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


def as_source(data: Any, document_id: str | None = None, max_record_size: int = MAX_RECORD_SIZE) -> Source:
    """``data`` as a ``Source``: ``str`` (encoded as UTF-8; a lone surrogate is a ``FormatError``), bytes-like,
    a binary file object, an iterable of byte chunks, or a ``Source`` (returned as it is, with its own limit).

    >>> as_source(["{\\"a\\"", ": 1}"]).read_all()
    b'{"a": 1}'
    """
    if isinstance(data, Source):
        return data
    if isinstance(data, str):
        data = utf8(data, document_id)
    if isinstance(data, (bytes, bytearray, memoryview)):
        return Source([bytes(data)], document_id, max_record_size)
    if hasattr(data, "read"):
        return Source(file_chunks(data), document_id, max_record_size)
    if isinstance(data, Iterable):
        chunks = (c.encode("utf-8") if isinstance(c, str) else bytes(c) for c in data)
        return Source(chunks, document_id, max_record_size)
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

    def __init__(
        self, chunks: Iterable[bytes], document_id: str | None = None, max_record_size: int = MAX_RECORD_SIZE
    ) -> None:
        self.document_id = document_id
        self.max_record_size = check_record_size(max_record_size)
        self._seen_len = 0  # bytes in _seen
        self._too_big = False  # _seen went past max_record_size: the file cannot be read whole
        self._run = 0  # bytes of whitespace at the end of _seen
        self._gap = False  # a whitespace run after text went past WHITESPACE_KEPT and is missing from _seen
        self._gapped = False  # text came after such a run: the file cannot be read whole exactly
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
        self._draining = False  # read_all is reading to the end: the splitter counts lines, hands none out
        self._start = b""  # the stream's first START_KEPT bytes (``head``), kept whatever its lines

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
            if len(self._start) < START_KEPT:
                self._start += chunk[: START_KEPT - len(self._start)]
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
                elif chunk.isspace():
                    # Whitespace after text: as the splitter does, a run is kept up to WHITESPACE_KEPT bytes only
                    # (a value followed by a bomb of spaces reads the same without it).
                    self._leading = None
                    self._run += len(chunk)
                    if self._run > WHITESPACE_KEPT:
                        self._gap = True
                        yield chunk
                        continue
                else:
                    self._leading = None
                    if self._gap:
                        # Text after a run that was not kept: the exact whole text is lost (read_all refuses it;
                        # JSON Lines are read line by line and do not need it).
                        self._seen, self._gapped = None, True
                        yield chunk
                        continue
                    self._run = len(chunk) - len(chunk.rstrip())
                self._seen.append(chunk)
                self._seen_len += len(chunk)
                if self._seen_len > self.max_record_size:
                    # Past the limit the whole text can never be read (read_all refuses it): stop keeping it.
                    self._seen, self._too_big = None, True
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
        limit = self.max_record_size
        number = offset = carry_len = carry_start = 0
        carry: list[bytes] = []  # the pieces of the current, unterminated line
        first = True
        skipping: int | None = None  # bytes of an over-limit line so far, while its rest is counted, not kept
        skip_ws = False  # the line is skipped for text after a whitespace run that was not kept, not its size
        dropped = 0  # bytes of the current line's whitespace run past WHITESPACE_KEPT: counted, not kept
        run = 0  # bytes of whitespace at the end of the current line's kept text
        for chunk in self._chunks():
            if first:  # offsets count the bytes of the stream, a dropped byte-order mark too
                offset, first = (len(BOM) if self._bom else 0), False
            if skipping is not None:
                # The rest of a line that is not kept: only its length, up to its newline.
                nl = chunk.find(b"\n")
                if nl < 0:
                    skipping += len(chunk)
                    offset += len(chunk)
                    continue
                number += 1
                yield number, carry_start, _oversized(skipping + nl, limit, skip_ws)
                skipping, skip_ws, dropped, run, carry_len = None, False, 0, 0, 0
                offset += nl + 1
                chunk = chunk[nl + 1 :]
                if not chunk:
                    continue
            if self._draining:
                # read_all is reading to the end, keeping the text (_chunks): lines are only counted (for the line
                # number of a stream error) and the unfinished last one kept (its cut), at C speed — a
                # pretty-printed file is thousands of lines no one asks for. After each chunk read_all checks
                # its limits; the state is the line splitter's, so lines() could go on from here.
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    number += chunk.count(b"\n", 0, nl + 1)
                    carry, carry_len, dropped, run = [], 0, 0, 0
                    carry_start = offset + nl + 1
                elif not carry:
                    carry_start = offset
                tail = chunk[nl + 1 :] if nl >= 0 else chunk
                if tail and carry_len <= limit:  # past the limit the file is refused whole: not kept
                    carry.append(tail)
                    carry_len += len(tail)
                offset += len(chunk)
                yield _DRAINED
                continue
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
            if carry and b"\n" not in chunk and chunk.isspace():
                # Whitespace after a line's text (padding, or a bomb in a line): kept up to WHITESPACE_KEPT
                # bytes, then only counted. If the line ends here, its value is the same without it, so the
                # run is not counted against max_record_size unless more text follows it.
                run += len(chunk)
                if run > WHITESPACE_KEPT:
                    dropped += len(chunk)
                else:
                    carry.append(chunk)
                    carry_len += len(chunk)
                offset += len(chunk)
                continue
            parts = chunk.split(b"\n")
            last = parts.pop()
            for k, part in enumerate(parts):
                if self._draining:  # read_all took over after a peek: the chunk's other lines are only counted
                    number += len(parts) - k
                    offset += sum(map(len, parts[k:])) + len(parts) - k
                    carry, carry_len, dropped, run = [], 0, 0, 0
                    break
                number += 1
                if carry:
                    size = carry_len + len(part)
                    text = part and not part.isspace()
                    if dropped and text:
                        raw = _oversized(size + dropped, limit, whitespace=True)  # text after a run not kept
                    elif (size if text else carry_len - run) > limit:  # trailing whitespace does not count
                        raw = _oversized(size + dropped, limit)
                    else:
                        carry.append(part)
                        raw = b"".join(carry)
                    start = carry_start
                    carry, carry_len = [], 0
                else:
                    raw, start = part, offset
                    if len(raw) > limit:  # a line whole in one chunk (bytes given whole): not handed out either
                        raw = _oversized(len(raw), limit)
                dropped, run = 0, 0  # a new line starts
                offset += len(part) + 1
                if isinstance(raw, Oversized) or not is_blank_line(raw):
                    yield number, start, raw
            if last:
                if not carry:
                    carry_start = offset
                if dropped and not last.isspace():
                    # text after a dropped run: the line is skipped (its kept part no longer counts toward the next)
                    skipping, skip_ws, carry, carry_len = carry_len + dropped + len(last), True, [], 0
                    offset += len(last)
                    continue
                carry.append(last)
                carry_len += len(last)
                offset += len(last)
                stripped = len(last.rstrip())
                run = len(last) - stripped if stripped else run + len(last)
                if carry_len > WHITESPACE_KEPT and last.isspace() and all(p.isspace() for p in carry):
                    carry, carry_len, run = [], 0, 0  # a line of whitespace so far: nothing to keep
                elif carry_len - run > limit:
                    # Too long: the rest is counted up to its newline (in skipping: no carry left for the next line).
                    skipping, carry, carry_len = carry_len + dropped, [], 0
        if self.error is not None and not self._replay:
            self.cut = b"".join(carry)
            if not isinstance(self.error, DecompressionLimitError):
                self.error = _cut_error(self.error, number, self.document_id)
            return
        if skipping is not None:
            yield number + 1, carry_start, _oversized(skipping, limit, skip_ws)
            return
        if carry and (self.error is None or self._replay):
            raw = b"".join(carry)
            if dropped and not raw.isspace():
                raw = raw.rstrip()  # its trailing run was not kept: the same value without any of it
            if carry_len - run > limit:
                raw = _oversized(carry_len + dropped, limit)
            if isinstance(raw, Oversized) or not raw.isspace():
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

    def head(self, n: int = START_KEPT) -> bytes:
        """The stream's first ``n`` bytes (at most ``START_KEPT``; fewer for a shorter file), peeked: what a binary
        file's magic number is read from (a SQLite database, ``database.is_database``), however long its first
        "line" runs.

        >>> src = as_source(b"SQLite format 3\\x00\\n{}"); src.head(6), src.read_all()[:6]
        (b'SQLite', b'SQLite')
        """
        if self._replay:
            return self.text[:n]
        while len(self._start) < min(n, START_KEPT) and not self._started and self.peek_more() is not None:
            pass
        return self._start[:n]

    def whole_if_small(self, limit: int) -> bytes | None:
        """The whole text when the file holds at most ``limit`` bytes, else None (having read about ``limit``)."""
        while self.size <= limit and not (self._too_big or self._gapped):
            if self.peek_more() is None:
                return None if self._too_big or self._gapped else self.read_all()
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
        if (self._too_big or self._gapped) and not self._started:
            raise self._whole_refusal()
        if self._started or self._seen is None:
            raise RuntimeError("read_all after lines(): a Source is read once")
        self._draining = True
        try:
            for _ in self._split:  # read to the end; _chunks keeps every byte in _seen (up to max_record_size)
                if self._too_big or self._gapped:
                    raise self._whole_refusal()  # stopped there: the rest is never read
        finally:
            self._draining = False
        data = b"".join(self._seen)
        if self.error is not None and not isinstance(self.error, DecompressionLimitError):
            data = data[: len(data) - len(self.cut)] if self.cut and data.endswith(self.cut) else data
        self.text = data
        # Replay the text: the peeked lines and the splitter start again from its first byte.
        self._replay, self._raw, self._seen, self._peeked = True, iter([data]), None, []
        self._split = self._scan()
        return data

    def _whole_refusal(self) -> FormatError:
        """The file cannot be read whole: it is larger than ``max_record_size``, or its text goes on after a run of
        whitespace that was not kept (``text`` stays empty)."""
        if self._too_big:
            return record_too_large(self._seen_len, self.max_record_size, self.document_id, None, whole=True)
        return FormatError(
            f"the file holds a run of more than {WHITESPACE_KEPT:,} bytes of whitespace followed by more text and "
            "is not JSON Lines: refused (such a run is not kept in memory, so its exact text is lost); remove the run",
            document_id=self.document_id,
        )

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
