"""The format registry and the hub API: every conversion goes through Storyline (RFC-0001, "Hub-only").

Each format satisfies the contract ``base.Format`` (``decode``/``iter_records``, ``encode``, ``sniff``, and what
its writer produces). Format modules take bytes or text, never paths: I/O belongs to the callers (the CLI, the
datasets builder). ``register(module)`` adds a format at run time; every entry point then knows it.

>>> doc = '{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}'
>>> [s["session"] for s in into_storyline("storyline", doc)]
['s']
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from itertools import islice
from typing import Any

import orjson

from ..compression import MAX_DECOMPRESSED_SIZE, iter_decompressed
from ..errors import FormatError, NoConversationError, PchronicleError
from ..jsonio import json_type, short, wide_text
from . import (
    atif,
    chat,
    claude_code,
    cline,
    codex,
    copilot_cli,
    cursor,
    gemini_cli,
    goose,
    kimi_cli,
    kimi_code,
    mini_swe_agent,
    openai_msg,
    opencode,
    openhands,
    openhands_sdk,
    pi,
    qwen_code,
    role_text,
    sharegpt,
    storyline_file,
    swe_agent,
)
from .base import CAPABILITIES, Format, Record, as_bytes, documents, first_value, first_values, parse_file
from .database import SQLITE_MAGIC, OpenDatabase, is_database, names_database, opened, table_names, table_sets
from .source import BOM, MAX_RECORD_SIZE, Oversized, Source, file_chunks, utf8

__all__ = [
    "capability",
    "convert",
    "describe",
    "detect",
    "format_names",
    "formats",
    "from_storyline",
    "get_format",
    "into_storyline",
    "iter_records",
    "register",
    "unregister",
]

# name → format; aliases map to the canonical name. Adding a format is one folder and one line here (or a call to
# register() from user code).
_FORMATS: dict[str, Format] = {}
_ALIASES: dict[str, str] = {}

#: Detection looks at up to this many of a file's first records (``detect``).
DETECT_RECORDS = 64
#: A file whose format is not recognised is one bad record; its bytes are kept in it up to this size.
WHOLE_FILE_RECORD_LIMIT = 1 << 20

_REQUIRED = ("NAME", "ALIASES", "EXTENSION", "OUTPUT", "PER_DOCUMENT", "sniff", "iter_records", "decode", "encode")


def register(module: Any) -> Any:
    """Add a format (a module or any object satisfying ``base.Format``) to every entry point: ``load_dataset(
    "pchronicle", NAME)``, ``"auto"`` detection, ``into_storyline``/``from_storyline``/``convert`` and the CLI.

    Registering the same object again is a no-op; a name or alias already taken by another format is refused.
    Returns the module, so it can be used as a decorator on a class.
    """
    missing = [name for name in _REQUIRED if not hasattr(module, name)]
    if missing:
        raise TypeError(f"a format needs {', '.join(missing)} (see pchronicle_datasets.formats.base.Format)")
    if module.OUTPUT not in ("file", "folder"):
        raise TypeError(f"a format's OUTPUT is 'file' or 'folder', got {module.OUTPUT!r}")
    if module.OUTPUT == "folder" and not hasattr(module, "encode_folder"):
        raise TypeError("a format whose OUTPUT is 'folder' needs encode_folder(stories) -> {file name: text}")
    _check_capabilities(module)
    if _FORMATS.get(module.NAME) is module:
        return module
    names = [module.NAME, *module.ALIASES]
    taken = [n for n in names if n in _FORMATS or n in _ALIASES or n == "auto"]
    if taken:
        raise ValueError(f"format name(s) already registered: {', '.join(taken)}")
    _FORMATS[module.NAME] = module
    for alias in module.ALIASES:
        _ALIASES[alias] = module.NAME
    return module


def _check_capabilities(module: Any) -> None:
    """A format that declares an optional capability (the first member of ``base.CAPABILITIES``) has all of it."""
    for name, (protocol, members) in CAPABILITIES.items():
        if not hasattr(module, members[0]):
            continue
        missing = [m for m in members if not hasattr(module, m)]
        if missing:
            raise TypeError(
                f"a format with {members[0]} ({name}) needs {', '.join(missing)} too (see base.{protocol.__name__})"
            )
        for member in members:
            value = getattr(module, member)
            if member == "KEYS":
                if not (isinstance(value, (tuple, list, frozenset)) and all(isinstance(k, str) for k in value)):
                    raise TypeError(f"a format's KEYS is the keys its records are known by (strings), got {value!r}")
            elif member == "DATABASE_TABLES":
                sets = value if isinstance(value, tuple) and value else (value,)
                if not all(isinstance(v, frozenset) and v and all(isinstance(t, str) for t in v) for v in sets):
                    raise TypeError(
                        f"a format's DATABASE_TABLES is a frozenset of table names (or a tuple of them), got {value!r}"
                    )
            elif member == "INDEX_FILES":
                if not (isinstance(value, dict) and all(isinstance(x, str) for kv in value.items() for x in kv)):
                    raise TypeError(f"a format's INDEX_FILES maps file names to what each is (strings), got {value!r}")
            elif member.isupper() and member not in ("HINTS", "DOCUMENT_SUFFIX") and not isinstance(value, bool):
                raise TypeError(f"a format's {member} is True or False, got {value!r}")
            if member == "DOCUMENT_SUFFIX" and not (isinstance(value, str) and value.startswith(".")):
                raise TypeError(f"a format's DOCUMENT_SUFFIX is a file name ending such as '.jsonl', got {value!r}")
            if member == "HINTS" and not (isinstance(value, str) and value):
                raise TypeError(f"a format's HINTS is the /meta key of its export hints (a string), got {value!r}")
            if member.islower() and not callable(value):
                raise TypeError(f"a format's {member} is a function (see base.{protocol.__name__})")


def capability(fmt: Format | str, name: str) -> Any:
    """The format ``fmt`` (a format or its name) when it has the optional capability ``name`` (a key of
    ``base.CAPABILITIES``: ``"splittable"``, ``"line_reader"``, ``"folder_writer"``, ``"batched_writer"``,
    ``"streaming_writer"``, ``"hints"``, ``"regrouping"``, ``"keys"``, ``"sidecars"``, ``"document_suffix"``,
    ``"index_files"``, ``"members"``, ``"database"``), typed as that capability's protocol; else None. The one
    place that looks for a format's optional members: ``register`` has checked that a format declaring one has
    all of it.

    >>> capability("openai-msg", "splittable").NAME, capability("chat", "splittable")
    ('openai-msg', None)
    >>> capability("sharegpt", "folder_writer").encode_folder([])
    {'trajectory_samples.jsonl': '', 'failed_trajectories.jsonl': ''}
    """
    if name not in CAPABILITIES:
        raise ValueError(f"unknown capability {name!r}; known: {', '.join(CAPABILITIES)}")
    module = get_format(fmt) if isinstance(fmt, str) else fmt
    first = CAPABILITIES[name][1][0]
    value = getattr(module, first, None)
    if value is None or value is False:
        return None
    return module


def unregister(name: str) -> None:
    """Remove a format registered with ``register`` (by its name or an alias), for plug-ins that are loaded for a
    while (a test, a notebook). The built-in formats cannot be removed."""
    module = get_format(name)
    if module in _BUILTIN:
        raise ValueError(f"{module.NAME} is a built-in format")
    del _FORMATS[module.NAME]
    for alias in module.ALIASES:
        _ALIASES.pop(alias, None)


_BUILTIN = (
    storyline_file,
    openai_msg,
    sharegpt,
    chat,
    atif,
    claude_code,
    swe_agent,
    mini_swe_agent,
    openhands,
    openhands_sdk,
    role_text,
    gemini_cli,
    opencode,
    copilot_cli,
    cursor,
    codex,
    pi,
    cline,
    qwen_code,
    kimi_cli,
    goose,
    kimi_code,
)
for _module in _BUILTIN:
    register(_module)


def formats() -> list[Format]:
    """The registered formats, in registration order."""
    return list(_FORMATS.values())


def format_names() -> list[str]:
    """Canonical format names and aliases, sorted."""
    return sorted({*_FORMATS, *_ALIASES})


def get_format(name: str) -> Format:
    """The format ``name`` (or alias); ``ValueError`` listing the known names otherwise."""
    canonical = _ALIASES.get(name, name)
    module = _FORMATS.get(canonical) if isinstance(canonical, str) else None
    if module is None:
        raise ValueError(f"unknown format {name!r}; known formats: {', '.join(format_names())}")
    return module


def describe(sample: Any) -> str:
    """What a file looks like, for a message: its top-level type, first keys and ``schema_version``.

    >>> describe({"schema_version": "ATIF-v1.5", "session_id": "x", "steps": []})
    'a JSON object with keys schema_version, session_id, steps; schema_version "ATIF-v1.5"'
    """
    if sample is None:
        return "no JSON object or array"
    if isinstance(sample, list):
        first = sample[0] if sample else None
        inner = f" whose first element is {describe(first)}" if isinstance(first, (dict, list)) else ""
        return f"a JSON array of {len(sample)} element(s){inner}"
    if isinstance(sample, dict):
        keys = list(sample)
        text = "a JSON object with keys " + ", ".join(keys[:8]) + (", …" if len(keys) > 8 else "")
        if not keys:
            text = "an empty JSON object"
        if "schema_version" in sample:
            text += f"; schema_version {short(sample['schema_version'], 40)}"
        return text
    return f"a JSON {json_type(sample)}"


#: Detection that recognises nothing tries every reader on the file to say which one reads it, up to this size.
READ_TRIAL_LIMIT = 16 << 20


def _trials(data: bytes | Source) -> dict[str, PchronicleError | None] | None:
    """Each format's reader tried on the whole of ``data``: None for a reader that reads every record (at least
    one), else its first refusal; None when the file is too big to try (a ``Source`` is read at most that far,
    and replays from its start after)."""
    data = data.whole_if_small(READ_TRIAL_LIMIT) if isinstance(data, Source) else data
    if data is None or len(data) > READ_TRIAL_LIMIT:
        return None
    trials: dict[str, PchronicleError | None] = {}
    unreadable: FormatError | None = None
    try:  # every built-in reader reads JSON or JSON Lines: a file that is neither is refused by each alike
        parse_file(as_bytes(data), None)
    except FormatError as exc:
        unreadable = exc
    first = first_value(as_bytes(data))
    if unreadable is None and (isinstance(first, list) and first and not isinstance(first[0], (dict, list))):
        # An array of scalars is no record of any built-in format (each reads objects): not worth a reading each
        unreadable = FormatError(f"its first record is {describe(first)} of scalars, which no built-in format holds")
    for module in _FORMATS.values():
        if unreadable is not None and module in _BUILTIN:
            trials[module.NAME] = unreadable
            continue
        error: Any = None
        read = False
        try:
            for rec in module.iter_records(data, None):
                read = True
                if rec.error is not None:  # its first refusal is all the message needs
                    error = rec.error
                    break
        except Exception:  # a reader that raises on data it does not know: it does not read the file
            continue
        if error is None and read:
            trials[module.NAME] = None
        elif isinstance(error, PchronicleError):
            trials[module.NAME] = error
    return trials


def _sample_keys(sample: Any) -> set[str]:
    """The keys a record is known by: its own (of its first element, for an array), and those of the first
    element of each array it holds (a message's ``role``, a step's ``action``)."""
    if isinstance(sample, list):
        sample = sample[0] if sample else None
    if not isinstance(sample, dict):
        return set()
    keys = set(sample)
    for value in sample.values():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            keys.update(value[0])
    return keys


def _closest(sample: Any) -> tuple[str, list[str]] | None:
    """The format whose ``KEYS`` (the optional ``keys`` capability) the record shares most of — at least two —
    and the shared keys; None when no format shares two."""
    keys = _sample_keys(sample)
    best: tuple[int, float, str, list[str]] | None = None
    for module in _FORMATS.values():
        keyed = capability(module, "keys")
        known = tuple(keyed.KEYS) if keyed is not None else ()
        shared = [k for k in known if k in keys]
        score = (len(shared), len(shared) / max(1, len(known)))
        if len(shared) >= 2 and (best is None or score > best[:2]):
            best = (*score, module.NAME, shared)
    return None if best is None else (best[2], best[3])


def _how(name: str) -> str:
    """The command and the option that read a file as ``name``."""
    return f'--from {name} (load_dataset("pchronicle", "{name}"))'


def detect(data: bytes | Source, document_id: str | None = None) -> Format:
    """The format of a file from its (decompressed) content, by the structure of its records
    (``base.first_values``): the first of its first ``DETECT_RECORDS`` records that some format claims decides,
    so a bad or uninformative first record (a broken row, an empty conversation ``[]``) does not hide the
    format of the rest; the reader then refuses that record on its own. ``FormatError`` saying what the file
    looks like when no format claims any of them, or when more than one claims the deciding record. A ``Source``
    is only peeked at (its first lines), unless its first line is no record (a pretty-printed file, read whole).
    A SQLite database (its first 16 bytes) is read whole and named by its tables (``database_format``).

    >>> detect(b'{"note": "not a row"}\\n{"session_id": "s", "step_id": 1, "messages": []}\\n').NAME
    'openai-msg'

    When none is claimed, the message also names the ``--from`` whose reader reads the whole file, or says none
    does:

    >>> detect(b'{"history": []}', "x.json")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pchronicle_datasets.errors.FormatError: (root): the format of this file is not recognised: it holds a JSON \
