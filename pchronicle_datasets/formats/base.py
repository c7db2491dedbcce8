"""The format contract, and what every format shares: the per-record result type, input normalisation and
JSON Lines / whole-file parsing.

A format is a module (or a package's ``__init__``) that satisfies ``Format``; ``formats.register(module)``
checks it and makes the format known to every entry point (``load_dataset``, ``"auto"``, the hub API, the CLI).
``docs/formats/README.md`` walks through adding one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, Protocol, runtime_checkable

import orjson

from ..errors import FormatError, PchronicleError
from ..jsonio import loads, may_hold_big_int
from .source import BOM, Oversized, Source, as_source, is_blank_line, too_long, utf8

__all__ = [
    "CAPABILITIES",
    "INTERRUPTED",
    "UNPARSED",
    "BatchedWriter",
    "DocumentSuffix",
    "FolderWriter",
    "Format",
    "Hinted",
    "Keyed",
    "LineReader",
    "Record",
    "Regrouping",
    "Sidecars",
    "Source",
    "Splittable",
    "StreamingWriter",
    "as_bytes",
    "as_source",
    "documents",
    "first_line_kind",
    "first_value",
    "first_values",
    "json_lines",
    "open_file",
    "parse_file",
    "parse_line",
    "parse_source",
    "parsed_lines",
    "read_records",
    "starts_json_lines",
]

# (index among the non-blank lines, 1-based physical line, byte offset in the stream (-1: not re-readable), raw,
# value or FormatError, whether raw may hold an integer beyond 64 bits)
StreamLine = tuple[int, int, int, bytes, Any, bool]


@dataclass(frozen=True)
class Record:
    """One source record: the document it gave, or the error that refused it (never both)."""

    line: int | None  # 1-based line for JSON Lines input; None for a single-document file
    raw: bytes  # the record's source bytes, for a quarantine file
    story: dict[str, Any] | None = None
    error: PchronicleError | None = None
    value: Any = None  # the parsed JSON value, also when it was refused (for reporting every error)


@runtime_checkable
class Format(Protocol):
    """What every format provides. Callers ask the format; they never compare its name.

    - ``NAME``, ``ALIASES``: the names ``load_dataset("pchronicle", name)``, ``--from``/``--to`` and the hub API take;
    - ``EXTENSION``: the extension of the file(s) its writer writes (``".jsonl"``);
    - ``OUTPUT``: ``"file"`` when ``encode`` gives one text, ``"folder"`` when the writer lays out several files:
      then ``encode_folder(stories) -> {file name: text}`` gives them (the CLI's ``convert -o OUT`` writes them
      in the folder ``OUT``);
    - ``PER_DOCUMENT``: whether ``convert --per-document`` may write one file per document with this writer;
    - ``sniff(sample)``: whether the parsed first record of a file (``first_value``) is unmistakably this
      format: detection looks at structure (keys, types, ``schema_version``), never at substrings;
    - ``iter_records(data, document_id)``: one ``Record`` per document or per refused record, in file order, for
      one (decompressed) file given as text, bytes, a binary file object, byte chunks or a ``Source``
      (``as_source`` takes them all); JSON Lines are read line by line, so memory holds one record at a time
      (a file that is one JSON document is read whole); never raises on bad data;
    - ``decode(data, document_id)``: the documents, or the first error raised;
    - ``encode(stories, **options)``: the format's text for validated Storyline documents.
    """

    NAME: str
    ALIASES: tuple[str, ...]
    EXTENSION: str
    OUTPUT: Literal["file", "folder"]
    PER_DOCUMENT: bool

    def sniff(self, sample: Any) -> bool: ...

    def iter_records(self, data: str | bytes | Source | Any, document_id: str | None = None) -> Iterator[Record]: ...

    def decode(self, data: str | bytes, document_id: str | None = None) -> list[dict[str, Any]]: ...

    def encode(self, stories: list[dict[str, Any]], **options: Any) -> str: ...


# ---------------------------------------------------------------------------------- optional capabilities
# What a format may do beyond the contract above. Callers never look for these members themselves: they ask
# ``formats.capability(fmt, name)`` (one lookup, by the names of ``CAPABILITIES``), and ``formats.register``
# checks that a format declaring one has all of it.


@runtime_checkable
class Splittable(Protocol):
    """Its big JSON Lines files may be read in byte ranges: ``iter_records(…, byte_range=(start, end))`` gives
    the records that start in ``[start, end)`` (``end`` None: the file's end), the parts of a file in order
    giving exactly the file's records (openai-msg: the sessions whose first row starts there); it takes
    ``max_record_size`` too (``source.Source``), since the engine hands it the file, not a ``Source``."""

    SPLITTABLE: Literal[True]

    def iter_records(
        self, data: Any, document_id: str | None = None, *, byte_range: Any = None, max_record_size: int = ...
    ) -> Iterator[Record]: ...


@runtime_checkable
class LineReader(Protocol):
    """Its JSON Lines hold one record per line, standing alone: ``read_line(value, raw, document_id, line,
    index)`` is what its JSON Lines loop gives for one parsed line (``line`` 1-based physical, ``index``
    0-based among the non-blank lines), so a part of a split file is read in place."""

    def read_line(self, value: Any, raw: bytes, document_id: str | None, line: int, index: int) -> list[Record]: ...


@runtime_checkable
class FolderWriter(Protocol):
    """Its writer lays out several files (``OUTPUT = "folder"``): ``encode_folder(stories) -> {name: text}``."""

    def encode_folder(self, stories: list[dict[str, Any]]) -> dict[str, str]: ...


@runtime_checkable
class BatchedWriter(Protocol):
    """``encode(a + b) == encode(a) + encode(b)`` (and the same per file of ``encode_folder``): a writer may be
    given a batch at a time."""

    ENCODE_IN_BATCHES: Literal[True]


@runtime_checkable
class StreamingWriter(Protocol):
    """Its writer needs every document before its first byte (``ENCODE_IN_BATCHES`` false: openai-msg gives
    documents sharing a session id distinct ids, and sorts rows back into source order across documents), yet
    can write from a stream: ``encode_to(stories, write, workdir, **options)`` gives ``write`` the UTF-8 bytes of
    ``encode(list(stories), **options)``, spilling to ``workdir`` (an empty folder the caller removes) so that
    memory holds about one document, not the input; it returns the number of documents."""

    def encode_to(
        self, stories: Iterable[dict[str, Any]], write: Callable[[bytes], object], workdir: Any, **options: Any
    ) -> int: ...


@runtime_checkable
class Hinted(Protocol):
    """Its reader keeps export hints (what the same-source writer needs to give back the source bytes) under
    ``/meta/<HINTS>``."""

    HINTS: str


@runtime_checkable
class Regrouping(Protocol):
    """Its records are groups of JSON Lines rows (openai-msg: the rows of a session), which an engine that
    shuffles (Spark) may regroup itself: ``group_of(index, value, line, raw, document_id)`` is a row's group
    key, or the bad record the reader makes of the row; ``build_group(key, rows, document_id, scan)`` the
    document of one group's rows ``(index, value, line, raw)`` in file order (raising its ``FormatError``)."""

    def group_of(
        self, index: int, value: Any, line: int | None, raw: bytes, document_id: str | None
    ) -> str | Record: ...

    def build_group(self, key: str, rows: list, document_id: str | None, scan: bool = True) -> dict[str, Any]: ...


@runtime_checkable
class Keyed(Protocol):
    """The top-level keys its records are known by (``KEYS``): when no format claims a file, detection names the
    format whose keys the file shares most of (docs/formats/README.md, "When no format claims a file")."""

    KEYS: tuple[str, ...]


@runtime_checkable
class Sidecars(Protocol):
    """Small files beside a trajectory file inform its reader (``pchronicle_datasets/sidecars.py``):
    ``sidecar_of(name)`` is the sidecar's name for the file ``name`` (or None), and ``iter_records`` takes
    ``sidecar=`` (its bytes)."""

    SIDECAR: Literal[True]

    def sidecar_of(self, name: str) -> str | None: ...


@runtime_checkable
class DocumentSuffix(Protocol):
    """``convert --per-document`` names each file ``{session}<DOCUMENT_SUFFIX>`` (a Gemini CLI session is
    ``{session}.jsonl``) instead of RFC-0001's ``{session}.storyline.json``."""

    DOCUMENT_SUFFIX: str


@runtime_checkable
class IndexFiles(Protocol):
    """Files the harness writes beside its sessions that hold none (``INDEX_FILES``: their names, each with what it
    is): a folder's listing leaves them out and says so (``sidecars.pair``), instead of stopping on a file no
    reader takes."""

    INDEX_FILES: dict[str, str]


@runtime_checkable
class Members(Protocol):
    """Several files of a folder are one document (``pchronicle_datasets/sidecars.py``, ``groups``): ``member_of(name)``
    is the document's id for a file ``name`` that is one of its members (or None); the reader gets the members'
    values as JSON Lines, one line per file in name order (an OpenHands conversation folder: ``base_state.json``,
    then ``events/event-*.json``)."""

    MEMBERS: Literal[True]

    def member_of(self, name: str) -> str | None: ...


@runtime_checkable
class Database(Protocol):
    """The harness keeps its sessions in a SQLite database (``pchronicle_datasets/formats/database.py``):
    ``DATABASE_TABLES`` are the tables that name such a database (detection reads them; a tuple of such sets when the
    harness changed its storage, any one naming it), and ``iter_records`` also takes the database's bytes
    (``database.read_database``), giving one record per session."""

    DATABASE_TABLES: frozenset[str] | tuple[frozenset[str], ...]


#: name → (protocol, the members that declare it: a format has the capability when it has the first).
CAPABILITIES: dict[str, tuple[type, tuple[str, ...]]] = {
    "splittable": (Splittable, ("SPLITTABLE", "iter_records")),
    "line_reader": (LineReader, ("read_line",)),
    "folder_writer": (FolderWriter, ("encode_folder",)),
    "batched_writer": (BatchedWriter, ("ENCODE_IN_BATCHES",)),
    "streaming_writer": (StreamingWriter, ("encode_to",)),
    "hints": (Hinted, ("HINTS",)),
    "regrouping": (Regrouping, ("group_of", "build_group")),
    "keys": (Keyed, ("KEYS",)),
    "sidecars": (Sidecars, ("SIDECAR", "sidecar_of")),
    "document_suffix": (DocumentSuffix, ("DOCUMENT_SUFFIX",)),
    "index_files": (IndexFiles, ("INDEX_FILES",)),
    "members": (Members, ("MEMBERS", "member_of")),
    "database": (Database, ("DATABASE_TABLES",)),
}


def as_bytes(data: str | bytes | bytearray | memoryview, document_id: str | None = None) -> bytes:
    """The input as bytes, without a leading UTF-8 byte-order mark (``str`` is encoded as UTF-8)."""
    data = utf8(data, document_id) if isinstance(data, str) else bytes(data)
    return data[len(BOM) :] if data.startswith(BOM) else data


def json_lines(data: bytes) -> list[tuple[int, bytes]] | None:
    """The non-blank lines ``(1-based line number, bytes)`` when ``data`` (which is not one JSON text) is
    JSON Lines, else None.

    It is JSON Lines when it has two non-blank lines or more and one of them is, by itself, a JSON object
    or array: a pretty-printed document hardly has such a line (they span several lines), while
    JSON Lines keeps its good lines even when the first is broken. orjson alone decides here, so a line it
    would misread (an integer beyond 64 bits) still counts, and its strict parse later reports the value.
    """
    lines = [(i + 1, raw) for i, raw in enumerate(data.split(b"\n")) if not is_blank_line(raw)]
    if len(lines) < 2:
        return None
    for _, raw in lines:
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(value, (dict, list)):
            return lines
    return None


def parsed_lines(
    data: bytes, lines: list[tuple[int, bytes]], document_id: str | None, scan: bool | None = None
) -> Iterator[tuple[int, int, bytes, Any]]:
    """``(index, line, raw, value)`` for each JSON Lines line: its 0-based place among the non-blank lines,
    its 1-based physical line, its bytes, and its value or the ``FormatError`` that refused it. ``scan``: whether
    ``data`` may hold integers beyond 64 bits, when the caller knows (else one scan of the whole file)."""
    if scan is None:
        scan = may_hold_big_int(data)
    for index, (number, raw) in enumerate(lines):
        try:
            value: Any = loads(raw, document_id=document_id, line=number, scan=scan)
        except FormatError as exc:
            value = exc
        yield index, number, raw, value


def documents(records: Iterable[Record]) -> list[dict[str, Any]]:
    """The documents of ``records``, or the first record's error raised (what ``decode`` means)."""
    stories = []
    for rec in records:
        if rec.error is not None:
            raise rec.error
        stories.append(rec.story)
    return stories


def first_value(data: bytes) -> Any:
    """The parsed first record of a file, for ``sniff``: the first of ``first_values``; ``None`` when there is none.

    >>> first_value(b'{"a": 1}\\n{"b": 2}\\n')
    {'a': 1}
    >>> first_value(b'[{"role": "user",\\n "content": "hi"}]')
    [{'role': 'user', 'content': 'hi'}]
    >>> first_value(b"not json") is None
    True
    """
    return next(first_values(data), None)


def first_values(data: bytes) -> Iterator[Any]:
    """The parsed first records of a file, in order, for detection: the value of each non-blank line that is a
    JSON object or array (JSON Lines, or a one-line file), among the first 1,024 lines; when the first non-blank
    line is not one, the whole text's value instead (a pretty-printed file), if it is one.

    Lines are parsed one by one as they are asked for, so a large JSON Lines file is not parsed whole to be
    detected. orjson alone decides: detection needs the structure; the reader then parses strictly.

    >>> list(first_values(b'{"a": 1}\\nnot json\\n[]\\n'))
    [{'a': 1}, []]
    >>> list(first_values(b'{\\n  "a": 1\\n}\\n'))
    [{'a': 1}]
    """
    data = as_bytes(data)
    lines = (raw for raw in data.split(b"\n", 1024) if not is_blank_line(raw))
    for n, raw in enumerate(lines):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            value = None
        if isinstance(value, (dict, list)):
            yield value
        elif n == 0:
            try:
                yield orjson.loads(data)
                return
            except orjson.JSONDecodeError:
                pass


def parse_file(data: bytes | Source, document_id: str | None, scan: bool | None = None) -> tuple[bool, Any]:
    """``(True, value)`` when the whole text is one JSON value, else ``(False, parsed_lines(…))`` when it is
    JSON Lines (``json_lines``); a file that is neither raises the whole-file ``FormatError``.

    ``data`` may be a ``Source``: JSON Lines are then parsed one line at a time as the stream comes
    (``parse_source``), and the whole text, when the file is one value (or neither), is ``data.text``.

    >>> src = as_source(b'{"n": 1}\\n{"n": 2}\\n')
    >>> whole, lines = parse_file(src, "f.jsonl")
    >>> whole, [(index, line, value) for index, line, raw, value in lines]
    (False, [(0, 1, {'n': 1}), (1, 2, {'n': 2})])
    """
    if isinstance(data, Source):
        whole, parsed = parse_source(data, document_id)
        if whole:
            return True, parsed
        return False, ((index, number, raw, value) for index, number, _, raw, value, _ in parsed)
    try:
        return True, loads(data, document_id=document_id)
    except FormatError:
        lines = json_lines(data)
        if lines is None:
            raise
        return False, parsed_lines(data, lines, document_id, scan)


def open_file(data: Any, document_id: str | None) -> tuple[Source, bool, Any] | Record | None:
    """How every reader opens a file: ``(source, whole, parsed)`` (``parse_file`` on ``as_source(data)``); None
    for a blank file (no record); the one error record (the whole text) of a file that is neither one JSON value
    nor JSON Lines.

    >>> open_file(b"  ", "f") is None, open_file(b"{", "f").error is not None, open_file(b"[1]", "f")[1:]
    (True, True, (True, [1]))
    """
    src = as_source(data, document_id)
    if src.is_blank():
        return None
    try:
        whole, parsed = parse_file(src, document_id)
    except FormatError as exc:
        return Record(exc.line, src.text, error=exc)
    return src, whole, parsed


def read_records(
    data: Any,
    document_id: str | None,
    each: Callable[[Any, bytes, str | None, int, int], Iterable[Record]],
    whole: Callable[[Any, bytes], Iterable[Record]],
) -> Iterator[Record]:
    """The records of a file that is one JSON value or JSON Lines (``parse_file`` on ``as_source(data)``), in
    file order: the reading loop of every reader, which gives only its own rule. A blank file gives none; a file
    that is neither is one error record (the whole text); in JSON Lines a line that is not JSON is its own error
    record and every other line gives ``each(value, raw, document_id, line, index)`` (``line`` 1-based physical,
    ``index`` 0-based among the non-blank lines: a format's ``read_line``); a file that is one value gives
    ``whole(value, text)``.

    >>> def each(value, raw, document_id, line, index):
    ...     return [Record(line, raw, value=value)]
    >>> def whole(value, text):
    ...     return [Record(None, text, value=value)]
    >>> records = read_records(b'{"n": 1}\\n\\nnot json\\n[2]\\n', "f", each, whole)
    >>> [(r.line, r.value, r.error is not None) for r in records]
    [(1, {'n': 1}, False), (3, None, True), (4, [2], False)]
    >>> [(r.line, r.value) for r in read_records(b'{"n":\\n 1}', "f", each, whole)]
    [(None, {'n': 1})]
    """
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, is_whole, parsed = opened
    if is_whole:
        yield from whole(parsed, src.text)
        return
    for index, number, raw, value in parsed:
        if isinstance(value, FormatError):
            yield Record(number, raw, error=value)
        else:
            yield from each(value, raw, document_id, number, index)


def one_document_records(
    data: Any, document_id: str | None, what: str, build: Callable[[dict[int, Any]], dict[str, Any]]
) -> Iterator[Record]:
    """The records of a JSON Lines file that is one document (a harness's session file: Qwen Code's, Kimi CLI's):
    one error record per line that is not JSON (the other lines still make the document, as the harness's own
    reader skips them), then ``build(records)`` (``{0-based index: object}``), or the error that refused it,
    named at the document's first line. A file of one JSON value that is not an object is refused with ``what``
    (what such a file is).

    >>> recs = one_document_records(b'{"a": 1}\\nnot json\\n{"b": 2}\\n', "s.jsonl", "JSON Lines of objects",
    ...                             lambda records: {"n": len(records)})
    >>> [(r.line, r.story, r.error is not None) for r in recs]
    [(2, None, True), (1, {'n': 2}, False)]
    """
    opened = open_file(data, document_id)
    if not isinstance(opened, tuple):  # a blank file (None), or one no parser reads (its error record)
        yield from () if opened is None else (opened,)
        return
    src, whole, parsed = opened
    records: dict[int, Any] = {}
    raws: list[bytes] = []
    first: int | None = None
    if whole:  # a file of one line: one record
        if not isinstance(parsed, dict):
            yield Record(None, src.text, error=FormatError(what, pointer="", document_id=document_id), value=parsed)
            return
        records[0], first = parsed, 1
        raws.append(src.text)
    for index, line, raw, value in () if whole else parsed:
        if isinstance(value, FormatError):
            yield Record(line, raw, error=value)
            continue
        first = line if first is None else first
        raws.append(raw)
        records[index] = value
    if not records:
        return
    try:
        story = build(records)
    except PchronicleError as exc:
        yield Record(first, b"\n".join(raws), error=exc.with_context(document_id=document_id, line=first))
        return
    yield Record(first, b"\n".join(raws), story=story)


#: The key of a harness's export hints (``/meta/<format>``) that counts the times the user stopped the agent
#: mid-turn (Claude Code's interrupt messages, Codex's ``turn_aborted`` events): ``pc.flags`` reads it
#: (``interrupted``). One name for every reader and the flag.
INTERRUPTED = "interrupted"

UNPARSED = object()  # the value of a JSON Lines line that parse_source(lazy=True) left for the caller to parse


def parse_line(raw: bytes, document_id: str | None, line: int | None) -> tuple[Any, bool]:
    """``(value or FormatError, may hold a big integer)`` of one JSON Lines line, as ``parse_source`` parses it.

    >>> parse_line(b'{"a": 1}', "f.jsonl", 3)
    ({'a': 1}, False)
    """
    refused = too_long(raw, document_id, line)  # a line the splitter did not keep (beyond max_record_size)
    if refused is not None:
        return refused, False
    big = may_hold_big_int(raw)
    try:
        return loads(raw, document_id=document_id, line=line, scan=big), big
    except FormatError as exc:
        # Kept by the caller (a bad line's record): without its traceback, whose frames would hold the parser's
        # locals for as long as the record lives.
        return exc.with_traceback(None), big


#: What a file's first non-blank line says about the file (``first_line_kind``).
LineKind = Literal["row", "scalar", "broken", "open"]


def first_line_kind(raw: bytes) -> LineKind:
    """What the first non-blank line of a file is, by itself: ``"row"`` (a complete JSON object or array),
    ``"scalar"`` (a complete JSON scalar), ``"broken"`` (not JSON, broken before its end) or ``"open"`` (JSON
    that stops at the line's end: the first line of a pretty-printed value, or a JSON Lines line cut short).
    orjson alone decides (structure only); the reader then parses strictly.

    >>> [first_line_kind(r) for r in (b'{"a": 1}', b"42", b"{x", b'{"a":')]
    ['row', 'scalar', 'broken', 'open']
    """
    if isinstance(raw, Oversized):
        return "broken"  # not kept: what follows decides, as for a broken line
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        return "broken" if exc.pos < len(raw) and exc.msg != "unexpected end of data" else "open"
    return "row" if isinstance(value, (dict, list)) else "scalar"


def starts_json_lines(head: list[bytes]) -> bool:
    """THE rule "this file is JSON Lines, decided from its first lines": its first non-blank line is, by itself,
    a JSON object or array, and a second non-blank line follows (``head``: the first non-blank lines, complete).
    Then the file is read line by line as it streams (``parse_source``) and may be split at line boundaries
    (``loading.split``); a file that is one JSON value (an array, an envelope, a pretty-printed document) has
    no such first line. Files that start otherwise are decided from more of their text (``parse_source``).

    >>> starts_json_lines([b'{"a": 1}', b'[2]']), starts_json_lines([b'{"a": 1}']), starts_json_lines([b"[", b"1]"])
    (True, False, False)
    """
    return len(head) >= 2 and first_line_kind(head[0]) == "row"


def parse_source(src: Source, document_id: str | None, *, lazy: bool = False) -> tuple[bool, Any]:
    """``parse_file`` on a stream, deciding from the file's first lines, with the same outcome as on the whole
    text: ``(True, value)`` (then ``src.text`` is the whole text), or ``(False, lines)`` where each line is
    ``(index, line, offset, raw, value or FormatError, may hold a big integer)`` (``StreamLine``), parsed only
    when the iterator reaches it — or, with ``lazy``, not at all: the value is ``UNPARSED`` and the caller
    parses the lines it needs (``parse_line``).

    - the first non-blank line is, by itself, a JSON value and the only one: the file is that value;
    - it is a JSON object or array and a second non-blank line follows: JSON Lines, streamed — a whole text
      whose first line is a complete value followed by more is not one JSON value;
    - it is a scalar followed by more, or it is broken before its end (orjson stops inside the line, so the
      whole text fails there too): JSON Lines when some line is an object or array — the lines up to the first
      one are held meanwhile — else the whole-file error;
    - it stops at its end (a pretty-printed document's first line): the whole text is read and parsed as
      ``parse_file`` does. A JSON Lines file whose first line is cut short is read whole too.
    """
    head = src.first_lines(2)
    if not head:
        text = src.read_all()
        return True, loads(text, document_id=document_id)  # raises the error of a blank file
    raw = head[0][2]
    if starts_json_lines([line[2] for line in head]):
        return False, _stream_lines(src, document_id, lazy)
    kind = first_line_kind(raw)
    parsed = kind in ("row", "scalar")
    if kind == "open" or (parsed and len(head) == 1):
        return _parse_text(src, document_id, raw if parsed else None)
    if kind != "row":
        # Held until a line that is an object or array says it is JSON Lines (or the end, that it is not).
        line = head[-1]
        while first_line_kind(line[2]) != "row":
            line = src.peek_more()
            if line is None:
                return _parse_text(src, document_id, None)
    return False, _stream_lines(src, document_id, lazy)


def _parse_text(src: Source, document_id: str | None, line: bytes | None) -> tuple[bool, Any]:
    """The whole text read and parsed as ``parse_file`` does (``line``: the only non-blank line, parsed whole
    when the file's leading whitespace was too long to keep)."""
    text = src.read_all()
    if line is not None and src.trimmed:
        return True, loads(line, document_id=document_id)
    whole, parsed = parse_file(text, document_id)
    if whole:
        return True, parsed
    big = may_hold_big_int(text)
    starts, at = [], src.skipped  # each physical line's offset in the stream (a dropped byte-order mark counts)
    for piece in text.split(b"\n"):
        starts.append(at)
        at += len(piece) + 1
    return False, ((i, n, starts[n - 1], r, v, big) for i, n, r, v in parsed)


def _stream_lines(src: Source, document_id: str | None, lazy: bool = False) -> Iterator[StreamLine]:
    for index, (number, offset, raw) in enumerate(src.lines()):
        if lazy:
            yield index, number, offset, raw, UNPARSED, False
        else:
            yield index, number, offset, raw, *parse_line(raw, document_id, number)
