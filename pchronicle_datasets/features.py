"""The dataset schema: one row per Storyline document.

``STORYLINE_FEATURES`` has a column for every RFC-0001 field. Typed fields (strings, integers, booleans)
are typed columns; every value the RFC types ``any`` (``msg``, ``args``, ``result``, ``metrics``,
``extra``, ``meta``, ``unknown_fields``…) and the two objects whose null/empty spellings the RFC treats
as absent (``task``, ``turns[].env``) are **JSON text** written by orjson in a string column. That is the
only encoding that keeps every JSON value exact through Arrow, Parquet and streaming: the string ``"42"``
is the text ``"\\"42\\""``, JSON null is the text ``null`` while an absent field is an Arrow null, and
floats keep every digit. A time is kept as given: a string time is stored as the string, a numeric time as
its JSON text (a valid RFC 3339 string never looks like a number, so ``row_to_story`` can tell them apart).

Derived columns for filtering follow the document columns and are ignored by ``row_to_story``:
``num_turns``, ``num_tool_calls``, ``num_copied_turns``, ``has_reasoning`` and ``tool_stats``.

>>> story = {"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "42"}, {"id": 2, "src": "agent", "msg": None}]}
>>> row = story_to_row(story)
>>> row["turns"][0]["msg"], row["turns"][1]["msg"]
('"42"', 'null')
>>> row_to_story(row) == story
True
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
import pyarrow as pa
from datasets import Features, List, Value

from . import schema
from .errors import FormatError
from .jsonio import dumps_text, loads
from .linking import tool_outcomes, tool_outcomes_by_id
from .schema import validate

__all__ = [
    "STORYLINE_FEATURES",
    "compute_tool_stats",
    "derived_columns",
    "is_row",
    "row_to_story",
    "rows_to_table",
    "story_to_row",
]

# Column kinds. A list of (name, kind) pairs is a struct; ("list", pairs) a list of structs. Every field is
# typed once, in schema.py's table (``ROOT`` and the objects it holds); ``_kind`` says how each schema type is
# stored, so a field added to the schema gets its column here.
S, INT, B, J, T, SL = "string", "int64", "bool", "json", "time", "string-list"

_STORED = {
    schema.STR: S,
    schema.NESTR: S,
    schema.INT: INT,
    schema.POSINT: INT,
    schema.BOOL: B,
    schema.ANY: J,
    schema.TIME: T,
    schema.NUM: J,
    schema.STRLIST: SL,
    schema.JSONOBJ: J,
}


def _kind(typ: Any) -> Any:
    """How a value of schema type ``typ`` is stored: an object as a struct of its fields, in the schema's order
    (a lenient object — ``task``, ``turns[].env``, whose null/empty spellings the RFC treats as absent — as
    JSON text instead), an array of objects as a list of structs, anything else by ``_STORED``."""
    if isinstance(typ, schema.Obj):
        return J if typ.lenient else _columns(typ)
    if isinstance(typ, tuple):
        return ("list", _kind(typ[1]))
    return _STORED[typ]


def _columns(obj: Any, order: Iterable[str] | None = None) -> list[tuple[str, Any]]:
    return [(name, _kind(obj.fields[name][0])) for name in (order or obj.fields)]


_TURN = _columns(schema.TURN)
# The document's columns in the dataset's own order (the schema lists required fields first): changing it
# changes every Parquet file's schema.
_DOCUMENT = _columns(
    schema.ROOT,
    (
        "schema_version",
        "session",
        "run",
        "trajectory",
        "attempt_id",
        "notes",
        "continued_trajectory_ref",
        "origin",
        "agent",
        "parent",
        "children",
        "task",
        "prompt",
        "started_at",
        "finished_at",
        "final_metrics",
        "extra",
        "meta",
        "unknown_fields",
        "unknown_key_counts",
        "turns",
    ),
)
assert {name for name, _ in _DOCUMENT} == set(schema.ROOT.fields), "every document field has its column"
_DERIVED = {
    "num_turns": Value("int64"),
    "num_tool_calls": Value("int64"),
    "num_copied_turns": Value("int64"),
    "has_reasoning": Value("bool"),
    # A list of entries, never a struct keyed by tool names: such a struct changes with the tool set
    # and breaks concatenating corpora from different agent versions.
    "tool_stats": List(
        {"tool": Value("string"), "count": Value("int64"), "success": Value("int64"), "failure": Value("int64")}
    ),
}


def _feature(kind: Any) -> Any:
    if kind in (S, J, T):
        return Value("string")
    if kind == INT:
        return Value("int64")
    if kind == B:
        return Value("bool")
    if kind == SL:
        return List(Value("string"))
    if isinstance(kind, tuple):
        return List(_feature(kind[1]))
    return {name: _feature(k) for name, k in kind}


STORYLINE_FEATURES = Features({**{name: _feature(k) for name, k in _DOCUMENT}, **_DERIVED})
"""The ``datasets.Features`` of a Storyline dataset: document columns, then derived columns."""

_ARROW_SCHEMA = STORYLINE_FEATURES.arrow_schema
_ROW_TYPE = pa.struct(list(_ARROW_SCHEMA))  # a row as one Arrow struct: how rows_to_table builds its columns

# ------------------------------------------------------------------------------------- story → row


_AS_IS, _AS_JSON, _AS_TIME, _AS_LIST, _AS_STRUCT = range(5)


def _encoder(cols: list) -> dict[str, tuple[int, Any]]:
    """``cols`` as ``{name: (how, the encoder of its items or fields)}``: ``_encode`` walks an object's own keys
    (a turn has 5 of its 30 columns), looking each up here, instead of every column of the schema."""
    plan: dict[str, tuple[int, Any]] = {}
    for name, kind in cols:
        if kind is J:
            plan[name] = (_AS_JSON, None)
        elif kind is T:
            plan[name] = (_AS_TIME, None)
        elif type(kind) is tuple:
            plan[name] = (_AS_LIST, _encoder(kind[1]))
        elif type(kind) is list:
            plan[name] = (_AS_STRUCT, _encoder(kind))
        else:
            plan[name] = (_AS_IS, None)
    return plan


def _encode(obj: Mapping[str, Any], plan: dict[str, tuple[int, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in obj.items():
        step = plan.get(name)
        if step is None:
            continue  # no column (a validated document has none such); an absent one → Arrow null
        how, sub = step
        if how is _AS_IS:
            out[name] = value
        elif how is _AS_JSON:
            out[name] = dumps_text(value)
        elif how is _AS_TIME:
            out[name] = value if type(value) is str else dumps_text(value)
        elif how is _AS_LIST:
            out[name] = [_encode(item, sub) for item in value]
        else:
            out[name] = _encode(value, sub)
    return out


_DOCUMENT_ENCODER = _encoder(_DOCUMENT)


def story_to_row(story: Mapping[str, Any], *, check: bool = True) -> dict[str, Any]:
    """One dataset row (``STORYLINE_FEATURES``) for a Storyline document.

    ``check=False`` skips validation for documents already validated (the readers validate).
    Raises ``StorylineError`` for an invalid document.
    """
    if check:
        validate(story)
    row = _encode(story, _DOCUMENT_ENCODER)
    row.update(derived_columns(story))
    return row


def rows_to_table(rows: Iterable[Mapping[str, Any]]) -> pa.Table:
    """Arrow table of rows made by ``story_to_row``, built directly in Arrow (no per-value encoding)."""
    # One struct array split into columns: the same table as Table.from_pylist(rows, schema=…), a fifth faster for
    # one row (a session-log load builds a table per file), as fast for many (benchmarks/README.md, "Rows to
    # Arrow").
    table = pa.Table.from_struct_array(pa.array(list(rows), type=_ROW_TYPE))
    return table.replace_schema_metadata(_ARROW_SCHEMA.metadata)


# ------------------------------------------------------------------------------------- row → story

_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _decoder(kind: Any) -> Any:
    """How a column of ``kind`` is read back: a function of its (non-null) value, or None for a value kept as is."""
    if kind is J:
        return _decode_json
    if kind is T:
        return _decode_time
    if type(kind) is tuple:
        sub = _compile(kind[1])
        return lambda items: [_decode(item, sub) for item in items]
    if type(kind) is list:
        sub = _compile(kind)
        return lambda value: _decode(value, sub)
    return None


def _compile(cols: list) -> tuple[tuple[str, Any], ...]:
    """``cols`` with each kind replaced by its decoder, made once per column list: deciding the kind of every
    value of every row again cost a third of decoding a row."""
    return tuple((name, _decoder(kind)) for name, kind in cols)


def _decode_json(text: str) -> Any:
    """A JSON text column's value, exactly: ``jsonio.loads``, which refuses an integer beyond 64 bits (orjson alone
    reads it as a float). A JSON string (most messages) holds no number, so it is read without the scan."""
    if text[:1] == '"':
        return orjson.loads(text)
    return loads(text)


def _decode_time(value: str) -> Any:
    return orjson.loads(value) if _NUMBER.fullmatch(value) else value


def _decode(row: Mapping[str, Any], cols: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, decode in cols:
        value = row.get(name)
        if value is None:
            continue  # Arrow null: the field was absent
        out[name] = value if decode is None else decode(value)
    return out


# What the training map functions read of a row: decoding only this skips the JSON text they never look at
# (metrics, residual, meta…), which is most of a row's bytes for gateway captures.
def _pick(cols: list, names: list) -> list:
    """The columns ``names`` of ``cols`` (a name, or ``(name, names of its fields)``), in the order given."""
    kinds = dict(cols)
    out = []
    for entry in names:
        name, inner = entry if isinstance(entry, tuple) else (entry, None)
        kind = kinds[name]
        if inner is not None:
            kind = ("list", _pick(kind[1], inner)) if isinstance(kind, tuple) else _pick(kind, inner)
        out.append((name, kind))
    return out


_TRAINING_VIEW = _pick(
    _DOCUMENT,
    [
        "session",
        ("origin", ["format"]),
        ("agent", ["id", "model", "tools"]),
        (
            "turns",
            ["src", "msg", "reason", ("tool_calls", ["tcid", "fn", "args", "result"]), "observation", "copied", "kind"],
        ),
    ],
)


_TRAINING_DECODER = _compile(_TRAINING_VIEW)
_DOCUMENT_DECODER = _compile(_DOCUMENT)

_ROW_TURN_KEYS = frozenset(name for name, _ in _TURN)
_ROW_KEYS = frozenset(name for name, _ in _DOCUMENT)
_ROW_JSON_KEYS = tuple(name for name, kind in _DOCUMENT if kind is J)


def is_row(example: Mapping[str, Any]) -> bool:
    """A dataset row carries every document column (absent fields as None) and JSON text for ``any``."""
    if "num_turns" in example or "tool_stats" in example:
        return True
    if not example.keys() >= _ROW_KEYS:
        return False
    # A document that spells every optional field has every key too: in a row, JSON values are text.
    if any(not isinstance(example[name], (str, type(None))) for name in _ROW_JSON_KEYS):
        return False
    turns = example.get("turns") or []
    return bool(turns) and isinstance(turns[0], Mapping) and turns[0].keys() >= _ROW_TURN_KEYS


def locate_bad_row(row: Mapping[str, Any]) -> str:
    """The JSON Pointer (into the document) of the first column value of ``row`` that does not decode:
    JSON text that is not JSON, or a value of the wrong shape. ``""`` when none is found."""
    return _locate(row, _DOCUMENT, "") or ""


def _locate(row: Any, cols: list, pointer: str) -> str | None:
    if not isinstance(row, Mapping):
        return pointer
    for name, kind in cols:
        value = row.get(name)
        if value is None:
            continue
        here = f"{pointer}/{name}"
        if kind is J or kind is T:
            if not isinstance(value, str):
                return here
            if kind is J or _NUMBER.fullmatch(value):
                try:
                    loads(value)
                except FormatError as exc:  # not JSON (the column), or an integer beyond 64 bits (its place)
                    return here + exc.pointer
        elif type(kind) is tuple:
            if not isinstance(value, list):
                return here
            for i, item in enumerate(value):
                found = _locate(item, kind[1], f"{here}/{i}")
                if found is not None:
                    return found
        elif type(kind) is list:
            found = _locate(value, kind, here)
            if found is not None:
                return found
    return None


def training_view(row: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a row's document that ``to_sharegpt``/``to_messages`` read (not a whole document)."""
    return _decode(row, _TRAINING_DECODER)


