"""The Storyline wire schema (RFC-0001) as data, and its validation.

``validate(story)`` raises the first problem as a ``StorylineError``; ``iter_errors(story)`` yields them
all. Neither changes the document. The schema below is the RFC's field tables transcribed once; the
rules that span fields (unique ids, the prompt rules, ``unknown_key_counts``) follow it.

>>> story = {"schema_version": "storyline/v1", "session": "s1", "agent": {"id": "a"},
...          "turns": [{"id": 1, "src": "user", "msg": "hi"}]}
>>> validate(story)
>>> [e.pointer for e in iter_errors({**story, "session": ""})]
['/session']

Decisions where the RFC is silent are in ``docs/storyline.md``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from decimal import Decimal
from typing import Any

import orjson

from .errors import StorylineError
from .jsonio import json_type, short
from .pointer import is_valid, join, normalize

__all__ = [
    "SCHEMA_VERSION",
    "compute_unknown_key_counts",
    "derive_kind",
    "effective_env",
    "effective_prompt",
    "is_time",
    "iter_errors",
    "turn_kind",
    "validate",
]

SCHEMA_VERSION = "storyline/v1"
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1


class Obj:
    """An object that owns fields: ``fields`` maps a wire name to ``(type, required)``.

    ``lenient``: null, ``""`` and ``{}`` count as absent for every field (RFC-0001 says so for the
    ``task`` subtree, and ``turns[].env`` has the same shape as ``task.env``).
    ``open``: undeclared keys are kept as flattened extra instead of refused (only ``task.result``).
    """

    __slots__ = ("fields", "lenient", "name", "open", "required")

    def __init__(self, name: str, fields: dict, *, lenient: bool = False, open: bool = False) -> None:
        self.name = name
        self.fields = fields
        self.lenient = lenient
        self.open = open
        self.required = tuple(k for k, (_, req) in fields.items() if req)


# Type tags. Objects are Obj instances; ("list", X) is an array of X.
STR, NESTR, INT, POSINT, BOOL, ANY, TIME, NUM, STRLIST, JSONOBJ = (
    "string",
    "non-empty string",
    "integer",
    "positive integer",
    "boolean",
    "any",
    "time",
    "number",
    "array of strings",
    "object",
)

ENV = Obj(
    "env",
    {
        "name": (STR, False),
        "endpoint": (STR, False),
        "id": (STR, False),
        "event_type": (STR, False),
        "request_id": (STR, False),
        "state": (JSONOBJ, False),
    },
    lenient=True,
)
LLM = Obj("llm", {"k": (POSINT, False)}, lenient=True)
# RFC-0001 names the typed result fields without types; the project's reading is in docs/storyline.md.
RESULT = Obj(
    "result",
    {
        "correct": (BOOL, False),
        "final_answer": (ANY, False),
        "ground_truth": (ANY, False),
        "status": (STR, False),
        "score": (NUM, False),
        "max_score": (NUM, False),
        "error": (ANY, False),
        "artifacts": (ANY, False),
    },
    lenient=True,
    open=True,
)
TASK = Obj("task", {"env": (ENV, False), "llm": (LLM, False), "result": (RESULT, False)}, lenient=True)
PROMPT = Obj("prompt", {"system": (STR, False), "user": (STR, False)})
ORIGIN = Obj("origin", {"format": (NESTR, True), "schema_version": (NESTR, False), "document_id": (NESTR, False)})
AGENT = Obj(
    "agent",
    {
        "id": (NESTR, True),
        "name": (STR, False),
        "ver": (STR, False),
        "model": (STR, False),
        "tools": (ANY, False),
        "extra": (ANY, False),
    },
)
PARENT = Obj("parent", {"psid": (NESTR, True), "scid": (STR, False), "ptid": (INT, False), "rel": (STR, False)})
RESPONSE = Obj("response", {"status": (STR, False), "exit_code": (INT, False)})
TOOL_CALL = Obj(
    "tool call",
    {
        "tcid": (NESTR, True),
        "fn": (NESTR, True),
        "args": (ANY, True),
        "result": (ANY, False),
        "duration_ms": (INT, False),
        "extra": (ANY, False),
        "kind": (STR, False),
        "response": (RESPONSE, False),
    },
)
TURN = Obj(
    "turn",
    {
        "id": (INT, True),
        "src": (NESTR, True),
        "msg": (ANY, True),
        "ts": (TIME, False),
        "model": (STR, False),
        "effort": (ANY, False),
        "reason": (STR, False),
        "tool_calls": (("list", TOOL_CALL), False),
        "observation": (ANY, False),
        "metrics": (ANY, False),
        "nllm": (INT, False),
        "copied": (BOOL, False),
        "extra": (ANY, False),
        "kind": (STR, False),
        "latency_ms": (INT, False),
        "ttft_ms": (INT, False),
        "env": (ENV, False),
        "prompt": (PROMPT, False),
        "finished_at": (TIME, False),
    },
)
ROOT = Obj(
    "document",
    {
        "schema_version": (NESTR, True),
        "origin": (ORIGIN, False),
        "session": (NESTR, True),
        "agent": (AGENT, True),
        "turns": (("list", TURN), True),
        "run": (STR, False),
        "trajectory": (NESTR, False),
        "attempt_id": (STR, False),
        "notes": (STR, False),
        "task": (TASK, False),
        "prompt": (PROMPT, False),
        "started_at": (TIME, False),
        "finished_at": (TIME, False),
        "final_metrics": (ANY, False),
        "continued_trajectory_ref": (STR, False),
        "extra": (ANY, False),
        "meta": (ANY, False),
        "unknown_fields": (JSONOBJ, False),  # shape checked by _check_unknown_fields
        "unknown_key_counts": (JSONOBJ, False),  # checked against the recomputation
        "children": (STRLIST, False),
        "parent": (PARENT, False),
    },
)

# ---------------------------------------------------------------------------------------------- times

_RFC3339 = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.\d+)?(?:[Zz]|[+-](\d{2}):(\d{2}))",
    re.ASCII,
)
_DAYS = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_NS = Decimal(10**9)


def _rfc3339_ok(text: str) -> bool:
    m = _RFC3339.fullmatch(text)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not (1 <= month <= 12 and 1 <= day <= _DAYS[month - 1] and hour <= 23 and minute <= 59 and second <= 60):
        return False
    if month == 2 and day == 29 and not (year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)):
        return False
    if m.group(7) is not None and (int(m.group(7)) > 23 or int(m.group(8)) > 59):
        return False
    return True


def is_time(value: Any) -> bool:
    """A Storyline time: an RFC 3339 string with ``Z`` or an offset, or Unix epoch seconds that are
    exactly a whole number of nanoseconds within int64 (an int, or a float whose shortest repr has at
    most 9 decimals).

    >>> is_time("2026-07-30T12:00:00.5+02:00"), is_time(1753872000.123456), is_time("2026-07-30 12:00")
    (True, True, False)
    """
    t = type(value)
    if t is str:
        return _rfc3339_ok(value)
    if t is int:
        return INT64_MIN <= value * 1_000_000_000 <= INT64_MAX
    if t is float:
        if not math.isfinite(value):
            return False
        ns = Decimal(repr(value)) * _NS  # repr is the shortest round-tripping decimal
        return ns == ns.to_integral_value() and INT64_MIN <= ns <= INT64_MAX
    return False


# ----------------------------------------------------------------------------------------- JSON values


def _json_problem(value: Any, pointer: str) -> tuple[str, str] | None:
    """``(pointer, reason)`` of the first part of ``value`` that is not a JSON value, else None.

    The fast path lets orjson (C) serialise and re-read the value: a value that comes back equal is
    JSON. NaN/Infinity (written as null), tuples (become lists) and big ints (refused) all fail it; only
    then does a Python walk find the offending place.
    """
    t = type(value)
    if t is str:
        return _str_problem(value, pointer)
    if value is None or t is bool:
        return None
    if t is int:
        return None if INT64_MIN <= value <= 2**64 - 1 else (pointer, f"integer {value} is beyond 64 bits")
    if t is float:
        return None if math.isfinite(value) else (pointer, f"{value} is not a JSON number")
    try:
        if orjson.loads(orjson.dumps(value)) == value:
            return None
    except (TypeError, orjson.JSONEncodeError):
        pass
    return _json_problem_slow(value, pointer)


def _str_problem(value: str, pointer: str) -> tuple[str, str] | None:
    if value.isascii():
        return None
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return pointer, "string holds a lone surrogate, which is not valid Unicode text"
    return None


def _json_problem_slow(value: Any, pointer: str, depth: int = 1) -> tuple[str, str] | None:
    t = type(value)
    if isinstance(value, (dict, list)) and depth > MAX_DEPTH:
        return pointer, f"nested deeper than {MAX_DEPTH} levels, which JSON writers refuse"
    if isinstance(value, dict):
        for k, v in value.items():
            if not isinstance(k, str):
                return pointer, f"object key {k!r} is not a string"
            bad = _str_problem(k, join(pointer, k)) or _json_problem_slow(v, join(pointer, k), depth + 1)
            if bad:
                return bad
        return None
    if t is list:
        for i, v in enumerate(value):
            bad = _json_problem_slow(v, join(pointer, i), depth + 1)
            if bad:
                return bad
        return None
    if isinstance(value, (str, bool, int, float)) or value is None:
        return _json_problem(value, pointer) if type(value) in (str, int, float) else None
    return pointer, f"{type(value).__name__} is not a JSON value"


def _absentish(value: Any) -> bool:
    return value is None or (type(value) is str and value == "") or (type(value) is dict and not value)


# ------------------------------------------------------------------------------------------ the checks


class _Run:
    """State of one validation pass: the error list plus document-wide uniqueness maps."""

    __slots__ = ("document_id", "errors", "parsed", "tcids", "turn_ids")

    def __init__(self, document_id: str | None, parsed: bool = False) -> None:
        self.document_id = document_id
        self.parsed = parsed  # values came from a strict JSON parser: no need to check they are JSON
        self.errors: list[StorylineError] = []
        self.turn_ids: dict[int, str] = {}
        self.tcids: dict[str, str] = {}

    def err(self, pointer: str, reason: str) -> None:
        self.errors.append(StorylineError(reason, pointer=pointer, document_id=self.document_id))


def _check_value(run: _Run, typ: Any, value: Any, pointer: str) -> None:
    t = type(value)
    if typ is ANY:
        bad = None if run.parsed else _json_problem(value, pointer)
        if bad:
            run.err(*bad)
    elif typ is STR or typ is NESTR:
        if t is not str:
            run.err(pointer, f"expected a {typ}, got {json_type(value)}")
        elif typ is NESTR and not value:
            run.err(pointer, "must be a non-empty string")
        elif not run.parsed:
            bad = _str_problem(value, pointer)
            if bad:
                run.err(*bad)
    elif typ is INT or typ is POSINT:
        if t is not int:  # bool is a subclass of int but not an integer here
            run.err(pointer, f"expected an integer, got {json_type(value)}")
        elif not INT64_MIN <= value <= INT64_MAX:
            run.err(pointer, f"integer {value} is outside int64")
        elif typ is POSINT and value < 1:
            run.err(pointer, f"expected a positive integer, got {value}")
    elif typ is BOOL:
        if t is not bool:
            run.err(pointer, f"expected a boolean, got {json_type(value)}")
    elif typ is TIME:
        if not is_time(value):
            run.err(
                pointer,
                f"not a time: expected an RFC 3339 string with Z or an offset, or Unix epoch seconds exact "
                f"to the nanosecond within int64, got {json_type(value)} {short(value)}",
            )
    elif typ is NUM:
        if t is bool or not isinstance(value, (int, float)):
            run.err(pointer, f"expected a number, got {json_type(value)}")
        else:
            bad = _json_problem(value, pointer)
            if bad:
                run.err(*bad)
    elif typ is STRLIST:
        if t is not list:
            run.err(pointer, f"expected an array of strings, got {json_type(value)}")
        else:
            for i, item in enumerate(value):
                _check_value(run, STR, item, join(pointer, i))
    elif typ is JSONOBJ:
        if t is not dict:
            run.err(pointer, f"expected an object, got {json_type(value)}")
        elif not run.parsed:
            bad = _json_problem(value, pointer)
            if bad:
                run.err(*bad)
    elif type(typ) is tuple:  # ("list", Obj)
        if t is not list:
            run.err(pointer, f"expected an array, got {json_type(value)}")
        else:
            item_spec = typ[1]
            for i, item in enumerate(value):
                _check_object(run, item_spec, item, f"{pointer}/{i}")
    else:
        _check_object(run, typ, value, pointer)


def _check_object(run: _Run, spec: Obj, value: Any, pointer: str) -> None:
    if type(value) is not dict:
        run.err(pointer, f"expected {spec.name} object, got {json_type(value)}")
        return
    fields = spec.fields
    for key, item in value.items():
        entry = fields.get(key)
        if entry is None:
            child = join(pointer, key)
            if spec.open:
                if not isinstance(key, str):
                    run.err(pointer, f"object key {key!r} is not a string")
                elif not run.parsed:
                    bad = _json_problem(item, child)
                    if bad:
                        run.err(*bad)
            else:
                run.err(child, f"undeclared key {key!r} in {spec.name} (extensions belong in extra/meta)")
            continue
        typ = entry[0]
        t = type(item)
        # Fast paths for the common valid values: no call, no pointer string built.
        if t is str:
            if (typ is STR or typ is ANY or (typ is NESTR and item)) and item.isascii():
                continue
        elif t is int:
            if (typ is INT or typ is ANY) and INT64_MIN <= item <= INT64_MAX:
                continue
        elif t is bool:
            if typ is BOOL or typ is ANY:
                continue
        elif item is None and typ is ANY:
            continue
        if spec.lenient and _absentish(item):
            continue
        # Declared names need no RFC 6901 escaping, so the slow path skips join() too.
        _check_value(run, typ, item, f"{pointer}/{key}")
    for key in spec.required:
        if key not in value:
            run.err(join(pointer, key), f"required {spec.name} field {key!r} is missing")
    # Rules that span the fields of one object.
    if spec is TURN:
        _check_turn(run, value, pointer)
    elif spec is TOOL_CALL:
        _check_tool_call(run, value, pointer)
    elif spec is RESPONSE:
        if "status" not in value and "exit_code" not in value:
            run.err(pointer, "a tool call response needs status and/or exit_code")
    elif spec is TASK:
        if not any(_nonempty_part(value.get(k)) for k in ("env", "llm", "result")):
            run.err(pointer, "task needs at least one non-empty part among env, llm and result")


MAX_DEPTH = 254  # orjson writes JSON nested at most this deep (it reads up to 1024)


def _check_writable(run: _Run, story: dict) -> None:
    """The whole document must be writable as JSON: one orjson pass, in C. It catches what a strict parser
    lets through and no writer could write back — nesting deeper than ``MAX_DEPTH``."""
    try:
        orjson.dumps(story)
    except orjson.JSONEncodeError as exc:
        pointer = _too_deep(story) or ""
        reason = f"nested deeper than {MAX_DEPTH} levels, which JSON writers refuse" if pointer else str(exc)
        run.err(pointer, reason)


def _too_deep(node: Any) -> str | None:
    """The pointer of the first container nested deeper than ``MAX_DEPTH`` (iterative: no recursion)."""
    stack = [(node, "", 1)]
    while stack:
        node, pointer, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > MAX_DEPTH:
                return pointer
            items = node.items() if isinstance(node, dict) else enumerate(node)
            stack.extend((v, join(pointer, k), depth + 1) for k, v in reversed(list(items)))
    return None


def _nonempty_part(part: Any) -> bool:
    return type(part) is dict and any(not _absentish(v) for v in part.values())


def _check_turn(run: _Run, turn: dict, pointer: str) -> None:
    tid = turn.get("id")
    if type(tid) is int:
        first = run.turn_ids.get(tid)
        if first is None:
            run.turn_ids[tid] = f"{pointer}/id"
        else:
            run.err(f"{pointer}/id", f"duplicate turn id {tid} (also at {first})")
    prompt = turn.get("prompt")
    if "prompt" in turn and turn.get("copied") is True:
        run.err(f"{pointer}/prompt", "a copied turn (copied: true) must not carry a prompt")
    elif type(prompt) is dict and not any(type(v) is str and v for v in prompt.values()):
        if prompt != {"system": "", "user": ""}:
            run.err(
                f"{pointer}/prompt",
                'an all-empty turn prompt must be the explicit {"system": "", "user": ""}',
            )


def _check_tool_call(run: _Run, call: dict, pointer: str) -> None:
    tcid = call.get("tcid")
    if type(tcid) is str and tcid:
        first = run.tcids.get(tcid)
        if first is None:
            run.tcids[tcid] = f"{pointer}/tcid"
        else:
            run.err(f"{pointer}/tcid", f"duplicate tool call id {short(tcid)} (also at {first})")


def _check_document_prompt(run: _Run, prompt: Any) -> None:
    if type(prompt) is dict and not any(type(v) is str and v for v in prompt.values()):
        run.err("/prompt", "the document prompt needs at least one non-empty string (system or user)")


def _check_unknown_fields(run: _Run, uf: Any) -> bool:
    """Check ``/unknown_fields/sources/{source}/{source_document_id, fields}``; True when well-formed."""
    if type(uf) is not dict:
        return False
    before = len(run.errors)
    for key in uf:
        if key != "sources":
            run.err(join("/unknown_fields", key), f"undeclared key {key!r} in unknown_fields (only 'sources')")
    if "sources" not in uf:
        run.err("/unknown_fields/sources", "required unknown_fields field 'sources' is missing")
        return False
    sources = uf["sources"]
    if type(sources) is not dict:
        run.err("/unknown_fields/sources", f"expected an object, got {json_type(sources)}")
        return False
    for name, entry in sources.items():
        base = join("/unknown_fields/sources", name)
        if not isinstance(name, str):
            run.err(base, f"a residual source name is a string, got {json_type(name)}")
            continue
        if not name:
            run.err(base, "a residual source needs a non-empty format name")
        if type(entry) is not dict:
            run.err(base, f"expected an object with source_document_id and fields, got {json_type(entry)}")
            continue
        for key in entry:
            if key not in ("source_document_id", "fields"):
                run.err(join(base, key), f"undeclared key {key!r} (only source_document_id and fields)")
        if "source_document_id" not in entry:
            run.err(f"{base}/source_document_id", "required field 'source_document_id' is missing")
        elif type(entry["source_document_id"]) is not str:
            run.err(f"{base}/source_document_id", f"expected a string, got {json_type(entry['source_document_id'])}")
        fields = entry.get("fields")
        if "fields" not in entry:
            run.err(f"{base}/fields", "required field 'fields' is missing")
        elif type(fields) is not dict:
            run.err(f"{base}/fields", f"expected an object, got {json_type(fields)}")
        else:
            for p, v in fields.items():
                at = join(f"{base}/fields", p)
                if not is_valid(p):
                    run.err(at, f"residual key {short(p)} is not a JSON Pointer into the source")
                bad = None if run.parsed else _json_problem(v, at)
                if bad:
                    run.err(*bad)
    return len(run.errors) == before


def _same_counts(given: dict, expected: dict) -> bool:
    """Equal, and every count an integer: Python's ``True == 1 == 1.0`` must not pass for a count."""
    if given != expected:
        return False
    return all(type(c) is int for counts in given.values() if type(counts) is dict for c in counts.values())