object with keys history; no format reads it (tried atif, chat, ...) in x.json

    When a format shares keys with the file, the message names the closest one, what its reader says, and the
    option that reads it once that is fixed:

    >>> atif_2 = b'{"schema_version": "2.0", "session_id": "s", "agent": {"name": "a"}, "steps": []}'
    >>> detect(atif_2)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pchronicle_datasets.errors.FormatError: (root): the format of this file is not recognised: it holds a JSON \
object with keys schema_version, session_id, agent, steps; schema_version "2.0"; the closest format is atif (it \
shares the keys schema_version, session_id, agent, steps), whose reader says /schema_version: not an ATIF 1.x \
schema_version: '2.0' (expected 'ATIF-v1.N' or '1.N'; other versions are refused); once that is fixed, read it \
with --from atif (load_dataset("pchronicle", "atif")) (tried atif, chat, ...)
    """
    # A SQLite database: named by its tables (database_format), its bytes read whole.
    head = data.head(len(SQLITE_MAGIC)) if isinstance(data, Source) else data[: len(SQLITE_MAGIC)]
    if isinstance(head, (bytes, bytearray, memoryview)) and is_database(head):  # (text never is)
        raw = data.read_all() if isinstance(data, Source) else bytes(data)
        return database_format("auto", _tables(raw, document_id), document_id)
    first: Any = None
    looked = 0
    matches: list[Format] = []
    beyond = False  # whether the file has records past the ones detection looks at
    for looked, sample in enumerate(islice(_samples(data), DETECT_RECORDS + 1), 1):
        if looked > DETECT_RECORDS:
            beyond, looked = True, DETECT_RECORDS
            break
        first = sample if looked == 1 else first
        matches = [m for m in _FORMATS.values() if m.sniff(sample)]
        if matches:
            break

    if len(matches) == 1:
        return matches[0]
    tried = ", ".join(sorted(_FORMATS))
    if not matches:
        more = f" (nor any of the {looked - 1} record(s) after it)" if looked > 1 else ""
        if beyond:  # what was tried, not what the file holds
            more = (
                f" (nor any of the {looked - 1} record(s) after it that detection looked at: it looks at a file's "
                f"first {DETECT_RECORDS} records, and this one has more)"
            )
        if first is None and (wide := wide_text(head)):
            raise FormatError(f"the format of this file is not recognised: {wide}", document_id=document_id)
        trials = _trials(data)
        close = _closest(first)
        if trials is None:
            verdict = f"it is too big to try every reader ({tried}): name the format with --from"
            if close is not None:
                verdict += f"; it looks closest to {close[0]} (keys {', '.join(close[1])}): {_how(close[0])}"
        elif any(err is None for err in trials.values()):
            readers = [name for name, err in trials.items() if err is None]
            verdict = f"read it with {' or '.join(map(_how, readers))} (detection claims it for none: {tried})"
        elif close is not None and isinstance(trials.get(close[0]), PchronicleError):
            err = trials[close[0]]
            where = getattr(err, "pointer", "") or "(root)"
            verdict = (
                f"the closest format is {close[0]} (it shares the keys {', '.join(close[1])}), whose reader says "
                f"{where}: {err.reason}; once that is fixed, read it with {_how(close[0])} (tried {tried})"
            )
        else:
            verdict = f"no format reads it (tried {tried})"
        raise FormatError(
            f"the format of this file is not recognised: it holds {describe(first)}{more}; {verdict}",
            document_id=document_id,
        )
    names = ", ".join(sorted(m.NAME for m in matches))
    where = f"its record {looked}" if looked > 1 else "its first record"
    raise FormatError(
        f"the format of this file is ambiguous: {where} looks like {names} (tried {tried}); name the format "
        "instead of auto",
        document_id=document_id,
    )


def _samples(data: bytes | Source) -> Iterator[Any]:
    """The parsed records detection looks at (``base.first_values``); of a ``Source``, its first lines, peeked,
    unless the first is no record (a pretty-printed file: then read whole, as its reader will anyway)."""
    if not isinstance(data, Source):
        yield from first_values(data)
        return
    head = data.first_lines(DETECT_RECORDS + 1)  # one more: whether the file goes on past what detection looks at
    # A line beyond max_record_size was not kept: the lines after it decide (the reader refuses it on its own).
    head = [line for line in head if not isinstance(line[2], Oversized)] if len(head) > 1 else head
    if head and isinstance(first_value(head[0][2]), (dict, list)):
        yield from first_values(b"\n".join(raw for *_, raw in head))
        return
    yield from first_values(data.read_all())


def iter_records(
    fmt: str,
    data: Any,
    document_id: str | None = None,
    *,
    max_size: int = MAX_DECOMPRESSED_SIZE,
    sidecar: bytes | None = None,
    max_record_size: int = MAX_RECORD_SIZE,
) -> Iterator[Record]:
    """Every record of one source file, each with its document or the error that refused it, in file order.

    ``data`` is the file's text or bytes, a binary file object or an iterable of byte chunks; it is read as
    a stream, so memory holds the records being made, not the file (see ``source.Source``). It may be gzip
    (several members too), zstd, bzip2 or xz compressed, decompressed as it is read; compressed data cut short
    gives the records of its complete lines, then one error record naming the byte offset of the cut; more
    than ``max_size`` decompressed bytes (``compression.MAX_DECOMPRESSED_SIZE`` by default) end the file with
    one ``DecompressionLimitError`` record naming the limit, before memory grows; a record larger than
    ``max_record_size`` (``source.MAX_RECORD_SIZE``, 512 MiB, by default: a line, or a file that is one JSON
    value) is one ``RecordTooLargeError`` record naming the file, the line and the limit, its text never held
    (``source.Source``). ``fmt`` may be ``"auto"``:
    the format is detected from the content (``detect``). ``sidecar``: the bytes of the file's sidecar
    (``sidecars.py``), given to a reader that takes one; of a SQLite database, its write-ahead log (``-wal``).

    A SQLite database (its first 16 bytes, ``database.is_database``) is read whole and given to the format whose
    ``DATABASE_TABLES`` it has (``_database_records``), never cut into lines."""
    if isinstance(data, Mapping) or not (
        isinstance(data, (str, bytes, bytearray, memoryview, Iterable)) or hasattr(data, "read")
    ):
        raise TypeError(f"a reader takes the file's text, bytes, binary file or byte chunks, got {type(data).__name__}")
    try:
        chunks = iter_decompressed(_raw_chunks(data, document_id), document_id=document_id, max_size=max_size)
        src = Source(chunks, document_id, max_record_size)
        blank = src.is_blank()
    except FormatError as exc:
        yield Record(None, b"", error=exc)
        return
    if not blank and is_database(src.head(len(SQLITE_MAGIC))):
        yield from _database_records(fmt, src, document_id, sidecar)
        return
    if not blank:
        try:
            module = detect(src, document_id) if fmt == "auto" else get_format(fmt)
        except FormatError as exc:
            # One bad record for the file; its bytes go with it only when small: an undetected 1 GB file must not
            # become a 1 GB quarantine entry (nor be read whole).
            yield Record(None, src.whole_if_small(WHOLE_FILE_RECORD_LIMIT) or b"", error=exc)
            return
        yield from _diagnosed(module, src, document_id, named=fmt != "auto", sidecar=sidecar)
    else:
        src.read_all()  # to its end: a stream cut short says so even when nothing before the cut is a line
    if src.error is not None:
        # The cut (or a corrupt tail, or the size limit): one bad record holding the incomplete last line's bytes.
        yield Record(src.error.line, src.cut, error=src.error)


def database_format(fmt: str, tables: frozenset[str], document_id: str | None = None) -> Format:
    """The format that reads a SQLite database with ``tables``: ``fmt`` when it reads databases, else (``"auto"``)
    the one format whose ``DATABASE_TABLES`` are all among them. A database no format reads, or one the named format
    does not read, is a ``NoConversationError`` (a folder load leaves it out and names it) saying what it is and what
    to do; one claimed by several formats is a ``FormatError``.

    >>> database_format("auto", frozenset({"session", "message", "part", "todo"})).NAME
    'opencode'
    >>> database_format("auto", frozenset({"orders"}), "shop.db")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    pchronicle_datasets.errors.NoConversationError: (root): a SQLite database (tables orders) that holds no \
