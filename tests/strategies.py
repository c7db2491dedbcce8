"""Hypothesis strategies, importable by every test module: valid Storyline documents (RFC-0001), openai-msg
gateway corpora (``corpora``, RFC-0009) and ShareGPT records (``sharegpt_records``).

``storylines()`` draws documents that ``pchronicle_datasets.schema.validate`` accepts and that use every
optional field at every level, with awkward JSON values wherever the RFC types a value ``any``:

* floats whose text is easy to damage (``0.30000000000000004``, ``2.5e-05``, ``1.0``, ``-0.0``, ``1e300``,
  ``5e-324``), integers at the 64-bit edges (``2**64 - 1``, ``-2**63``), strings that look like other JSON
  values (``"42"``, ``"1.0"``, ``"null"``, ``"true"``), nulls, nested empty objects and arrays, and Unicode
  (emoji, CJK, combining marks, ``"\\u0000"``) — never a lone surrogate, which is not JSON text;
* times as RFC 3339 strings, integer epoch seconds, and float epoch seconds exact to the nanosecond;
* the spellings of "absent" the RFC allows in the lenient objects (``task`` parts, ``env``): ``null``,
  ``""`` and ``{}``; extra (flattened) keys in ``task.result``;
* ``unknown_fields`` with or without ``unknown_key_counts`` (always the recomputed, consistent counts);
* tool calls with document-unique ``tcid`` whose results are linked by ``tool_calls[].result`` or by
  ``observation.results[].source_call_id`` on a later turn, with result texts on both sides of the
  reference batch runner's failure rule.

``observation.results[].source_call_id`` is drawn from hashable JSON values only (strings, numbers, null):
an array or object there is valid Storyline but is kept for an explicit test in ``test_features.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
from hypothesis import strategies as st

from pchronicle_datasets.pointer import join
from pchronicle_datasets.schema import SCHEMA_VERSION, compute_unknown_key_counts, is_time

__all__ = [
    "ACTF_RESULT_KEYS",
    "AWKWARD_FLOATS",
    "AWKWARD_INTS",
    "AWKWARD_STRINGS",
    "TOOL_RESULTS",
    "corpora",
    "gateway_sessions",
    "json_values",
    "sharegpt_records",
    "storylines",
    "texts",
    "times",
]

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
UINT64_MAX = 2**64 - 1
# Epoch seconds whose nanoseconds fit in int64.
MAX_EPOCH_SECONDS = INT64_MAX // 10**9

AWKWARD_FLOATS: tuple[float, ...] = (
    0.30000000000000004,
    2.5e-05,
    1.0,
    -0.0,
    0.0,
    1e300,
    -1e300,
    5e-324,
    1.7976931348623157e308,
    2.2250738585072014e-308,
    0.1,
    1e16,
    -1.5,
    123456789.12345679,
)
AWKWARD_INTS: tuple[int, ...] = (0, 1, -1, 2**53, 2**53 + 1, INT64_MAX, 2**63, UINT64_MAX, INT64_MIN, INT64_MIN + 1)
AWKWARD_STRINGS: tuple[str, ...] = (
    "",
    " ",
    "42",
    "-0",
    "1.0",
    "1e5",
    "null",
    "true",
    "false",
    "NaN",
    "\u0000",
    "a\u0000b",
    "\U0001f600",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467",
    "中文字符",
    "e\u0301",
    "\u200b",
    "\ufeff",
    "line\nbreak\ttab",
    '"quoted"',
    "\\",
    "{}",
    "[]",
    "~0/~1",
    "2026-07-30T12:00:00Z",
    "1753872000",
)
# Tool outputs on both sides of the reference batch runner's failure rule (JSON text, JSON values, plain text).
TOOL_RESULTS: tuple[Any, ...] = (
    '{"error": "boom"}',
    '{"error": null}',
    '{"content": {"error": "inner"}}',
    '{"content": {"error": null}, "exit_code": 1}',
    '{"success": false}',
    '{"success": true}',
    "",
    "   ",
    "ok",
    "Error: file not found",
    "ERROR: denied",
    "  error: padded",
    "errors: 0",
    '"error: a JSON string"',
    "42",
    "null",
    None,
    {"error": "boom"},
    {"error": None},
    {"success": False},
    {"content": {"error": 1}},
    ["Error: a list is never a failure"],
    0,
)

SOURCES = ("user", "agent", "system", "tool", "environment")
TOOL_NAMES = ("bash", "read_file", "web_search", "工具", "a")
RESULT_FIELDS = frozenset(
    ("correct", "final_answer", "ground_truth", "status", "score", "max_score", "error", "artifacts")
)
ACTF_RESULT_KEYS = ("task_correct", "category", "attempts_tried", "solved_at", "retry_count", "retry_counts")

# ----------------------------------------------------------------------------------------- scalars

_chars = st.characters(codec="utf-8")  # every code point but the surrogates
texts = st.one_of(st.sampled_from(AWKWARD_STRINGS), st.text(_chars, max_size=8))
"""Strings, awkward ones included; never a lone surrogate."""
nonempty_texts = texts.filter(bool)
int64s = st.one_of(st.sampled_from((0, -1, 1, INT64_MAX, INT64_MIN)), st.integers(INT64_MIN, INT64_MAX))
positive_int64s = st.one_of(st.sampled_from((1, INT64_MAX)), st.integers(1, INT64_MAX))
json_ints = st.one_of(st.sampled_from(AWKWARD_INTS), st.integers(INT64_MIN, UINT64_MAX))
json_floats = st.one_of(st.sampled_from(AWKWARD_FLOATS), st.floats(allow_nan=False, allow_infinity=False))
json_numbers = st.one_of(json_ints, json_floats)

json_scalars = st.one_of(st.none(), st.booleans(), json_ints, json_floats, texts)
json_keys = st.one_of(st.sampled_from(("", "error", "content", "success", "42", "null", "中", "\u0000")), texts)
json_values = st.recursive(
    json_scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(json_keys, inner, max_size=3),
    ),
    max_leaves=6,
)
"""Any JSON value (as Python objects: dict, list, str, int, float, bool, None)."""
json_objects = st.dictionaries(json_keys, json_values, max_size=3)


# ------------------------------------------------------------------------------------------- times


def _rfc3339(year: int, month: int, day: int, hh: int, mm: int, ss: int, frac: str, t: str, zone: str) -> str:
    return f"{year:04d}-{month:02d}-{day:02d}{t}{hh:02d}:{mm:02d}:{ss:02d}{frac}{zone}"


_zones = st.one_of(
    st.sampled_from(("Z", "z", "+00:00", "-00:00", "+23:59", "-12:30")),
    st.builds(
        lambda sign, h, m: f"{sign}{h:02d}:{m:02d}", st.sampled_from("+-"), st.integers(0, 23), st.integers(0, 59)
    ),
)
rfc3339_times = st.builds(
    _rfc3339,
    st.integers(0, 9999),
    st.integers(1, 12),
    st.integers(1, 31),
    st.integers(0, 23),
    st.integers(0, 59),
    st.integers(0, 60),
    st.one_of(st.just(""), st.from_regex(r"\.[0-9]{1,12}", fullmatch=True)),
    st.sampled_from("Tt"),
    _zones,
).filter(is_time)  # drops impossible days (Feb 30, Feb 29 of a common year)


@st.composite
def _float_times(draw: st.DrawFn) -> float:
    # n / 10**k seconds with at most 9 decimals, nanoseconds within int64; keep what is_time accepts.
    k = draw(st.integers(0, 9))
    bound = INT64_MAX // 10 ** (9 - k)
    n = draw(st.integers(-bound, bound))
    return n / 10**k


float_times = st.one_of(
    st.sampled_from((1753872000.5, 1753872000.0, -0.0, 0.0, 1e-09, 0.1, -1.5, 9223372036.0)),
    _float_times(),
).filter(is_time)
int_times = st.one_of(
    st.sampled_from((1753872000, 0, MAX_EPOCH_SECONDS, -MAX_EPOCH_SECONDS)),
    st.integers(-MAX_EPOCH_SECONDS, MAX_EPOCH_SECONDS),
)
times = st.one_of(
    st.sampled_from(("2026-07-30T12:00:00Z", "2026-07-30T12:00:00.123456789+02:00", "2024-02-29t23:59:60z")),
    rfc3339_times,
    int_times,
    float_times,
)
"""A Storyline time: RFC 3339 text, or Unix epoch seconds (int or float) exact to the nanosecond."""

# ------------------------------------------------------------------------------------------ objects

_absent = st.one_of(st.none(), st.just(""), st.builds(dict))  # null / "" / {}: absent in lenient objects


def _put(draw: st.DrawFn, out: dict, key: str, strategy: st.SearchStrategy, full: bool = False) -> None:
    """Set ``out[key]`` to a drawn value: always when ``full``, else about half of the time."""
    if full or draw(st.booleans()):
        out[key] = draw(strategy)


@st.composite
def envs(draw: st.DrawFn, full: bool = False) -> dict:
    """``task.env`` / ``turns[].env``: optional strings and an open ``state`` object, each maybe absent-ish."""
    env: dict = {}
    for key in ("name", "endpoint", "id", "event_type", "request_id"):
        _put(draw, env, key, st.one_of(texts, _absent), full)
    _put(draw, env, "state", st.one_of(json_objects, _absent), full)
    return env


@st.composite
def task_results(draw: st.DrawFn, full: bool = False) -> dict:
    result: dict = {}
    _put(draw, result, "correct", st.one_of(st.booleans(), _absent), full)
    _put(draw, result, "final_answer", json_values, full)
    _put(draw, result, "ground_truth", json_values, full)
    _put(draw, result, "status", st.one_of(texts, _absent), full)
    _put(draw, result, "score", st.one_of(json_numbers, _absent), full)
    _put(draw, result, "max_score", st.one_of(json_numbers, _absent), full)
    _put(draw, result, "error", json_values, full)
    _put(draw, result, "artifacts", json_values, full)
    extra_keys = st.one_of(st.sampled_from(ACTF_RESULT_KEYS), texts).filter(lambda k: k not in RESULT_FIELDS)
    result.update(draw(st.dictionaries(extra_keys, json_values, min_size=int(full), max_size=3)))
    return result


def _nonempty_part(part: Any) -> bool:
    return type(part) is dict and any(not (v is None or v == "" or v == {}) for v in part.values())


@st.composite
def tasks(draw: st.DrawFn, full: bool = False) -> dict:
    """A ``task`` with at least one non-empty part among env, llm and result (others maybe absent-ish)."""
    task: dict = {}
    # When full, a part is absent-ish one time in four (the RFC's null / "" / {} spellings).
    part = st.integers(0, 3) if full else st.just(0)
    _put(draw, task, "env", envs(full) if draw(part) else st.one_of(envs(), _absent), full)
    llm = st.fixed_dictionaries({}, optional={"k": st.one_of(positive_int64s, _absent)})
    _put(
        draw,
        task,
        "llm",
        st.fixed_dictionaries({"k": positive_int64s}) if draw(part) else st.one_of(llm, _absent),
        full,
    )
    _put(draw, task, "result", task_results(full) if draw(part) else st.one_of(task_results(), _absent), full)
    if not any(_nonempty_part(task.get(k)) for k in ("env", "llm", "result")):
        task["llm"] = {"k": draw(positive_int64s)}
    return task


@st.composite
def prompts(draw: st.DrawFn, *, turn: bool) -> dict:
    """``{system?, user?}`` with a non-empty string; on a turn also the explicit all-empty reset."""
    if turn and draw(st.integers(0, 4)) == 0:
        return {"system": "", "user": ""}
    prompt: dict = {}
    _put(draw, prompt, "system", texts)
    _put(draw, prompt, "user", texts)
    if not any(prompt.values()):
        prompt[draw(st.sampled_from(("system", "user")))] = draw(nonempty_texts)
    return prompt


_pointer_tokens = st.one_of(st.integers(0, 12), texts)
pointers = st.one_of(
    st.just(""),
    st.lists(_pointer_tokens, min_size=1, max_size=4).map(lambda tokens: join("", *tokens)),
)
"""RFC 6901 JSON Pointers (escaped with ``~0``/``~1`` where the tokens need it)."""


@st.composite
def unknown_fields(draw: st.DrawFn) -> dict:
    entry = st.fixed_dictionaries(
        {"source_document_id": texts, "fields": st.dictionaries(pointers, json_values, max_size=4)}
    )
    sources = st.one_of(st.sampled_from(("openai-msg", "atif", "actf", "agenticmd")), nonempty_texts)
    return {"sources": draw(st.dictionaries(sources, entry, max_size=3))}


class _Ids:
    """Document-wide unique tool call ids."""

    def __init__(self) -> None:
        self.used: list[str] = []

    def fresh(self, draw: st.DrawFn) -> str:
        tcid = draw(st.one_of(st.sampled_from(("call_1", "call_2", "toolu_01", "c")), nonempty_texts))
        while tcid in self.used:
            tcid = f"{tcid}#{len(self.used)}"
        self.used.append(tcid)
        return tcid


@st.composite
def _tool_call(draw: st.DrawFn, ids: _Ids, full: bool) -> dict:
    call: dict = {
        "tcid": ids.fresh(draw),
        "fn": draw(st.one_of(st.sampled_from(TOOL_NAMES), nonempty_texts)),
        "args": draw(json_values),
    }
    _put(draw, call, "result", st.one_of(st.sampled_from(TOOL_RESULTS), json_values), full)
    _put(draw, call, "duration_ms", int64s, full)
    _put(draw, call, "extra", json_values, full)
    _put(draw, call, "kind", st.one_of(st.sampled_from(("", "function", "mcp")), texts), full)
    response = st.one_of(
        st.fixed_dictionaries({"status": texts}, optional={"exit_code": int64s}),
        st.fixed_dictionaries({"exit_code": int64s}),
        st.fixed_dictionaries({"status": texts, "exit_code": int64s}),
    )
    _put(draw, call, "response", response, full)
    return call


@st.composite
def _turn(draw: st.DrawFn, turn_id: int, ids: _Ids, full: bool) -> dict:
    turn: dict = {
        "id": turn_id,
        "src": draw(st.one_of(st.sampled_from(SOURCES), nonempty_texts)),
        "msg": draw(json_values),
    }
    _put(draw, turn, "ts", times, full)
    _put(draw, turn, "model", texts, full)
    _put(draw, turn, "effort", json_values, full)
    _put(draw, turn, "reason", st.one_of(st.sampled_from(("", " \n\t", "\u3000", "Let me think.")), texts), full)
    if full or draw(st.booleans()):
        n = draw(st.integers(int(full), 3))
        turn["tool_calls"] = [draw(_tool_call(ids, full)) for _ in range(n)]
    _put(draw, turn, "observation", json_values, full)  # may be replaced by linked results below
    _put(draw, turn, "metrics", json_values, full)
    _put(draw, turn, "nllm", int64s, full)
    _put(draw, turn, "copied", st.booleans(), full)
    _put(draw, turn, "extra", json_values, full)
    _put(draw, turn, "kind", st.one_of(st.sampled_from(("", "autonomous", "llm.response", "context")), texts), full)
    _put(draw, turn, "latency_ms", int64s, full)
    _put(draw, turn, "ttft_ms", int64s, full)
    _put(draw, turn, "env", envs(full), full)
    if turn.get("copied") is not True:  # a copied turn carries no prompt
        _put(draw, turn, "prompt", prompts(turn=True), full)
    _put(draw, turn, "finished_at", times, full)
    return turn


@st.composite
def _observation_with_results(draw: st.DrawFn, tcids: list[str]) -> dict:
    call_ids = st.one_of(st.sampled_from(tcids), st.sampled_from(("no-such-call", "", 7, None)))
    result = st.fixed_dictionaries(
        {"source_call_id": call_ids},
        optional={"content": st.one_of(st.sampled_from(TOOL_RESULTS), json_values), "extra": json_values},
    )
    results = st.lists(st.one_of(result, json_scalars), min_size=1, max_size=3)
    obs = {"results": draw(results)}
    if draw(st.booleans()):
        obs["other"] = draw(json_values)
    return obs


@st.composite
def storylines(draw: st.DrawFn, *, max_turns: int = 4, full: bool | None = None) -> dict:
    """A valid Storyline document.

    ``full=True`` gives a document with every optional field at every level (a lenient ``task`` part may
    still be spelled null / ``""`` / ``{}``, and a copied turn has no prompt); ``full=False`` draws each
    optional field about half of the time; by default one document in four is full.
    """
    if full is None:
        full = draw(st.integers(0, 3)) == 3
    ids = _Ids()
    story: dict = {"schema_version": SCHEMA_VERSION}
    origin = st.fixed_dictionaries(
        {"format": st.one_of(st.sampled_from(("storyline", "atif", "openai-msg")), nonempty_texts)},
        optional={"schema_version": nonempty_texts, "document_id": nonempty_texts},
    )
    if full:
        origin = st.fixed_dictionaries(
            {"format": nonempty_texts, "schema_version": nonempty_texts, "document_id": nonempty_texts}
        )
    _put(draw, story, "origin", origin, full)
    story["session"] = draw(st.one_of(st.sampled_from(("s1", "会话")), nonempty_texts))
    agent_fields = {"name": texts, "ver": texts, "model": texts, "tools": json_values, "extra": json_values}
    if full:
        story["agent"] = draw(st.fixed_dictionaries({"id": nonempty_texts, **agent_fields}))
    else:
        story["agent"] = draw(st.fixed_dictionaries({"id": nonempty_texts}, optional=agent_fields))
    turn_ids = draw(st.lists(int64s, unique=True, min_size=2 if full else 0, max_size=max(max_turns, 2 if full else 0)))
    turns = [draw(_turn(tid, ids, full)) for tid in turn_ids]
    # Link some results through observation.results[].source_call_id on a later turn.
    seen: list[str] = []
    for turn in turns:
        if seen and (full or draw(st.booleans())):
            turn["observation"] = draw(_observation_with_results(list(seen)))
        seen.extend(call["tcid"] for call in turn.get("tool_calls", ()))
    story["turns"] = turns
    _put(draw, story, "run", texts, full)
    _put(draw, story, "trajectory", nonempty_texts, full)
    _put(draw, story, "attempt_id", texts, full)
    _put(draw, story, "notes", texts, full)
    _put(draw, story, "task", tasks(full), full)
    _put(draw, story, "prompt", prompts(turn=False), full)
    _put(draw, story, "started_at", times, full)
    _put(draw, story, "finished_at", times, full)
    _put(draw, story, "final_metrics", json_values, full)
    _put(draw, story, "continued_trajectory_ref", texts, full)
    _put(draw, story, "extra", json_values, full)
    _put(draw, story, "meta", json_values, full)
    if full or draw(st.booleans()):
        uf = draw(unknown_fields())
        story["unknown_fields"] = uf
        if full or draw(st.booleans()):
            story["unknown_key_counts"] = compute_unknown_key_counts(uf)
    elif draw(st.integers(0, 3)) == 0:
        story["unknown_key_counts"] = {}  # consistent with no unknown_fields
    _put(draw, story, "children", st.lists(texts, max_size=3), full)
    parent_fields = {"scid": texts, "ptid": int64s, "rel": st.one_of(st.just("spawn"), texts)}
    if full:
        parent = st.fixed_dictionaries({"psid": nonempty_texts, **parent_fields})
    else:
        parent = st.fixed_dictionaries({"psid": nonempty_texts}, optional=parent_fields)
    _put(draw, story, "parent", parent, full)
    return story


# ------------------------------------------------------------------------------ openai-msg gateway corpora
# Rows the way gateways write them (RFC-0009): each row's `messages` is the whole history so far (exact
# copies), then the new messages, with the awkward parts mixed in — JSON-string and object `arguments`,
# `meta_json` and `env_state`; missing, empty and repeated call ids; reasoning under all three names; vendor
# keys at every level; interleaved sessions; numbers, nulls and strings that look like numbers. Copies are
# generated in the canonical form export rebuilds, and JSON strings are written compactly by orjson.

_GW_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
_GW_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    _GW_TEXT,
    st.sampled_from(["42", "1.0", "null", "true", ""]),
)
_GW_JSON = st.recursive(
    _GW_SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_GW_TEXT, inner, max_size=3), max_leaves=6
)
_GW_VENDOR_KEY = st.sampled_from(["vendor", "x_trace", "cache_hit", "latency_bucket"])
_GW_ROLE_TEXT = st.text(alphabet="abc xyz", min_size=1, max_size=10)


_LS_TOOL = {"type": "function", "function": {"name": "ls", "parameters": {"type": "object", "properties": {}}}}
_GW_TOOL = st.builds(
    lambda name, params: {"type": "function", "function": {"name": name, "parameters": params}},
    st.sampled_from(["cat", "grep", "head"]),
    st.dictionaries(st.sampled_from(["type", "properties", "required"]), _GW_JSON, max_size=2),
)


def _maybe_string(draw, value):
    return orjson.dumps(value).decode() if draw(st.booleans()) else value


@st.composite
def gateway_sessions(draw, sid: str):
    """The rows of one session, in step order."""
    rows = []
    history: list[dict] = []
    if draw(st.booleans()):
        history.append({"role": "system", "content": draw(_GW_ROLE_TEXT)})
    if draw(st.integers(0, 3)) == 0:  # a Codex session's developer message (issue #12: a turn, never residual)
        history.append({"role": "developer", "content": draw(_GW_ROLE_TEXT)})
    history.append({"role": "user", "content": draw(_GW_ROLE_TEXT)})
    pending_calls: list[str] = []
    n_steps = draw(st.integers(1, 4))
    model = draw(st.sampled_from(["gpt-5", "claude-4", "qwen3"]))
    run = draw(st.sampled_from([None, "run-1"]))
    # The request's tool definitions: mostly the session's own list on every row (as gateways log them),
    # sometimes spelled as a JSON string, changed, empty or missing on a row.
    tools = draw(st.lists(_GW_TOOL, min_size=1, max_size=2, unique_by=lambda t: t["function"]["name"]))
    for step in range(1, n_steps + 1):
        new: list[dict] = []
        for cid in pending_calls:
            tool = {"role": "tool", "tool_call_id": cid, "content": draw(st.one_of(_GW_ROLE_TEXT, st.just("")))}
            if draw(st.booleans()):
                tool["name"] = "fn_tool"
            new.append(tool)
        pending_calls = []
        if step > 1 and draw(st.integers(0, 3)) == 0:  # tool output without an id: a result of the turn before
            new.append({"role": "tool", "content": draw(st.one_of(_GW_ROLE_TEXT, st.just("")))})
        if step > 1 and draw(st.integers(0, 4)) == 0:  # a later developer or system message: a turn of its own
            new.append({"role": draw(st.sampled_from(["developer", "system"])), "content": draw(_GW_ROLE_TEXT)})
        if step > 1 and draw(st.integers(0, 5)) == 0:  # an assistant message the gateway did not select
            unselected = {"role": "assistant", "content": draw(_GW_ROLE_TEXT)}
            if draw(st.booleans()):
                unselected["reasoning_content"] = draw(_GW_ROLE_TEXT)
            new.append(unselected)
        if step > 1 and draw(st.booleans()):
            new.append({"role": "user", "content": draw(_GW_ROLE_TEXT)})
        response: dict = {"role": "assistant", "content": draw(st.one_of(_GW_ROLE_TEXT, st.just("")))}
        reason_key = draw(st.sampled_from([None, "reasoning_content", "reasoning", "thinking"]))
        if reason_key:
            response[reason_key] = draw(st.one_of(_GW_ROLE_TEXT, st.none()))
        n_calls = draw(st.integers(0 if response["content"] else 1, 2))
        calls = []
        for c in range(n_calls):
            cid = draw(st.sampled_from([f"call_{step}_{c}", "call_0", "", None]))
            call: dict = {"type": "function", "function": {"name": draw(st.sampled_from(["ls", "cat", "grep"]))}}
            if cid is not None:
                call["id"] = cid
            args = draw(st.dictionaries(st.sampled_from(["path", "n", "q"]), _GW_JSON, max_size=2))
            call["function"]["arguments"] = _maybe_string(draw, args)
            if draw(st.integers(0, 4)) == 0:
                call["index"] = c  # a vendor key on the call
            calls.append(call)
            if cid:
                pending_calls.append(cid)
        if calls:
            response["tool_calls"] = calls
        if draw(st.integers(0, 3)) == 0:
            response[draw(_GW_VENDOR_KEY)] = draw(_GW_JSON)
        row: dict = {"session_id": sid, "step_id": step}
        if run:
            row["run_id"] = run
        row["agent_model"] = model
        if draw(st.booleans()):
            row["created_at"] = f"2026-11-30T10:00:{step:02d}Z"
        row["messages"] = [dict(m) for m in history] + new
        row["response"] = response
        env_state = {"prompt_tokens": draw(st.integers(0, 10**6)), "total_latency_ms": draw(st.integers(0, 10**5))}
        if draw(st.booleans()):
            env_state["request_id"] = f"req-{step}"
        if draw(st.booleans()):
            env_state[draw(_GW_VENDOR_KEY)] = draw(_GW_JSON)
        meta = {"env_state": _maybe_string(draw, env_state)}
        if draw(st.booleans()):
            meta["group_id"] = "g1"
        row["meta_json"] = _maybe_string(draw, meta)
        if draw(st.booleans()):
            row["env_name"] = draw(st.sampled_from(["swe", "web"]))
        if draw(st.booleans()):
            row["reward"] = draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 5)))
        if draw(st.integers(0, 3)) == 0:
            row[draw(_GW_VENDOR_KEY)] = draw(_GW_JSON)
        # Last, like the vendor key: export puts residual row keys after the mapped ones (key order is outside
        # the fidelity boundary), and the round trip property compares documents with their key order.
        spelling = draw(st.sampled_from(["same", "same", "string", "other", "empty", "absent"]))
        if spelling == "empty":
            row["tools"] = draw(st.sampled_from([[], None]))
        elif spelling != "absent":
            spelled = {"same": tools, "string": orjson.dumps(tools).decode(), "other": [*tools[:1], _LS_TOOL]}
            row["tools"] = spelled[spelling]
        rows.append(row)
        # The next request's history: this row's messages and its response, as a client resends them.
        history = [_copy(m) for m in row["messages"]] + [_copy(response)]
    return rows


def _copy(msg: dict) -> dict:
    """A history copy in the canonical form (compared fields only, as export rebuilds copies)."""
    return {k: msg[k] for k in ("role", "content", "tool_calls", "tool_call_id") if k in msg}


@st.composite
def corpora(draw):
    """_GW_JSON Lines text of 1–3 sessions, rows interleaved."""
    per_session = [draw(gateway_sessions(f"s{i}")) for i in range(draw(st.integers(1, 3)))]
    queues = [list(rows) for rows in per_session]
    lines = []
    while any(queues):
        q = draw(st.sampled_from([q for q in queues if q]))
        lines.append(q.pop(0))
    return lines


# ------------------------------------------------------------------------------------- ShareGPT records
# Records and bare conversations as the reference converter writes them and as hand-edited files have them:
# think blocks (closed on their own line or inline), <tool_call> and <tool_response> blocks in the
# reference's three JSON styles, odd whitespace, unknown roles and extra element keys.

_SG_EMPTY_THINK = "<think>\n</think>\n"
# The reference's prompt for no tools, as its converter wrote it (tests/data/sharegpt/ex3_plain.*).
_SG_SYSTEM_NO_TOOLS = json.loads(
    (Path(__file__).resolve().parent / "data" / "sharegpt" / "ex3_plain.conversations.json").read_text(encoding="utf-8")
)[0]["value"]


def _sg_human(value: Any) -> dict[str, Any]:
    return {"from": "human", "value": value}


def _sg_gpt_element(value: Any) -> dict[str, Any]:
    return {"from": "gpt", "value": value}


def _sg_tool(value: Any) -> dict[str, Any]:
    return {"from": "tool", "value": value}


_SG_TEXT = st.one_of(
    st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8),
    st.sampled_from(["", " ", "\n", "42", "Zürich ☀", "<think>", "</think>", "{", "[1]", "null", "a\u0000b"]),
)
_SG_WS = st.sampled_from(["", " ", "\n", "\n\n", "\t", " \n "])
_SG_NAMES = st.sampled_from(["ls", "cat", "web_search", "terminal"])
_SG_IDS = st.sampled_from(["c1", "c2", "call_A", "", "call-2-0"])
_SG_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _SG_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_SG_TEXT, inner, max_size=3),
    max_leaves=6,
)
_SG_ARGS = st.dictionaries(_SG_TEXT, _SG_JSON, max_size=3)


def _sg_dump(value: Any, style: str) -> str:
    if style == "compact":
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    if style == "ascii":
        return json.dumps(value)
    return json.dumps(value, ensure_ascii=False)


_SG_STYLE = st.sampled_from(["default", "default", "default", "compact", "ascii"])


@st.composite
def _sg_think(draw):
    body = draw(_SG_TEXT)
    return f"<think>\n{body}\n</think>\n" if draw(st.booleans()) else f"<think>{body}</think>"


@st.composite
def _sg_call(draw):
    payload = {"name": draw(_SG_NAMES), "arguments": draw(_SG_ARGS)}
    sep = draw(st.sampled_from(["\n", "\n", ""]))
    return f"<tool_call>{sep}{_sg_dump(payload, draw(_SG_STYLE))}{sep}</tool_call>"


@st.composite
def _sg_gpt(draw):
    if draw(st.booleans()):  # the writer's own shape
        think = draw(_sg_think()) if draw(st.booleans()) else _SG_EMPTY_THINK
        content = draw(_SG_TEXT)
        calls = draw(st.lists(_sg_call(), max_size=3))
        if calls:
            return (think + (content + "\n" if content.strip() else "") + "\n".join(calls)).rstrip()
        return (think + content).strip()
    parts = draw(st.lists(st.one_of(_sg_think(), _SG_TEXT, _sg_call(), _SG_WS), max_size=5))
    return "".join(parts)


@st.composite
def _sg_response(draw):
    payload: dict[str, Any] = {}
    if draw(st.integers(0, 4)):
        payload["tool_call_id"] = draw(_SG_IDS)
    if draw(st.integers(0, 4)):
        payload["name"] = draw(_SG_NAMES)
    payload["content"] = draw(st.one_of(_SG_TEXT, _SG_JSON))
    return f"<tool_response>\n{_sg_dump(payload, draw(_SG_STYLE))}\n</tool_response>"


_SG_TOOL = st.builds(
    lambda blocks, sep: sep.join(blocks),
    st.lists(_sg_response(), min_size=1, max_size=3),
    st.sampled_from(["\n", "\n", "\n\n"]),
)
_SG_ELEMENT = st.one_of(
    st.builds(_sg_human, _SG_TEXT),
    st.builds(_sg_gpt_element, _sg_gpt()),
    st.builds(_sg_gpt_element, _sg_gpt()),
    st.builds(_sg_tool, _SG_TOOL),
    st.builds(_sg_tool, _SG_TOOL),
    st.builds(lambda v: {"from": "system", "value": v}, st.one_of(_SG_TEXT, st.just(_SG_SYSTEM_NO_TOOLS))),
    st.builds(
        lambda r, v: {"from": r, "value": v}, st.sampled_from(["function_call", "observation", "user"]), _SG_TEXT
    ),
    st.builds(lambda v, w: {**_sg_human(v), "weight": w}, _SG_TEXT, st.integers(0, 1)),
)
_SG_CONVERSATION = st.lists(_SG_ELEMENT, max_size=7)
sharegpt_records = st.one_of(
    _SG_CONVERSATION,
    st.fixed_dictionaries(
        {"conversations": _SG_CONVERSATION},
        optional={
            "timestamp": st.sampled_from(["2026-03-30T14:22:31.456789", "2026-03-30T14:22:31Z", 5]),
            "model": st.sampled_from(["m", "", "anthropic/claude-sonnet-4.6"]),
            "completed": st.booleans(),
            "partial": st.booleans(),
            "api_calls": st.integers(0, 9),
            "toolsets_used": st.lists(_SG_NAMES, max_size=2),
            "prompt_index": st.integers(0, 9),
            "metadata": st.fixed_dictionaries(
                {},
                optional={
                    "batch_num": st.integers(0, 3),
                    "timestamp": st.just("2026-11-29T23:57:00"),
                    "model": _SG_NAMES,
                },
            ),
        },
    ),
)