def compute_unknown_key_counts(unknown_fields: Mapping[str, Any] | None) -> dict[str, dict[str, int]]:
    """The one deterministic ``unknown_key_counts`` for an ``unknown_fields`` object.

    Shape (RFC-0001 leaves it open): ``{source: {normalised pointer: count}}`` where the normalised
    pointer is the residual's source pointer with every array-index token replaced by ``*``; sources
    and pointers are sorted. Encoders call this; validation compares against it.

    >>> compute_unknown_key_counts({"sources": {"openai-msg": {"source_document_id": "a.jsonl", "fields": {
    ...     "/session_steps/0/vendor": 1, "/session_steps/3/vendor": 2, "/x": 3}}}})
    {'openai-msg': {'/session_steps/*/vendor': 2, '/x': 1}}
    """
    out: dict[str, dict[str, int]] = {}
    if not unknown_fields:
        return out
    for source in sorted(unknown_fields.get("sources") or {}):
        counts: dict[str, int] = {}
        for p in (unknown_fields["sources"][source] or {}).get("fields") or {}:
            n = normalize(p)
            counts[n] = counts.get(n, 0) + 1
        out[source] = dict(sorted(counts.items()))
    return out


def iter_errors(story: Any, *, document_id: str | None = None, parsed: bool = False) -> Iterator[StorylineError]:
    """Yield every way ``story`` breaks RFC-0001, in document order; the document is not changed.

    ``document_id`` names the file in messages; by default ``/origin/document_id`` when present.
    ``parsed=True`` is for readers whose values all come from the strict JSON parser (``jsonio.loads``):
    they are JSON values already, so that part of the check is skipped.

    >>> errs = list(iter_errors({"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...     "turns": [{"id": 1, "src": "agent", "msg": None, "tool_calls": [
    ...         {"tcid": "c1", "fn": "ls", "args": {}}, {"tcid": "c1", "fn": "", "args": {}}]}]}))
    >>> [(e.pointer, e.reason) for e in errs]  # doctest: +NORMALIZE_WHITESPACE
    [('/turns/0/tool_calls/1/fn', 'must be a non-empty string'),
     ('/turns/0/tool_calls/1/tcid', 'duplicate tool call id "c1" (also at /turns/0/tool_calls/0/tcid)')]
    """
    if document_id is None and type(story) is dict:
        origin = story.get("origin")
        if type(origin) is dict and type(origin.get("document_id")) is str:
            document_id = origin["document_id"]
    run = _Run(document_id, parsed)
    if type(story) is not dict:
        run.err("", f"a Storyline document is a JSON object, got {json_type(story)}")
        return iter(run.errors)
    version = story.get("schema_version")
    if "schema_version" not in story:
        run.err("/schema_version", "required field 'schema_version' is missing (expected 'storyline/v1')")
        return iter(run.errors)
    if version != SCHEMA_VERSION:
        # Fail closed: a document of another version is not interpreted any further.
        run.err("/schema_version", f"unknown schema_version {short(version)}; only 'storyline/v1' is accepted")
        return iter(run.errors)
    _check_object(run, ROOT, story, "")
    if "prompt" in story:
        _check_document_prompt(run, story["prompt"])
    uf_ok = "unknown_fields" not in story or _check_unknown_fields(run, story["unknown_fields"])
    if not run.errors:
        _check_writable(run, story)
    if "unknown_key_counts" in story and uf_ok and type(story["unknown_key_counts"]) is dict:
        expected = compute_unknown_key_counts(story.get("unknown_fields"))
        if not _same_counts(story["unknown_key_counts"], expected):
            run.err(
                "/unknown_key_counts",
                f"does not match its recomputation from unknown_fields (expected {short(expected, 200)})",
            )
    return iter(run.errors)