sessions any format reads (databases are read by ...opencode: tables message, part, session...): not read; if a \
harness wrote it, name its format with --from, or ask for a reader in shop.db
    """
    readers = {m.NAME: m for m in _FORMATS.values() if capability(m, "database") is not None}
    claims = [m for m in readers.values() if names_database(m.DATABASE_TABLES, tables)]
    what = f"a SQLite database (tables {', '.join(sorted(tables)[:12])}{', …' if len(tables) > 12 else ''})"
    known = "; ".join(
        f"{name}: tables {' or '.join(', '.join(sorted(one)) for one in table_sets(m.DATABASE_TABLES))}"
        for name, m in readers.items()
    )
    if fmt != "auto":
        module = get_format(fmt)
        if module.NAME in readers:
            return module
        hint = f": read it with --from {claims[0].NAME}" if len(claims) == 1 else ""
        raise NoConversationError(
            f"{what}, which {module.NAME} does not read (it reads no database){hint}", document_id=document_id
        )
    if len(claims) == 1:
        return claims[0]
    if not claims:
        raise NoConversationError(
            f"{what} that holds no sessions any format reads (databases are read by {known or 'no format'}): "
            "not read; if a harness wrote it, name its format with --from, or ask for a reader",
            document_id=document_id,
        )
    names = ", ".join(sorted(m.NAME for m in claims))
    raise FormatError(f"{what}: its tables fit {names}; name the format instead of auto", document_id=document_id)


def _tables(data: bytes, document_id: str | None, wal: bytes | None = None) -> frozenset[str]:
    """The tables of a database (read from a copy: ``database.opened``; a damaged one is a ``FormatError``)."""
    with opened(data, document_id, wal) as con:
        return table_names(con)


def _database_records(fmt: str, src: Source, document_id: str | None, wal: bytes | None) -> Iterator[Record]:
    """The records of a SQLite database: read whole (``max_record_size`` bounds it, and says how to raise it),
    opened once from a copy with the write-ahead log beside the file (``database.opened``), its format named by its
    tables, and that format's reader given the open database (``database.OpenDatabase``). The database's bytes never
    go to a quarantine entry: an error names the file."""
    try:
        data = src.read_all()
        if src.error is not None:  # compressed and cut short: the database is incomplete
            raise src.error
        with opened(data, document_id, wal) as con:
            del data  # written to the copy: not held while the sessions are read
            module = database_format(fmt, table_names(con), document_id)
            yield from module.iter_records(OpenDatabase(con), document_id)
    except FormatError as exc:  # the file, its format, or a read the reader did not catch (database.opened says)
        yield Record(None, b"", error=exc.with_context(document_id=document_id))


def _pretty_whole(text: bytes) -> bool:
    """Whether the file is one JSON value spread over several lines (a pretty-printed file): no line of it is
    a record, so an error's line number would be a guess."""
    if b"\n" not in text.strip():
        return False
    try:
        orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return True


