"""Generated gateway corpora: rows → Storyline → rows → Storyline is stable, and same-source export gives
the input back within RFC-0009's fidelity boundary.

The generator writes rows the way gateways do — each row's `messages` is the whole history so far (exact
copies), then the new messages — with the awkward parts mixed in: JSON-string and object `arguments`,
`meta_json` and `env_state`; missing, empty and repeated call ids; reasoning under all three names;
vendor keys at every level; interleaved sessions; numbers, nulls and strings that look like numbers.
Copies are generated in the canonical form export rebuilds (the fidelity boundary normalises them), and
JSON strings are written compactly by orjson, so export must equal the input exactly.
"""

from __future__ import annotations

import orjson
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc

TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12)
SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
    st.sampled_from(["42", "1.0", "null", "true", ""]),
)
JSON = st.recursive(
    SCALAR, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6
)
VENDOR_KEY = st.sampled_from(["vendor", "x_trace", "cache_hit", "latency_bucket"])
ROLE_TEXT = st.text(alphabet="abc xyz", min_size=1, max_size=10)


def _maybe_string(draw, value):
    return orjson.dumps(value).decode() if draw(st.booleans()) else value


@st.composite
def sessions(draw, sid: str):
    """The rows of one session, in step order."""
    rows = []
    history: list[dict] = []
    if draw(st.booleans()):
        history.append({"role": "system", "content": draw(ROLE_TEXT)})
    history.append({"role": "user", "content": draw(ROLE_TEXT)})
    pending_calls: list[str] = []
    n_steps = draw(st.integers(1, 4))
    model = draw(st.sampled_from(["gpt-5", "claude-4", "qwen3"]))
    run = draw(st.sampled_from([None, "run-1"]))
    for step in range(1, n_steps + 1):
        new: list[dict] = []
        for cid in pending_calls:
            tool = {"role": "tool", "tool_call_id": cid, "content": draw(st.one_of(ROLE_TEXT, st.just("")))}
            if draw(st.booleans()):
                tool["name"] = "fn_tool"
            new.append(tool)
        pending_calls = []
        if step > 1 and draw(st.booleans()):
            new.append({"role": "user", "content": draw(ROLE_TEXT)})
        response: dict = {"role": "assistant", "content": draw(st.one_of(ROLE_TEXT, st.just("")))}
        reason_key = draw(st.sampled_from([None, "reasoning_content", "reasoning", "thinking"]))
        if reason_key:
            response[reason_key] = draw(st.one_of(ROLE_TEXT, st.none()))
        n_calls = draw(st.integers(0 if response["content"] else 1, 2))
        calls = []
        for c in range(n_calls):
            cid = draw(st.sampled_from([f"call_{step}_{c}", "call_0", "", None]))
            call: dict = {"type": "function", "function": {"name": draw(st.sampled_from(["ls", "cat", "grep"]))}}
            if cid is not None:
                call["id"] = cid
            args = draw(st.dictionaries(st.sampled_from(["path", "n", "q"]), JSON, max_size=2))
            call["function"]["arguments"] = _maybe_string(draw, args)
            if draw(st.integers(0, 4)) == 0:
                call["index"] = c  # a vendor key on the call
            calls.append(call)
            if cid:
                pending_calls.append(cid)
        if calls:
            response["tool_calls"] = calls
        if draw(st.integers(0, 3)) == 0:
            response[draw(VENDOR_KEY)] = draw(JSON)
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
            env_state[draw(VENDOR_KEY)] = draw(JSON)
        meta = {"env_state": _maybe_string(draw, env_state)}
        if draw(st.booleans()):
            meta["group_id"] = "g1"
        row["meta_json"] = _maybe_string(draw, meta)
        if draw(st.booleans()):
            row["env_name"] = draw(st.sampled_from(["swe", "web"]))
        if draw(st.booleans()):
            row["reward"] = draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.integers(-5, 5)))
        if draw(st.integers(0, 3)) == 0:
            row[draw(VENDOR_KEY)] = draw(JSON)
        rows.append(row)
        # The next request's history: this row's messages and its response, as a client resends them.
        history = [_copy(m) for m in row["messages"]] + [_copy(response)]
    return rows


def _copy(msg: dict) -> dict:
    """A history copy in the canonical form (compared fields only, as export rebuilds copies)."""
    return {k: msg[k] for k in ("role", "content", "tool_calls", "tool_call_id") if k in msg}


@st.composite
def corpora(draw):
    """JSON Lines text of 1–3 sessions, rows interleaved."""
    per_session = [draw(sessions(f"s{i}")) for i in range(draw(st.integers(1, 3)))]
    queues = [list(rows) for rows in per_session]
    lines = []
    while any(queues):
        q = draw(st.sampled_from([q for q in queues if q]))
        lines.append(q.pop(0))
    return lines


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(corpora())
def test_rows_storyline_rows_storyline_is_stable(rows):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    for story in stories:
        pc.validate(story)
    exported = pc.from_storyline("openai-msg", stories)
    again = pc.into_storyline("openai-msg", exported, document_id="gen/cap.jsonl")
    assert orjson.dumps(again) == orjson.dumps(stories)


@SETTINGS
@given(corpora())
def test_same_source_export_equals_the_input(rows):
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    exported = [orjson.loads(line) for line in pc.from_storyline("openai-msg", stories).split("\n") if line]
    assert len(exported) == len(rows)
    for got, want in zip(exported, rows, strict=True):
        assert _tag(got) == _tag(want)


def _tag(value):
    """Type-strict comparison form: dict key order ignored, 1 / 1.0 / True told apart."""
    if isinstance(value, dict):
        return {k: _tag(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_tag(v) for v in value]
    return (type(value).__name__, value)


@settings(max_examples=25, deadline=None)
@given(corpora())
def test_synthesized_rows_read_back_to_the_same_turns(rows):
    """Without openai-msg residual, export synthesizes rows whose reading gives the same conversation."""
    data = b"".join(orjson.dumps(r) + b"\n" for r in rows)
    stories = pc.into_storyline("openai-msg", data, document_id="gen/cap.jsonl")
    for story in stories:
        bare = {k: v for k, v in story.items() if k not in ("unknown_fields", "unknown_key_counts", "meta")}
        back = pc.into_storyline("openai-msg", pc.from_storyline("openai-msg", bare), document_id="x")
        assert len(back) == 1
        got = [(t["src"], t["msg"], [(c["fn"], c["args"]) for c in t.get("tool_calls", [])]) for t in back[0]["turns"]]
        want = [(t["src"], t["msg"], [(c["fn"], c["args"]) for c in t.get("tool_calls", [])]) for t in story["turns"]]
        assert _tag(got) == _tag(want)