def validate(story: Any, *, document_id: str | None = None, parsed: bool = False) -> None:
    """Raise the first ``StorylineError`` of ``story``; return None when it is a valid Storyline document.

    >>> validate({"schema_version": "storyline/v2", "session": "s", "agent": {"id": "a"}, "turns": []})
    Traceback (most recent call last):
    ...
    pchronicle_datasets.errors.StorylineError: /schema_version: unknown schema_version "storyline/v2"; only 'storyline/v1' is accepted
    """
    for error in iter_errors(story, document_id=document_id, parsed=parsed):
        raise error


# ------------------------------------------------------------------------------------ derived readings


def derive_kind(turn: Mapping[str, Any]) -> str:
    """The turn kind RFC-0001 derives when ``kind`` is omitted, from ``src`` and ``tool_calls`` only.

    A turn with tool calls is ``"autonomous"``; otherwise ``agent`` → ``"llm.response"``, ``user`` →
    ``"llm.request"``, anything else (``system``, environment or tool sources) → ``"context"``. These are
    RFC-0009's constants; the tool calls' own ``kind`` is never read.

    >>> derive_kind({"src": "agent", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}]})
    'autonomous'
    """
    if turn.get("tool_calls"):
        return "autonomous"
    src = turn.get("src")
    if src == "agent":
        return "llm.response"
    if src == "user":
        return "llm.request"
    return "context"