def _head(src: Source) -> bytes:
    """The first ``DETECT_RECORDS`` lines of a file not yet read (peeked, not consumed)."""
    return b"\n".join(raw for *_, raw in src.first_lines(DETECT_RECORDS))


def _diagnosed(
    module: Format, src: Source, document_id: str | None, *, named: bool, sidecar: bytes | None = None
) -> Iterator[Record]:
    """The records of ``module``'s reader, their errors made to say what the user can act on: an error of a
    pretty-printed whole file names its pointer and no line; when the format was named (``--from``) and its
    reader refuses the first record of a file that detection gives to another format, the error says which."""
    head = _head(src) if named else b""  # peeked before the reader starts: the stream is read once
    pretty: bool | None = None
    first = True
    more = {"sidecar": sidecar} if sidecar is not None and capability(module, "sidecars") is not None else {}
    for rec in module.iter_records(src, document_id, **more):
        err = rec.error
        if err is not None and isinstance(err, PchronicleError):
            if pretty is None:
                pretty = bool(src.text) and _pretty_whole(src.text)  # the text of a file read whole
            reason, line = err.reason, err.line
            if pretty:
                line = None
            if first and named:
                reason += _other_format(module, src.text or head)
            if (reason, line) != (err.reason, err.line):
                err = type(err)(reason, pointer=err.pointer, document_id=err.document_id, line=line)
                rec = replace(rec, error=err, line=None if pretty else rec.line)
        first = False
        yield rec