def decode_columns(row: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    """The document fields ``names`` (top-level columns) of a row, decoded; absent (null) ones left out.

    >>> decode_columns({"meta": '{"a":1.0}', "unknown_fields": None}, ["meta", "unknown_fields"])
    {'meta': {'a': 1.0}}
    """
    wanted = set(names)
    return _decode(row, tuple((name, decode) for name, decode in _DOCUMENT_DECODER if name in wanted))


def row_to_story(row: Mapping[str, Any]) -> dict[str, Any]:
    """The Storyline document of a dataset row: Python objects, every JSON value exactly as written.

    Works on rows from ``story_to_row``, from a ``Dataset`` or ``IterableDataset`` of
    ``STORYLINE_FEATURES``, or read back from Parquet. Derived columns are ignored.

    >>> from datasets import Dataset
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...          "turns": [{"id": 1, "src": "agent", "msg": {"n": 1.0}, "ts": 1753872000}]}
    >>> ds = Dataset(rows_to_table([story_to_row(story)]))
    >>> row_to_story(ds[0]) == story
    True

    A row that does not decode (JSON text that is not JSON, an integer beyond 64 bits, which a float would
    change) is a ``FormatError`` with the pointer of the value:

    >>> row = story_to_row(story)
    >>> row["turns"][0]["msg"] = '{"n": 123456789012345678901234}'
    >>> try:
    ...     row_to_story(row)
    ... except FormatError as exc:
    ...     print(exc.pointer, "·", exc.reason[:76])
    /turns/0/msg/n · not a row of STORYLINE_FEATURES: integer 123456789012345678901234 is outside
    """
    try:
        return _decode(row, _DOCUMENT_DECODER)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise bad_row(row, exc) from None


def bad_row(row: Mapping[str, Any], exc: Exception) -> FormatError:
    """The ``FormatError`` for a row whose decoding raised ``exc``: its reason, at the pointer of the first value
    that does not decode (``locate_bad_row``)."""
    reason = exc.reason if isinstance(exc, FormatError) else str(exc)
    return FormatError(f"not a row of STORYLINE_FEATURES: {reason}", pointer=locate_bad_row(row))


# ---------------------------------------------------------------------------------- derived columns


#: The whitespace Python's ``json`` (and orjson) skip before a value, and the characters a value can start with
#: for ``json`` (orjson takes fewer: no NaN, Infinity): text starting with anything else is JSON to neither.
_JSON_SPACE = " \t\n\r"
_JSON_START = frozenset('{["-0123456789tfnNI')


def _result_failed(content: Any) -> bool:
    """The reference batch runner's rule for a failed tool result (hermes-agent ``_extract_tool_stats``).

    JSON content fails with a non-null ``error``, a ``content.error`` or ``"success": false``; text that
    is not JSON fails when empty or when it starts with ``error:`` (any case, after stripping).
    """
    parsed = content
    if isinstance(content, str):
        first = content[:1]
        if first in _JSON_SPACE:
            first = content.lstrip(_JSON_SPACE)[:1]
        if first not in _JSON_START:
            # Neither parser can take it (most tool outputs are plain text): decided without the two failed
            # parses, whose exceptions cost more than the rest of the row's tool statistics.
            return not content or content.strip().lower().startswith("error:")
        try:
            parsed = orjson.loads(content)
        except orjson.JSONDecodeError:
            try:  # the reference parses with Python's json, which also takes NaN, Infinity, lone surrogates
                parsed = json.loads(content)
            except (ValueError, RecursionError):
                return not content or content.strip().lower().startswith("error:")
    if isinstance(parsed, dict):
        if parsed.get("error") is not None:
            return True
        inner = parsed.get("content")
        if isinstance(inner, dict) and inner.get("error") is not None:
            return True
        if parsed.get("success") is False:
            return True
    return False


def _call_failed(call: Mapping[str, Any]) -> bool:
    """Whether a call's ``response`` says it failed: status ``error``/``failed``, or a non-zero ``exit_code``."""
    response = call.get("response")
    if not isinstance(response, Mapping):
        return False
    code = response.get("exit_code")
    return response.get("status") in ("error", "failed") or (type(code) is int and code != 0)


def compute_tool_stats(story: Mapping[str, Any]) -> list[dict[str, Any]]:
    """``[{tool, count, success, failure}]`` sorted by tool, for tools called at least once.

    A call counts for its ``fn``. Its results are the ones training outputs show for it: linked by the one rule
    of ``linking.place_results`` (by call id wherever the document holds them, by position where a result has
    no id).
    A call without a result counts but is neither a success nor a failure, as in the reference. A result the
    source marked failed (``is_error: true``, ``response.status == "error"``) is a failure.
    """
    stats: dict[str, list[int]] = {}
    for turn in story.get("turns") or []:
        for call in turn.get("tool_calls") or []:
            stats.setdefault(call["fn"], [0, 0, 0])[0] += 1
    outcomes = tool_outcomes_by_id(story)  # most documents: the same outcomes without placing the results
    for fn, content, marked, call in tool_outcomes(story) if outcomes is None else outcomes:
        # A result without content is "" to the reference (msg.get("content", "")): a failure. A result the
        # source marked failed (is_error) is a failure whatever its text, and so is one of a call the harness
        # marked failed (``response``: status error/failed, or a non-zero exit code; Pi's isError).
        failed = marked or (call is not None and _call_failed(call)) or _result_failed(content)
        stats[fn][2 if failed else 1] += 1
    return [{"tool": tool, "count": c, "success": s, "failure": f} for tool, (c, s, f) in sorted(stats.items())]


def derived_columns(story: Mapping[str, Any]) -> dict[str, Any]:
    """The derived filter columns of a document, computed the same way for every source format."""
    turns = story.get("turns") or []
    return {
        "num_turns": len(turns),
        "num_tool_calls": sum(len(t.get("tool_calls") or ()) for t in turns),
        "num_copied_turns": sum(1 for t in turns if t.get("copied") is True),
        "has_reasoning": any(isinstance(t.get("reason"), str) and t["reason"].strip() for t in turns),
        "tool_stats": compute_tool_stats(story),
    }