def turn_kind(turn: Mapping[str, Any]) -> str:
    """The turn's ``kind`` when given (non-empty), else ``derive_kind(turn)``."""
    kind = turn.get("kind")
    return kind if type(kind) is str and kind else derive_kind(turn)


def effective_env(story: Mapping[str, Any], turn: Mapping[str, Any]) -> dict[str, Any]:
    """The env in force for ``turn``: ``/task/env`` shallow-merged with the turn's ``env`` delta
    (``state`` merged shallowly too); null/empty values count as absent. Never relative to the previous
    turn, per RFC-0001."""
    base = ((story.get("task") or {}).get("env")) or {}
    delta = turn.get("env") or {}
    merged = {k: v for k, v in base.items() if not _absentish(v)}
    for k, v in delta.items():
        if _absentish(v):
            continue
        if k == "state" and type(merged.get("state")) is dict:
            merged["state"] = {**merged["state"], **v}
        else:
            merged[k] = v
    return merged


def effective_prompt(story: Mapping[str, Any], turn: Mapping[str, Any]) -> dict[str, str]:
    """The ``{system, user}`` prompt in force for ``turn``: the turn's prompt replaces the document's as a
    whole (missing keys are ``""``, nothing inherited); without one, the document's."""
    prompt = turn.get("prompt") if "prompt" in turn else story.get("prompt")
    prompt = prompt or {}
    return {"system": prompt.get("system", ""), "user": prompt.get("user", "")}