def _other_format(module: Format, text: bytes) -> str:
    if not text:
        return ""
    try:
        other = detect(text)
    except FormatError:
        return ""
    if other is module:
        return ""
    return f"; this file looks like {other.NAME} ({describe(first_value(text))}): read it with --from {other.NAME}"


def _raw_chunks(data: Any, document_id: str | None) -> Iterator[bytes]:
    """The (compressed or plain) bytes of ``data`` in chunks, without a leading UTF-8 byte-order mark."""
    if isinstance(data, str):
        data = utf8(data, document_id)
    if isinstance(data, (bytes, bytearray, memoryview)):
        chunks: Iterator[bytes] = iter([bytes(data)])
    elif hasattr(data, "read"):
        chunks = file_chunks(data)
    else:
        chunks = (_chunk(c) for c in data)
    first = next(chunks, b"")
    yield first[len(BOM) :] if first.startswith(BOM) else first
    yield from chunks


def _chunk(c: Any) -> bytes:
    if not isinstance(c, (bytes, bytearray, memoryview)):
        raise TypeError(f"byte chunks are bytes, got {type(c).__name__}")
    return bytes(c)


def into_storyline(
    fmt: str,
    data: Any,
    *,
    document_id: str | None = None,
    max_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
) -> list[dict[str, Any]]:
    """Decode ``data`` (the text or bytes of one source file, a binary file object or byte chunks) into valid
    Storyline documents.

    ``document_id`` names the source (usually its relative path) in errors and in ``/origin``; ``data``
    may be compressed (gzip, zstd, bzip2, xz; at most ``max_size`` bytes decompressed); no record may be larger
    than ``max_record_size`` bytes; ``fmt`` may be ``"auto"``. Raises ``FormatError`` or ``StorylineError`` with
    the pointer of the first problem.
    """
    if fmt != "auto":
        get_format(fmt)  # an unknown name fails before any data is read
    return documents(iter_records(fmt, data, document_id, max_size=max_size, max_record_size=max_record_size))


def from_storyline(fmt: str, stories: Mapping[str, Any] | Iterable[Mapping[str, Any]], **options: Any) -> str:
    """Encode one Storyline document or several into format ``fmt``'s text (``options``: the format's own)."""
    if isinstance(stories, Mapping):
        stories = [stories]
    return get_format(fmt).encode(list(stories), **options)


def convert(src: str, dst: str, data: str | bytes, *, document_id: str | None = None) -> str:
    """``from_storyline(dst, into_storyline(src, data))``: never a shortcut between two outer formats."""
    encoder = get_format(dst)  # fail on an unknown target before decoding anything
    return encoder.encode(into_storyline(src, data, document_id=document_id))
