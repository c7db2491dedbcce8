"""Golden tests for the ``openai-msg`` format: RFC-0009's four mapping tables, its consumption rules and
refusals, and the project's reading where the RFC is silent (issue 3).

Every golden input is a list of rows (Python dicts serialised with ``json.dumps``) and the expectation is
the exact Storyline fragment it must give. Inputs registered with ``golden()`` are also run through the
writer at the end of the module: same-source export must read back to the same documents, and the
exported rows must equal the input within RFC-0009's fidelity boundary (``boundary()`` below).
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from pchronicle_datasets import FormatError, compute_unknown_key_counts, from_storyline, into_storyline, validate
from pchronicle_datasets.formats import openai_msg as fmt
from pchronicle_datasets.pointer import get as pointer_get

NAME = "openai-msg"
DOC = "captures/gw-2026-03-01.jsonl"
T0 = "2026-03-01T10:00:00Z"
T1 = "2026-03-01T10:00:05Z"
T2 = "2026-03-01T10:00:09Z"
HERE = Path(__file__).resolve().parent
SAMPLES = HERE.parent / "pchronicle_datasets" / "samples"
OPENAI_SAMPLES = sorted((SAMPLES / "openai_msg").glob("*.json*"))
STORYLINE_SAMPLES = sorted((SAMPLES / "storyline").glob("*.storyline.json"))

ROW_METRICS = ("reward", "step_reward", "is_terminal", "is_truncated", "is_session_completed", "is_trainable")
ENV_STATE_METRICS = (
    "prompt_tokens",
    "completion_tokens",
    "total_tokens",
    "request_bytes",
    "response_bytes",
    "output_bytes",
    "output_chunk_count",
    "finish_reason",
    "status_code",
    "retry_count",
    "upstream_latency_ms",
    "gateway_overhead_ms",
    "total_latency_ms",
    "ttft_ms",
    "truncate_reason",
    "error_type",
    "error_text",
    "client_cancelled",
    "upstream_cancelled",
    "synthetic_stop",
    "is_truncated",
    "is_session_completed",
    "max_steps",
    "is_stream",
    "payload_sampled",
    "created_at",
    "completed_at",
)
EMPTY_ROW_KEYS = ("blob_manifest", "chosen_response", "rejected_response", "ground_truth_answer", "reference_answer")
EMPTY_MSG_KEYS = ("name", "refusal", "tool_call_id", "tool_calls")
REASONING_KEYS = ("reasoning_content", "reasoning", "thinking")
EMPTIES = (None, "", [], {})


# ------------------------------------------------------------------------------------------ builders


def system(content: Any, **extra: Any) -> dict:
    return {"role": "system", "content": content, **extra}


def user(content: Any, **extra: Any) -> dict:
    return {"role": "user", "content": content, **extra}


def assistant(content: Any = None, **extra: Any) -> dict:
    return {"role": "assistant", "content": content, **extra}


def tool(call_id: Any, content: Any, **extra: Any) -> dict:
    return {"role": "tool", "tool_call_id": call_id, "content": content, **extra}


def call(call_id: Any, name: str, arguments: Any = "{}", **extra: Any) -> dict:
    """An OpenAI tool call; ``arguments`` is written as given (usually a JSON string)."""
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}, **extra}


def row(step: Any, messages: Any, response: Any = None, *, session: Any = "s1", **extra: Any) -> dict:
    out: dict[str, Any] = {"session_id": session, "step_id": step, "messages": messages}
    if response is not None:
        out["response"] = response
    out.update(extra)
    return out


def compact(value: Any) -> str:
    """JSON text the way a producer (and orjson) writes it: no whitespace."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def jsonl(rows: list, root: dict | None = None) -> str:
    assert not root
    return "".join(json.dumps(r) + "\n" for r in rows)


def array(rows: list, root: dict | None = None) -> str:
    assert not root
    return json.dumps(rows, indent=1)


def envelope(rows: list, root: dict | None = None) -> str:
    return json.dumps({**(root or {}), "session_steps": rows}, indent=2)


SHAPES = {"jsonl": jsonl, "array": array, "envelope": envelope}

# Golden inputs that the writer tests at the bottom of the module replay: name → (rows, shape, root).
GOLDEN: dict[str, tuple[list, str, dict | None]] = {}


def golden(name: str, rows: list, shape: str = "jsonl", root: dict | None = None) -> list:
    assert name not in GOLDEN, name
    GOLDEN[name] = (rows, shape, root)
    return rows


# ------------------------------------------------------------------------------------------ readers


def read(rows: list, shape: str = "jsonl", root: dict | None = None, doc: str | None = DOC) -> list[dict]:
    """Decode through the hub API and check the invariants every openai-msg document has."""
    stories = into_storyline(NAME, SHAPES[shape](rows, root), document_id=doc)
    for story in stories:
        check_invariants(story, doc)
    return stories


def one(rows: list, **kw: Any) -> dict:
    stories = read(rows, **kw)
    assert len(stories) == 1, [s["session"] for s in stories]
    return stories[0]


def check_invariants(story: dict, doc: str | None) -> None:
    validate(story)
    assert story["schema_version"] == "storyline/v1"
    assert story["origin"] == ({"format": NAME, "document_id": doc} if doc else {"format": NAME})
    assert "schema_version" not in story["origin"]
    source = story["unknown_fields"]["sources"][NAME]
    assert source["source_document_id"] == (doc or "")
    assert story["unknown_key_counts"] == compute_unknown_key_counts(story["unknown_fields"])
    assert story["meta"][NAME]["version"] == 1
    assert story["agent"]["name"] == story["agent"]["id"]


def fields(story: dict) -> dict:
    return story["unknown_fields"]["sources"][NAME]["fields"]


def turn(story: dict, tid: int) -> dict:
    found = [t for t in story["turns"] if t["id"] == tid]
    assert len(found) == 1, (tid, [t["id"] for t in story["turns"]])
    return found[0]


def ids(story: dict) -> list[int]:
    return [t["id"] for t in story["turns"]]


def semantic(story: dict) -> dict:
    """The document without the export hints and the residual bookkeeping."""
    return {k: v for k, v in story.items() if k not in ("meta", "unknown_fields", "unknown_key_counts")}


def refused(data: str, doc: str | None = DOC) -> FormatError:
    with pytest.raises(FormatError) as info:
        into_storyline(NAME, data, document_id=doc)
    err = info.value
    assert err.document_id == doc
    if doc:
        assert doc in str(err)
    assert err.pointer in str(err) or err.pointer == ""
    return err


# --------------------------------------------------------------------------- the fidelity boundary


def _empty(value: Any) -> bool:
    return value is None or value == "" or value == [] or value == {}


def _json_string(value: Any, kinds: tuple = (dict, list)) -> Any:
    """A JSON-encoded string as ("json-string", decoded value): its whitespace does not count."""
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return value
        if isinstance(decoded, kinds):
            return ("json-string", decoded)
    return value


def _valid_output(msg: Any) -> bool:
    return isinstance(msg, dict) and any(not _empty(msg.get(k)) for k in ("content", "refusal", "tool_calls"))


def _copy_key(msg: Any) -> Any:
    """What a history copy is compared on (issue 3, reading 1): role, content, calls, tool_call_id."""
    if not isinstance(msg, dict):
        return msg
    calls = []
    for c in msg.get("tool_calls") or []:
        fn = c.get("function") if isinstance(c, dict) and isinstance(c.get("function"), dict) else {}
        args = _json_string(fn.get("arguments"), kinds=(object,))
        calls.append((c.get("id") or None, fn.get("name"), args) if isinstance(c, dict) else c)
    content = msg.get("content")
    return (msg.get("role"), None if content == "" else content, calls, msg.get("tool_call_id") or None)


def _norm_call(c: Any) -> Any:
    if not isinstance(c, dict):
        return c
    out = {k: v for k, v in c.items() if not (k == "type" and v == "function")}
    if isinstance(out.get("function"), dict) and "arguments" in out["function"]:
        out["function"] = {**out["function"], "arguments": _json_string(out["function"]["arguments"], (object,))}
    return out


def _norm_message(msg: Any) -> Any:
    if not isinstance(msg, dict):
        return msg
    out: dict[str, Any] = {}
    for key, value in msg.items():
        if key in EMPTY_MSG_KEYS and _empty(value):
            continue  # known empty values count as missing
        if key in REASONING_KEYS and value is None:
            continue  # a null reasoning is a known empty value
        if key == "content":
            value = _json_string(value)  # content parts re-encoded as a string
        if key == "tool_calls" and isinstance(value, list):
            value = [_norm_call(c) for c in value]
        out[key] = value
    return out


def _norm_copy(msg: Any) -> Any:
    """A history copy: its compared fields once; what a copy normalises away is gone; the rest stays."""
    if not isinstance(msg, dict):
        return msg
    rest = {}
    for key, value in msg.items():
        if key in ("role", "content", "tool_calls", "tool_call_id"):
            continue
        if key in REASONING_KEYS and (value is None or isinstance(value, str)):
            continue
        if key in EMPTY_MSG_KEYS and _empty(value):
            continue
        if key == "refusal" and _empty(msg.get("content")):
            continue
        rest[key] = value
    return {"history-copy": _copy_key(msg), **rest}


def _norm_env_state(value: Any, row: dict) -> Any:
    wrapped = _json_string(value, kinds=(dict,))
    inner = wrapped[1] if isinstance(wrapped, tuple) else wrapped
    if isinstance(inner, dict):
        # A row-level metric wins over env_state and consumes its namesake.
        inner = {k: v for k, v in inner.items() if not (k in ROW_METRICS and k in row)}
    return ("json-string", inner) if isinstance(wrapped, tuple) else inner


def _norm_meta(value: Any, row: dict) -> Any:
    wrapped = _json_string(value, kinds=(dict,))
    inner = wrapped[1] if isinstance(wrapped, tuple) else wrapped
    if isinstance(inner, dict) and "env_state" in inner:
        inner = {**inner, "env_state": _norm_env_state(inner["env_state"], row)}
    return ("json-string", inner) if isinstance(wrapped, tuple) else inner


def boundary(rows: list, root: dict | None = None) -> dict:
    """Rows as RFC-0009's fidelity boundary sees them.

    Ignored: key order; whitespace inside JSON strings (arguments, meta_json, env_state, content parts);
    known empty values; ``type: "function"``; what history copies normalise away (issue 3, reading 1);
    an env_state metric shadowed by the row-level one. Everything else must come back.
    """
    rows = copy.deepcopy(rows)
    prefix: dict[int, int] = {}
    sessions: dict[Any, list[int]] = {}
    for i, r in enumerate(rows):
        sessions.setdefault(r.get("session_id"), []).append(i)
    for members in sessions.values():
        history: list = []
        for i in sorted(members, key=lambda i: rows[i].get("step_id")):
            msgs = rows[i].get("messages") if isinstance(rows[i].get("messages"), list) else []
            keys = [_copy_key(m) for m in msgs]
            p = 0
            while p < min(len(keys), len(history)) and keys[p] == history[p]:
                p += 1
            prefix[i] = p
            response = rows[i].get("response")
            history = keys + ([_copy_key(response)] if _valid_output(response) else [])
    out = []
    for i, r in enumerate(rows):
        norm: dict[str, Any] = {}
        for key, value in r.items():
            if key in EMPTY_ROW_KEYS and _empty(value):
                continue
            if key == "messages" and isinstance(value, list):
                value = [_norm_copy(m) if j < prefix[i] else _norm_message(m) for j, m in enumerate(value)]
            elif key == "response":
                value = _norm_message(value)
            elif key == "meta_json":
                value = _norm_meta(value, r)
            norm[key] = value
        out.append(norm)
    return {"root": root or {}, "rows": out}


def parse_export(text: str) -> tuple[list, dict]:
    """Rows and root fields of exported text (an envelope, or JSON Lines of rows)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if len(lines) == 1:
        whole = json.loads(lines[0])
        if isinstance(whole, dict) and "session_steps" in whole:
            return whole["session_steps"], {k: v for k, v in whole.items() if k != "session_steps"}
    return [json.loads(line) for line in lines], {}


def source_rows(data: str) -> tuple[list, dict]:
    try:
        whole = json.loads(data)
    except ValueError:
        return [json.loads(line) for line in data.splitlines() if line.strip()], {}
    if isinstance(whole, list):
        return whole, {}
    if "session_steps" in whole:
        return whole["session_steps"], {k: v for k, v in whole.items() if k != "session_steps"}
    return [whole], {}


def assert_same_source(data: str, doc: str = DOC) -> str:
    """Export equals the input within the fidelity boundary, and reads back to the same documents."""
    stories = into_storyline(NAME, data, document_id=doc)
    text = from_storyline(NAME, stories)
    rows_out, root_out = parse_export(text)
    rows_in, root_in = source_rows(data)
    assert boundary(rows_out, root_out) == boundary(rows_in, root_in)
    assert into_storyline(NAME, text, document_id=doc) == stories
    return text


def test_boundary_helper_ignores_only_what_the_rfc_normalises() -> None:
    a = [row(1, [user("q", name=None)], assistant(None, tool_calls=[call("c", "f", '{"a": 1}')]), blob_manifest=[])]
    b = [
        row(
            1, [user("q")], assistant(None, tool_calls=[{"id": "c", "function": {"name": "f", "arguments": '{"a":1}'}}])
        )
    ]
    assert boundary(a) == boundary(b)
    c = copy.deepcopy(b)
    c[0]["response"]["tool_calls"][0]["function"]["arguments"] = {"a": 1}  # string vs object counts
    assert boundary(c) != boundary(b)
    d = copy.deepcopy(b)
    d[0]["messages"][0]["name"] = "alice"  # a non-empty value counts
    assert boundary(d) != boundary(b)
    # A history copy may lose its reasoning; a new message may not.
    r1 = row(1, [user("q")], assistant("A", reasoning_content="why"))
    copy_ok = row(2, [user("q"), assistant("A"), user("q2")], assistant("B"))
    copy_full = row(2, [user("q"), assistant("A", reasoning_content="why"), user("q2")], assistant("B"))
    assert boundary([r1, copy_ok]) == boundary([r1, copy_full])
    assert boundary([row(1, [user("q")], assistant("A", reasoning_content="x"))]) != boundary(
        [row(1, [user("q")], assistant("A"))]
    )


# =============================================================================== shapes and grouping

MINIMAL = golden("minimal", [row(1, [system("Be brief."), user("2+2?")], assistant("4"), created_at=T0)])


def test_minimal_row_gives_the_whole_document() -> None:
    story = one(MINIMAL)
    assert {k: v for k, v in story.items() if k != "meta"} == {
        "schema_version": "storyline/v1",
        "origin": {"format": "openai-msg", "document_id": DOC},
        "session": "s1",
        "agent": {"id": "openai-import", "name": "openai-import"},
        "turns": [
            {"id": 1, "src": "system", "msg": "Be brief.", "copied": True, "kind": "context"},
            {"id": 2, "src": "user", "msg": "2+2?", "kind": "llm.request", "ts": T0},
            {"id": 3, "src": "agent", "msg": "4", "nllm": 1, "kind": "llm.response", "ts": T0},
        ],
        "unknown_fields": {"sources": {"openai-msg": {"source_document_id": DOC, "fields": {}}}},
        "unknown_key_counts": {"openai-msg": {}},
    }
    hints = story["meta"]["openai-msg"]
    assert hints["version"] == 1
    assert [(h["r"], h["step_id"]) for h in hints["rows"]] == [(0, 1)]


TWO_SESSIONS = [
    row(1, [system("S"), user("q1")], assistant("a1"), session="alpha", vendor_row={"x": 1}),
    row(1, [user("hello")], assistant("hi"), session="beta"),
    row(2, [system("S"), user("q1"), assistant("a1"), user("q2")], assistant("a2"), session="alpha"),
]
for _shape in SHAPES:
    golden(f"two_sessions_{_shape}", TWO_SESSIONS, shape=_shape)


def test_three_input_shapes_give_the_same_documents() -> None:
    as_jsonl = read(TWO_SESSIONS, shape="jsonl")
    assert read(TWO_SESSIONS, shape="array") == as_jsonl
    assert read(TWO_SESSIONS, shape="envelope") == as_jsonl
    assert [s["session"] for s in as_jsonl] == ["alpha", "beta"]
    assert fields(as_jsonl[0]) == {"/session_steps/0/vendor_row": {"x": 1}}


def test_rows_grouped_by_session_in_first_appearance_order() -> None:
    alpha, beta = read(TWO_SESSIONS)
    assert (alpha["session"], beta["session"]) == ("alpha", "beta")
    assert [(t["id"], t["msg"]) for t in alpha["turns"]] == [(1, "S"), (2, "q1"), (3, "a1"), (4, "q2"), (5, "a2")]
    assert [(t["id"], t["msg"]) for t in beta["turns"]] == [(1, "hello"), (2, "hi")]
    assert [h["r"] for h in alpha["meta"]["openai-msg"]["rows"]] == [0, 2]


OUT_OF_ORDER = golden(
    "out_of_order",
    [
        row(2, [system("S"), user("q1"), assistant("a1"), user("q2")], assistant("a2"), reward=1),
        row(1, [system("S"), user("q1")], assistant("a1"), vendor="first-step", reward=0),
    ],
)


def test_turns_follow_step_id_order_when_rows_are_out_of_order() -> None:
    story = one(OUT_OF_ORDER)
    assert story["turns"] == [
        {"id": 1, "src": "system", "msg": "S", "copied": True, "kind": "context"},
        {"id": 2, "src": "user", "msg": "q1", "kind": "llm.request"},
        {"id": 3, "src": "agent", "msg": "a1", "nllm": 1, "kind": "llm.response", "metrics": {"reward": 0}},
        {"id": 4, "src": "user", "msg": "q2", "kind": "llm.request"},
        {"id": 5, "src": "agent", "msg": "a2", "nllm": 1, "kind": "llm.response", "metrics": {"reward": 1}},
    ]
    assert fields(story) == {"/session_steps/1/vendor": "first-step"}  # each row keeps its own {r}
    assert story["final_metrics"] == {"reward": 1}


def test_json_lines_pointers_use_the_row_index_and_errors_the_physical_line() -> None:
    """Decision (docs/formats/openai-msg.md): blank lines are not rows, so {r} counts non-blank lines only
    (export writes no blank lines and gives back the same pointers); errors name the physical line."""
    text = (
        json.dumps(row(1, [user("q")], assistant("a"))) + "\n\n" + json.dumps(row(2, [user("q2")], assistant("b"), x=1))
    )
    [story] = into_storyline(NAME, text + "\n", document_id=DOC)
    assert fields(story) == {"/session_steps/1/x": 1}
    assert into_storyline(NAME, from_storyline(NAME, [story]), document_id=DOC) == [story]
    bad = json.dumps(row(1, [user("q")], assistant("a"))) + "\n\n" + json.dumps(row(0, [user("q2")], assistant("b")))
    err = refused(bad)
    assert (err.pointer, err.line) == ("/session_steps/1/step_id", 3)


def test_empty_file_is_zero_documents() -> None:
    assert into_storyline(NAME, "", document_id=DOC) == []
    assert into_storyline(NAME, b"", document_id=DOC) == []
    assert into_storyline(NAME, " \n\n", document_id=DOC) == []


def test_session_split_across_two_files_gives_one_document_per_file() -> None:
    first = [row(1, [system("S"), user("q1")], assistant("a1"))]
    second = [row(2, [system("S"), user("q1"), assistant("a1"), user("q2")], assistant("a2"))]
    [a] = read(first, doc="day1.jsonl")
    [b] = read(second, doc="day2.jsonl")
    assert a["session"] == b["session"] == "s1"
    assert ids(a) == [1, 2, 3]
    # In the second file the step-2 row is the session's first row: its history becomes context turns.
    assert b["turns"] == [
        {"id": 1, "src": "system", "msg": "S", "copied": True, "kind": "context"},
        {"id": 2, "src": "user", "msg": "q1", "copied": True, "kind": "llm.request"},
        {"id": 3, "src": "agent", "msg": "a1", "copied": True, "kind": "llm.response"},
        {"id": 6, "src": "user", "msg": "q2", "kind": "llm.request"},
        {"id": 7, "src": "agent", "msg": "a2", "nllm": 1, "kind": "llm.response"},
    ]
    assert (a["origin"]["document_id"], b["origin"]["document_id"]) == ("day1.jsonl", "day2.jsonl")


def test_alias_openai_messages_reads_and_writes() -> None:
    data = jsonl(MINIMAL)
    stories = into_storyline("openai-messages", data, document_id=DOC)
    assert stories == into_storyline(NAME, data, document_id=DOC)
    assert from_storyline("openai-messages", stories) == from_storyline(NAME, stories)


VENDOR_ROW = golden("vendor_row", [row(1, [user("q")], assistant("a"), vendor_row=[1, 2], **{"odd/key~": True})])


def test_residual_key_is_the_whole_source_pointer() -> None:
    story = one(VENDOR_ROW)
    assert fields(story) == {"/session_steps/0/vendor_row": [1, 2], "/session_steps/0/odd~1key~0": True}
    # E(P): the key escaped once more inside a Storyline pointer (the RFC's example).
    assert pointer_get(story, "/unknown_fields/sources/openai-msg/fields/~1session_steps~10~1vendor_row") == [1, 2]
    assert story["unknown_key_counts"] == {
        "openai-msg": {"/session_steps/*/odd~1key~0": 1, "/session_steps/*/vendor_row": 1}
    }


# ======================================================================================= constants


def test_constants_without_document_id() -> None:
    story = one(MINIMAL, doc=None)
    assert story["origin"] == {"format": "openai-msg"}
    assert story["unknown_fields"]["sources"]["openai-msg"]["source_document_id"] == ""


CONTEXT_KINDS = golden(
    "context_kinds",
    [
        row(
            1,
            [
                system("S"),
                user("u0"),
                assistant("a0"),
                assistant(None, tool_calls=[call("c0", "ls", '{"path":"."}')]),
                tool("c0", "a.txt"),
                user("q"),
            ],
            assistant("A"),
        )
    ],
)


def test_context_turn_src_kind_and_copied_per_role() -> None:
    story = one(CONTEXT_KINDS)
    assert story["turns"] == [
        {"id": 1, "src": "system", "msg": "S", "copied": True, "kind": "context"},
        {"id": 2, "src": "user", "msg": "u0", "copied": True, "kind": "llm.request"},
        {"id": 3, "src": "agent", "msg": "a0", "copied": True, "kind": "llm.response"},
        {
            "id": 4,
            "src": "agent",
            "msg": None,
            "copied": True,
            "kind": "autonomous",
            "tool_calls": [{"tcid": "c0", "fn": "ls", "args": {"path": "."}}],
        },
        {"id": 5, "src": "user", "msg": "q", "kind": "llm.request"},
        {
            "id": 6,
            "src": "agent",
            "msg": "A",
            "nllm": 1,
            "kind": "llm.response",
            # RFC: a row's tool-role messages are that row's response-turn observation results.
            "observation": {"results": [{"source_call_id": "c0", "content": "a.txt"}]},
        },
    ]
    assert fields(story) == {}


RESPONSE_KINDS = golden(
    "response_kinds",
    [
        row(1, [user("q")], assistant("plain")),
        row(2, [user("q"), assistant("plain"), user("q2")], assistant("calling", tool_calls=[call("c1", "f")])),
    ],
)


def test_request_and_response_constants() -> None:
    story = one(RESPONSE_KINDS)
    assert story["turns"] == [
        {"id": 1, "src": "user", "msg": "q", "kind": "llm.request"},
        {"id": 2, "src": "agent", "msg": "plain", "nllm": 1, "kind": "llm.response"},
        {"id": 3, "src": "user", "msg": "q2", "kind": "llm.request"},
        {
            "id": 4,
            "src": "agent",
            "msg": "calling",
            "nllm": 1,
            "kind": "autonomous",
            "tool_calls": [{"tcid": "c1", "fn": "f", "args": {}}],
        },
    ]


# =========================================================================== authoritative fields


def test_session_id_maps_to_session() -> None:
    story = one([row(1, [user("q")], assistant("a"), session="sess-ä/1")])
    assert story["session"] == "sess-ä/1"
    assert "session_id" not in json.dumps(fields(story))


CREATED_AT = golden(
    "created_at",
    [
        row(1, [user("q1")], assistant("a1"), created_at=T0),
        row(2, [user("q1"), assistant("a1")], assistant("a2"), created_at=1772359205),
        row(3, [user("q1"), assistant("a1"), user("q3")], assistant("a3"), created_at="yesterday"),
    ],
)


def test_created_at_is_response_ts_copied_to_request_ts_and_not_started_at() -> None:
    story = one(CREATED_AT)
    assert [(t["id"], t.get("ts")) for t in story["turns"]] == [
        (1, T0),  # request: a convenience copy of the response ts
        (2, T0),  # response: the authoritative target
        (4, 1772359205),  # epoch seconds; this row has no request turn
        (5, None),
        (6, None),
    ]
    assert "started_at" not in story and "finished_at" not in story
    assert fields(story) == {"/session_steps/2/created_at": "yesterday"}  # not a time: residual


CONTEXT_MSG = golden(
    "context_msg",
    [row(1, [system([{"type": "text", "text": "S"}]), user("u0"), user("u1")], assistant({"weird": "content"}))],
)


def test_context_and_request_content_are_msg() -> None:
    story = one(CONTEXT_MSG)
    assert [(t["id"], t["msg"], t.get("copied", False)) for t in story["turns"]] == [
        (1, [{"type": "text", "text": "S"}], True),  # content keeps its JSON type
        (2, "u0", True),  # a user message before the last one is context
        (3, "u1", False),  # the last user message is the request
        (4, {"weird": "content"}, False),
    ]


TOOL_SESSION = golden(
    "tool_session",
    [
        row(1, [system("S"), user("list files")], assistant(None, tool_calls=[call("call_1", "ls", '{"path":"."}')])),
        row(
            2,
            [
                system("S"),
                user("list files"),
                assistant(None, tool_calls=[call("call_1", "ls", '{"path":"."}')]),
                tool("call_1", "a.txt\nb.txt"),
            ],
            assistant("Two files."),
        ),
    ],
)


def test_tool_message_is_an_observation_result_of_the_response_turn() -> None:
    story = one(TOOL_SESSION)
    assert story["turns"] == [
        {"id": 1, "src": "system", "msg": "S", "copied": True, "kind": "context"},
        {"id": 2, "src": "user", "msg": "list files", "kind": "llm.request"},
        {
            "id": 3,
            "src": "agent",
            "msg": None,
            "nllm": 1,
            "kind": "autonomous",
            "tool_calls": [{"tcid": "call_1", "fn": "ls", "args": {"path": "."}}],
        },
        {
            "id": 5,
            "src": "agent",
            "msg": "Two files.",
            "nllm": 1,
            "kind": "llm.response",
            # the tool role only selects the message: the result holds source_call_id and content alone
            "observation": {"results": [{"source_call_id": "call_1", "content": "a.txt\nb.txt"}]},
        },
    ]
    assert fields(story) == {}


OUTPUT_FROM_MESSAGES = golden(
    "output_from_messages",
    [
        row(1, [user("q"), assistant("A")]),
        row(2, [user("q"), assistant("A"), user("q2"), assistant("B")], assistant("")),
        {  # a null response counts as absent
            **row(3, [user("q"), assistant("A"), user("q2"), assistant("B"), user("q3"), assistant("C")]),
            "response": None,
        },
        row(
            4,
            [
                user("q"),
                assistant("A"),
                user("q2"),
                assistant("B"),
                user("q3"),
                assistant("C"),
                user("q4"),
                assistant("first"),
                assistant(""),
            ],
        ),
    ],
)


def test_output_selected_from_response_else_last_valid_assistant_message() -> None:
    story = one(OUTPUT_FROM_MESSAGES)
    assert [(t["id"], t["src"], t["msg"]) for t in story["turns"]] == [
        (1, "user", "q"),
        (2, "agent", "A"),
        (3, "user", "q2"),
        (4, "agent", "B"),
        (5, "user", "q3"),
        (6, "agent", "C"),
        (7, "user", "q4"),
        (8, "agent", "first"),
    ]
    assert fields(story) == {
        "/session_steps/1/response": {"role": "assistant", "content": ""},  # invalid /response: kept whole
        "/session_steps/3/messages/8": {"role": "assistant", "content": ""},  # new, not selected: kept whole
    }


REASONING = golden(
    "reasoning",
    [row(1, [user("q")], assistant("A", reasoning_content="because"))],
)


def test_output_reasoning_content_is_reason() -> None:
    story = one(REASONING)
    assert turn(story, 2) == {
        "id": 2,
        "src": "agent",
        "msg": "A",
        "reason": "because",
        "nllm": 1,
        "kind": "llm.response",
    }
    assert fields(story) == {}


OUTPUT_CALLS = golden(
    "output_calls",
    [
        row(
            1,
            [user("q")],
            assistant(
                "running two",
                tool_calls=[call("call_a", "read", '{"path":"a.py"}'), call("call_b", "grep", '{"pattern":"x"}')],
            ),
        )
    ],
)


def test_output_tool_calls_are_tool_calls() -> None:
    story = one(OUTPUT_CALLS)
    assert turn(story, 2)["tool_calls"] == [
        {"tcid": "call_a", "fn": "read", "args": {"path": "a.py"}},
        {"tcid": "call_b", "fn": "grep", "args": {"pattern": "x"}},
    ]
    assert turn(story, 2)["kind"] == "autonomous"
    assert fields(story) == {}


ARGUMENTS = [
    ('{"a":1}', {"a": 1}),
    ('{"a": [1, 2]}', {"a": [1, 2]}),
    ("42", 42),
    ('"text"', "text"),
    ("null", None),
    ("{oops", "{oops"),
    ("", ""),
    ({"a": 1}, {"a": 1}),
    ([1, 2], [1, 2]),
]
for _i, (_args, _) in enumerate(ARGUMENTS):
    golden(f"arguments_{_i}", [row(1, [user("q")], assistant(None, tool_calls=[call("c1", "f", _args)]))])


@pytest.mark.parametrize(("index", "expected"), [(i, e) for i, (_, e) in enumerate(ARGUMENTS)])
def test_arguments_parsed_when_valid_json_else_kept(index: int, expected: Any) -> None:
    story = one(GOLDEN[f"arguments_{index}"][0])
    assert turn(story, 2)["tool_calls"] == [{"tcid": "c1", "fn": "f", "args": expected}]
    assert fields(story) == {}


# ------------------------------------------------------------------------------ env (authoritative)

ENV_SOURCES = [
    ("env_name", {"env_name": "swe-gym"}, {"name": "swe-gym"}),
    (
        "endpoint",
        {"meta_json": {"env_state": {"endpoint": "/v1/chat/completions"}}},
        {"endpoint": "/v1/chat/completions"},
    ),
    ("dataset_type", {"dataset_type": "swe"}, {"state": {"dataset_type": "swe"}}),
    ("dt", {"dt": "2026-03-01"}, {"state": {"dt": "2026-03-01"}}),
    ("group_id", {"meta_json": {"group_id": "g-7"}}, {"state": {"group_id": "g-7"}}),
    (
        "redaction_policy",
        {"meta_json": {"env_state": {"redaction_policy": "pii-v2"}}},
        {"state": {"redaction_policy": "pii-v2"}},
    ),
    (
        "upstream_base_url",
        {"meta_json": {"env_state": {"upstream_base_url": "https://api.example.com/v1"}}},
        {"state": {"upstream_base_url": "https://api.example.com/v1"}},
    ),
    ("weight_version", {"meta_json": {"env_state": {"weight_version": 3}}}, {"state": {"weight_version": 3}}),
]
for _name, _extra, _ in ENV_SOURCES:
    golden(f"env_{_name}", [row(1, [system("S"), user("q")], assistant("a"), **_extra)])


@pytest.mark.parametrize(("name", "expected"), [(n, e) for n, _, e in ENV_SOURCES])
def test_env_source_is_task_env(name: str, expected: dict) -> None:
    story = one(GOLDEN[f"env_{name}"][0])
    assert story["task"] == {"env": expected}
    assert all("env" not in t for t in story["turns"])
    assert fields(story) == {}


TURN_ENV_SOURCES = [
    ("id", {"id": "row-0007"}, {"id": "row-0007"}),
    ("event_type", {"meta_json": {"env_state": {"event_type": "chat.completion"}}}, {"event_type": "chat.completion"}),
    ("request_id", {"meta_json": {"env_state": {"request_id": "req-abc"}}}, {"request_id": "req-abc"}),
]
for _name, _extra, _ in TURN_ENV_SOURCES:
    golden(f"turn_env_{_name}", [row(1, [system("S"), user("q")], assistant("a"), **_extra)])


@pytest.mark.parametrize(("name", "expected"), [(n, e) for n, _, e in TURN_ENV_SOURCES])
def test_id_event_type_request_id_only_on_the_response_turn_env(name: str, expected: dict) -> None:
    story = one(GOLDEN[f"turn_env_{name}"][0])
    assert turn(story, 3)["env"] == expected
    assert "task" not in story  # never promoted to /task/env
    assert "env" not in turn(story, 1) and "env" not in turn(story, 2)
    assert fields(story) == {}


CONTEXT_NO_ENV = golden(
    "context_no_env",
    [
        row(
            1,
            [system("S"), user("u0"), assistant("a0"), user("q")],
            assistant("A"),
            id="row-1",
            env_name="web",
            meta_json={"env_state": {"event_type": "chat", "request_id": "r-1", "endpoint": "/v1/chat"}},
        )
    ],
)


def test_context_turns_write_no_env() -> None:
    story = one(CONTEXT_NO_ENV)
    assert [t["id"] for t in story["turns"] if "env" in t] == [5]
    assert turn(story, 5)["env"] == {"id": "row-1", "event_type": "chat", "request_id": "r-1"}
    assert story["task"] == {"env": {"name": "web", "endpoint": "/v1/chat"}}
    assert fields(story) == {}


STABLE_ENV = golden(
    "stable_env",
    [
        row(1, [user("q1")], assistant("a1"), env_name="", dt="d1", meta_json={"env_state": {"weight_version": 3}}),
        row(
            2,
            [user("q1"), assistant("a1")],
            assistant("a2"),
            env_name="web",
            dt="d1",
            meta_json={"env_state": {"weight_version": 3}},
        ),
        row(
            3,
            [user("q1"), assistant("a1")],
            assistant("a3"),
            env_name="web",
            dt="d2",
            meta_json={"env_state": {"weight_version": 4}},
        ),
        row(4, [user("q1"), assistant("a1")], assistant("a4"), env_name="cli", dt="d1", meta_json={"group_id": "g"}),
    ],
)


def test_session_stable_task_env_from_first_non_empty_value_later_unequal_as_turn_env_delta() -> None:
    story = one(STABLE_ENV)
    assert story["task"] == {"env": {"name": "web", "state": {"dt": "d1", "weight_version": 3, "group_id": "g"}}}
    assert [(t["id"], t.get("env")) for t in story["turns"] if t["src"] == "agent"] == [
        (2, None),
        (4, None),  # equal later values are consumed aliases
        (6, {"state": {"dt": "d2", "weight_version": 4}}),  # unequal values: the turn's env (state: shallow delta)
        (8, {"name": "cli"}),
    ]
    assert fields(story) == {"/session_steps/0/env_name": ""}  # an empty value is not a session value


# ---------------------------------------------------------------------------------------- metrics

for _key in ROW_METRICS:
    golden(f"row_metric_{_key}", [row(1, [user("q")], assistant("a"), **{_key: 0.5 if "reward" in _key else True})])


@pytest.mark.parametrize("key", ROW_METRICS)
def test_row_metric_is_response_metrics(key: str) -> None:
    story = one(GOLDEN[f"row_metric_{key}"][0])
    value = 0.5 if "reward" in key else True
    assert turn(story, 2)["metrics"] == {key: value}
    assert story["final_metrics"] == {key: value}
    assert fields(story) == {}


for _key in ENV_STATE_METRICS:
    golden(f"env_state_metric_{_key}", [row(1, [user("q")], assistant("a"), meta_json={"env_state": {_key: 7}})])


@pytest.mark.parametrize("key", ENV_STATE_METRICS)
def test_env_state_metric_is_response_metrics(key: str) -> None:
    story = one(GOLDEN[f"env_state_metric_{key}"][0])
    expected = {"id": 2, "src": "agent", "msg": "a", "nllm": 1, "kind": "llm.response", "metrics": {key: 7}}
    if key == "total_latency_ms":
        expected["latency_ms"] = 7
    if key == "ttft_ms":
        expected["ttft_ms"] = 7
    assert turn(story, 2) == expected
    assert story["final_metrics"] == {key: 7}
    assert "env" not in turn(story, 2) and "task" not in story  # metric keys never go to env
    assert fields(story) == {}


ROW_METRIC_WINS = golden(
    "row_metric_wins",
    [
        row(
            1,
            [user("q")],
            assistant("a"),
            is_truncated=False,
            meta_json={"env_state": {"is_truncated": True, "is_session_completed": True, "prompt_tokens": 5}},
        )
    ],
)


def test_row_level_metric_wins_over_env_state_and_consumes_it() -> None:
    story = one(ROW_METRIC_WINS)
    assert turn(story, 2)["metrics"] == {"is_truncated": False, "is_session_completed": True, "prompt_tokens": 5}
    assert fields(story) == {}


LATENCIES = [(1234, 1234), (12.5, None), ("1234", None), (True, None), (None, None)]
for _i, (_value, _) in enumerate(LATENCIES):
    golden(
        f"latency_{_i}",
        [row(1, [user("q")], assistant("a"), meta_json={"env_state": {"total_latency_ms": _value, "ttft_ms": _value}})],
    )


@pytest.mark.parametrize(("index", "promoted"), [(i, p) for i, (_, p) in enumerate(LATENCIES)])
def test_latency_and_ttft_promoted_only_when_integers(index: int, promoted: Any) -> None:
    story = one(GOLDEN[f"latency_{index}"][0])
    value = LATENCIES[index][0]
    response = turn(story, 2)
    assert response["metrics"] == {"total_latency_ms": value, "ttft_ms": value}
    assert response.get("latency_ms") == promoted and response.get("ttft_ms") == promoted
    assert ("latency_ms" in response) == (promoted is not None)


FINAL_METRICS = golden(
    "final_metrics",
    [
        row(
            2,
            [user("q1"), assistant("a1"), user("q2")],
            assistant("a2"),
            reward=1,
            meta_json={"env_state": {"total_tokens": 9}},
        ),
        row(1, [user("q1")], assistant("a1"), reward=0),
    ],
)
NO_FINAL_METRICS = golden(
    "no_final_metrics",
    [
        row(1, [user("q1")], assistant("a1"), reward=0),
        row(2, [user("q1"), assistant("a1"), user("q2")], assistant("a2")),
    ],
)


def test_final_metrics_copies_the_last_response_turn_metrics() -> None:
    story = one(FINAL_METRICS)
    assert turn(story, 2)["metrics"] == {"reward": 0}
    assert turn(story, 4)["metrics"] == {"reward": 1, "total_tokens": 9}
    assert story["final_metrics"] == {"reward": 1, "total_tokens": 9}
    story = one(NO_FINAL_METRICS)
    assert turn(story, 2)["metrics"] == {"reward": 0}
    assert "final_metrics" not in story  # only the last response turn is copied


# ============================================================================== derived identities

TURN_IDS = golden(
    "turn_ids",
    [
        row(1, [system("S"), assistant("How can I help?"), user("q1")], assistant("a1")),
        row(2, [system("S"), assistant("How can I help?"), user("q1"), assistant("a1"), user("q2")], assistant("a2")),
        row(
            5,
            [system("S"), assistant("How can I help?"), user("q1"), assistant("a1"), user("q2"), assistant("a2")],
            assistant("a5"),
        ),
    ],
)


def test_turn_ids_context_then_request_and_response_formulas() -> None:
    story = one(TURN_IDS)
    # context_count = 2; request = 2 + 2*step - 1; response = 2 + 2*step; step 5 has no new user message.
    assert [(t["id"], t["src"], t["msg"]) for t in story["turns"]] == [
        (1, "system", "S"),
        (2, "agent", "How can I help?"),
        (3, "user", "q1"),
        (4, "agent", "a1"),
        (5, "user", "q2"),
        (6, "agent", "a2"),
        (12, "agent", "a5"),
    ]


ADMITTED_CONTEXT = golden(
    "admitted_context",
    [
        row(
            1,
            [
                system("S"),
                assistant(None, tool_calls=[call("c0", "ls")]),
                tool("c0", "r"),
                {"role": "tool", "content": "orphan"},
                {"role": "developer", "content": "dev note"},
                user("q"),
            ],
            assistant("A"),
        )
    ],
)


def test_context_count_is_the_number_of_admitted_context_turns() -> None:
    story = one(ADMITTED_CONTEXT)
    assert ids(story) == [1, 2, 3, 4]  # two context turns: the system and the assistant message
    assert turn(story, 4)["observation"] == {"results": [{"source_call_id": "c0", "content": "r"}]}
    assert fields(story) == {
        "/session_steps/0/messages/3": {"role": "tool", "content": "orphan"},
        "/session_steps/0/messages/4": {"role": "developer", "content": "dev note"},
    }


RUN_CASES = [
    ({"run_id": "R"}, "R", {}),
    ({"run_bucket": "B"}, "B", {}),
    ({"job_id": "J"}, "J", {}),
    ({"run_id": "R", "run_bucket": "B", "job_id": "J"}, "R", {"run_bucket": "B", "job_id": "J"}),
    ({"run_bucket": "B", "job_id": "J"}, "B", {"job_id": "J"}),
    ({"run_id": "", "job_id": "J"}, "J", {"run_id": ""}),
    ({"run_id": 7}, None, {"run_id": 7}),
    ({}, None, {}),
]
for _i, (_extra, _, _) in enumerate(RUN_CASES):
    golden(f"run_{_i}", [row(1, [user("q")], assistant("a"), **_extra)])


@pytest.mark.parametrize(("index", "run", "residual"), [(i, r, f) for i, (_, r, f) in enumerate(RUN_CASES)])
def test_run_is_the_first_non_empty_run_id_run_bucket_job_id(index: int, run: Any, residual: dict) -> None:
    story = one(GOLDEN[f"run_{index}"][0])
    assert story.get("run") == run
    assert ("run" in story) == (run is not None)
    assert fields(story) == {f"/session_steps/0/{k}": v for k, v in residual.items()}


RUN_ACROSS_ROWS = golden(
    "run_across_rows",
    [
        row(1, [user("q1")], assistant("a1"), job_id="J"),
        row(2, [user("q1"), assistant("a1")], assistant("a2"), run_id="R"),
        row(3, [user("q1"), assistant("a1")], assistant("a3"), run_id="R", job_id="J"),
    ],
)


def test_run_key_priority_wins_over_row_order() -> None:
    story = one(RUN_ACROSS_ROWS)
    assert story["run"] == "R"
    assert fields(story) == {"/session_steps/0/job_id": "J", "/session_steps/2/job_id": "J"}


AGENT_CASES = [
    ({"agent_id": "bot", "agent_model": "m", "meta_json": {"source": "gw"}}, "bot", "m", {"meta_json/source": "gw"}),
    ({"agent_model": "m", "meta_json": {"source": "gw"}}, "gw", "m", {}),
    ({"agent_model": "m", "llm_model": "l"}, "m", "m", {"llm_model": "l"}),
    ({"llm_model": "l"}, "l", "l", {}),
    ({}, "openai-import", None, {}),
    ({"agent_id": "", "meta_json": {"source": "gw"}}, "gw", None, {"agent_id": ""}),
]
for _i, (_extra, _, _, _) in enumerate(AGENT_CASES):
    golden(f"agent_{_i}", [row(1, [user("q")], assistant("a"), **_extra)])


@pytest.mark.parametrize(
    ("index", "agent_id", "model", "residual"), [(i, a, m, f) for i, (_, a, m, f) in enumerate(AGENT_CASES)]
)
def test_agent_id_chain_name_and_model(index: int, agent_id: str, model: Any, residual: dict) -> None:
    story = one(GOLDEN[f"agent_{index}"][0])
    expected = {"id": agent_id, "name": agent_id, **({"model": model} if model else {})}
    assert story["agent"] == expected
    assert turn(story, 2).get("model") == model
    assert fields(story) == {f"/session_steps/0/{k}": v for k, v in residual.items()}


AGENT_ACROSS_ROWS = golden(
    "agent_across_rows",
    [
        row(1, [user("q1")], assistant("a1"), llm_model="small"),
        row(2, [user("q1"), assistant("a1")], assistant("a2"), agent_id="planner", agent_model="big"),
        row(3, [user("q1"), assistant("a1")], assistant("a3"), agent_id="other", agent_model="big", llm_model="big"),
        row(4, [user("q1"), assistant("a1")], assistant("a4")),
    ],
)


def test_agent_identity_across_rows_and_turn_model_chain() -> None:
    story = one(AGENT_ACROSS_ROWS)
    assert story["agent"] == {"id": "planner", "name": "planner", "model": "big"}  # agent_model before llm_model
    assert [(t["id"], t.get("model")) for t in story["turns"] if t["src"] == "agent"] == [
        (2, "small"),  # the row's llm_model when it has no agent_model
        (4, "big"),
        (6, "big"),
        (8, None),  # a row without a model
    ]
    # An unselected llm_model equal to the row's model is consumed; a later different agent_id is residual.
    assert fields(story) == {"/session_steps/2/agent_id": "other"}


UNSELECTED_LLM_MODEL = golden(
    "unselected_llm_model",
    [
        row(1, [user("q1")], assistant("a1"), agent_model="m", llm_model="m"),
        row(2, [user("q1"), assistant("a1")], assistant("a2"), agent_model="m", llm_model="m-2024"),
        row(3, [user("q1"), assistant("a1")], assistant("a3"), agent_model="", llm_model="m"),
    ],
)


def test_unselected_llm_model_consumed_only_when_equal_to_the_selected_model() -> None:
    story = one(UNSELECTED_LLM_MODEL)
    assert [t.get("model") for t in story["turns"] if t["src"] == "agent"] == ["m", "m", "m"]
    assert fields(story) == {"/session_steps/1/llm_model": "m-2024", "/session_steps/2/agent_model": ""}


# ============================================================================== consumption rules

ALIASES = golden(
    "aliases",
    [
        row(
            1,
            [user("q1")],
            assistant("a1"),
            agent_model="m",
            env_id="s1",
            meta_json={"env_state": {"session_id": "s1", "requested_model": "m", "llm_step_index": 1}},
        ),
        row(
            2,
            [user("q1"), assistant("a1")],
            assistant("a2"),
            agent_model="m",
            env_id="env-42",
            meta_json={"env_state": {"session_id": "other", "requested_model": "m-latest", "llm_step_index": 1}},
        ),
        row(
            3,
            [user("q1"), assistant("a1")],
            assistant("a3"),
            llm_model="l",
            meta_json={"env_state": {"requested_model": "l", "llm_step_index": True}},
        ),
        row(
            4,
            [user("q1"), assistant("a1")],
            assistant("a4"),
            meta_json={"env_state": {"requested_model": "m", "llm_step_index": 4.0}},
        ),
        row(5, [user("q1"), assistant("a1")], assistant("a5"), meta_json={"env_state": {"llm_step_index": "5"}}),
    ],
)


def test_redundant_aliases_consumed_only_when_equal() -> None:
    story = one(ALIASES)
    assert story["session"] == "s1"
    assert ids(story) == [1, 2, 4, 6, 8, 10]  # llm_step_index never changes a turn id
    assert [t.get("model") for t in story["turns"] if t["src"] == "agent"] == ["m", "m", "l", None, None]
    assert fields(story) == {
        "/session_steps/1/env_id": "env-42",
        "/session_steps/1/meta_json/env_state/session_id": "other",
        "/session_steps/1/meta_json/env_state/requested_model": "m-latest",
        "/session_steps/1/meta_json/env_state/llm_step_index": 1,
        "/session_steps/2/meta_json/env_state/llm_step_index": True,  # a bool is not the step_id
        "/session_steps/3/meta_json/env_state/requested_model": "m",  # the row has no model
        "/session_steps/3/meta_json/env_state/llm_step_index": 4.0,
        "/session_steps/4/meta_json/env_state/llm_step_index": "5",
    }


META_STRINGS = golden(
    "meta_strings",
    [
        row(
            1,
            [user("q")],
            assistant("a"),
            meta_json=compact(
                {
                    "source": "gateway-x",
                    "group_id": "g-1",
                    "trace": [1],
                    "env_state": compact({"prompt_tokens": 3, "endpoint": "/v1/chat", "vendor": {"k": 1}}),
                }
            ),
        ),
        row(
            2,
            [user("q"), assistant("a")],
            assistant("b"),
            meta_json={"env_state": json.dumps({"completion_tokens": 4, "weight_version": "w2"}, indent=2)},
        ),
    ],
)


def test_meta_json_and_env_state_as_objects_or_json_strings() -> None:
    story = one(META_STRINGS)
    assert story["agent"] == {"id": "gateway-x", "name": "gateway-x"}
    assert story["task"] == {"env": {"endpoint": "/v1/chat", "state": {"group_id": "g-1", "weight_version": "w2"}}}
    assert turn(story, 2)["metrics"] == {"prompt_tokens": 3}
    assert turn(story, 4)["metrics"] == {"completion_tokens": 4}
    # Residual of a decoded string sits at its logical path.
    assert fields(story) == {
        "/session_steps/0/meta_json/trace": [1],
        "/session_steps/0/meta_json/env_state/vendor": {"k": 1},
    }


UNDECODABLE_META = [("not json", None), ("[1, 2]", None), (5, None), (None, None), ('"a string"', None)]
for _i, (_meta, _) in enumerate(UNDECODABLE_META):
    golden(f"undecodable_meta_{_i}", [row(1, [user("q")], assistant("a"), meta_json=_meta)])


@pytest.mark.parametrize("index", range(len(UNDECODABLE_META)))
def test_undecodable_meta_json_is_residual_whole(index: int) -> None:
    story = one(GOLDEN[f"undecodable_meta_{index}"][0])
    assert fields(story) == {"/session_steps/0/meta_json": UNDECODABLE_META[index][0]}
    assert "metrics" not in turn(story, 2)


UNDECODABLE_ENV_STATE = golden(
    "undecodable_env_state",
    [
        row(1, [user("q")], assistant("a"), meta_json={"group_id": "g", "env_state": "{prompt_tokens: 3"}),
        row(2, [user("q"), assistant("a")], assistant("b"), meta_json=compact({"env_state": "[3]"})),
    ],
)


def test_undecodable_env_state_is_residual_whole() -> None:
    story = one(UNDECODABLE_ENV_STATE)
    assert story["task"] == {"env": {"state": {"group_id": "g"}}}
    assert fields(story) == {
        "/session_steps/0/meta_json/env_state": "{prompt_tokens: 3",
        "/session_steps/1/meta_json/env_state": "[3]",
    }


CALL_TYPES = golden(
    "call_types",
    [
        row(
            1,
            [user("q")],
            assistant(
                None,
                tool_calls=[
                    call("c1", "f"),
                    {"id": "c2", "type": "custom", "function": {"name": "g", "arguments": "{}"}},
                    {"id": "c3", "function": {"name": "h", "arguments": "{}"}},
                ],
            ),
        )
    ],
)


def test_type_function_consumed_other_types_residual() -> None:
    story = one(CALL_TYPES)
    assert [c["tcid"] for c in turn(story, 2)["tool_calls"]] == ["c1", "c2", "c3"]
    assert fields(story) == {"/session_steps/0/response/tool_calls/1/type": "custom"}


REASONING_VALUES = [
    ("think", "think", False),
    ("", "", False),
    (None, None, False),
    ({"text": "t"}, None, True),
    (5, None, True),
]
for _i, (_value, _, _) in enumerate(REASONING_VALUES):
    golden(f"reasoning_value_{_i}", [row(1, [user("q")], assistant("A", reasoning_content=_value))])


@pytest.mark.parametrize("index", range(len(REASONING_VALUES)))
def test_only_string_or_null_reasoning_content_is_consumed(index: int) -> None:
    value, reason, residual = REASONING_VALUES[index]
    story = one(GOLDEN[f"reasoning_value_{index}"][0])
    assert turn(story, 2).get("reason") == reason
    assert ("reason" in turn(story, 2)) == (reason is not None)
    assert fields(story) == ({"/session_steps/0/response/reasoning_content": value} if residual else {})


EMPTY_MSG_CASES = [(k, v) for k in EMPTY_MSG_KEYS for v in EMPTIES]
for _key, _value in EMPTY_MSG_CASES:
    golden(
        f"empty_msg_{_key}_{json.dumps(_value)}",
        [row(1, [system("S", **{_key: _value}), user("q", **{_key: _value})], assistant("A", **{_key: _value}))],
    )


@pytest.mark.parametrize(("key", "value"), EMPTY_MSG_CASES)
def test_null_and_empty_message_keys_count_as_missing(key: str, value: Any) -> None:
    story = one(GOLDEN[f"empty_msg_{key}_{json.dumps(value)}"][0])
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [(1, "S"), (2, "q"), (3, "A")]
    assert "tool_calls" not in turn(story, 3)
    assert fields(story) == {}


NONEMPTY_MSG_KEYS = golden(
    "nonempty_msg_keys",
    [
        row(
            1,
            [
                system("S", name="policy"),
                user("q", name="alice", tool_call_id="x1", tool_calls=[call("u1", "f")]),
            ],
            assistant("A", name="bot", refusal="I'd rather not", tool_call_id="x2"),
        )
    ],
)


def test_non_empty_message_keys_are_residual() -> None:
    story = one(NONEMPTY_MSG_KEYS)
    assert fields(story) == {
        "/session_steps/0/messages/0/name": "policy",
        "/session_steps/0/messages/1/name": "alice",
        "/session_steps/0/messages/1/tool_call_id": "x1",
        "/session_steps/0/messages/1/tool_calls": [call("u1", "f")],
        "/session_steps/0/response/name": "bot",
        "/session_steps/0/response/refusal": "I'd rather not",  # content is valid: refusal is residual
        "/session_steps/0/response/tool_call_id": "x2",
    }
    assert turn(story, 3)["msg"] == "A"


EMPTY_ROW_CASES = [(k, v) for k in EMPTY_ROW_KEYS for v in EMPTIES]
for _key, _value in EMPTY_ROW_CASES:
    golden(f"empty_row_{_key}_{json.dumps(_value)}", [row(1, [user("q")], assistant("A"), **{_key: _value})])


@pytest.mark.parametrize(("key", "value"), EMPTY_ROW_CASES)
def test_null_and_empty_row_keys_count_as_missing(key: str, value: Any) -> None:
    story = one(GOLDEN[f"empty_row_{key}_{json.dumps(value)}"][0])
    assert fields(story) == {}


NONEMPTY_ROW_KEYS = golden(
    "nonempty_row_keys",
    [
        row(
            1,
            [user("q")],
            assistant("A"),
            blob_manifest=[{"sha": "ab"}],
            chosen_response={"role": "assistant", "content": "good"},
            rejected_response="bad",
            ground_truth_answer=0,
            reference_answer=False,
        )
    ],
)


def test_non_empty_row_keys_are_residual() -> None:
    story = one(NONEMPTY_ROW_KEYS)
    assert fields(story) == {
        "/session_steps/0/blob_manifest": [{"sha": "ab"}],
        "/session_steps/0/chosen_response": {"role": "assistant", "content": "good"},
        "/session_steps/0/rejected_response": "bad",
        "/session_steps/0/ground_truth_answer": 0,
        "/session_steps/0/reference_answer": False,
    }


REFUSALS = golden(
    "refusals",
    [
        row(1, [user("q1")], assistant(None, refusal="I can't help with that.")),
        row(
            2,
            [user("q1"), assistant(None, refusal="I can't help with that."), user("q2")],
            {"role": "assistant", "refusal": "No."},
        ),
        row(3, [user("q1"), user("q3")], assistant("", refusal="Still no.")),
    ],
)


def test_refusal_is_the_fallback_msg_when_content_has_no_value() -> None:
    story = one(REFUSALS)
    assert [(t["id"], t["msg"]) for t in story["turns"] if t["src"] == "agent"] == [
        (2, "I can't help with that."),
        (4, "No."),
        (6, "Still no."),
    ]
    assert all(t["kind"] == "llm.response" for t in story["turns"] if t["src"] == "agent")
    assert fields(story) == {}


def test_refusal_fallback_is_written_back_as_refusal() -> None:
    rows_out, _ = parse_export(from_storyline(NAME, read(REFUSALS)))
    assert [r["response"] for r in rows_out] == [r["response"] for r in REFUSALS]


RESIDUAL_TABLE = golden(
    "residual_table",
    [
        row(
            1,
            [
                system("S", x_msg=1),
                assistant(
                    None,
                    tool_calls=[
                        call("c0", "ls", "{}", x_call=2) | {"function": {"name": "ls", "arguments": "{}", "x_fn": 3}}
                    ],
                ),
                tool("c0", "a.txt", x_tool=4),
                user("q", x_user=5),
            ],
            assistant(
                "A",
                x_resp=6,
                tool_calls=[
                    {
                        "id": "c1",
                        "type": "function",
                        "x_call": 7,
                        "function": {"name": "g", "arguments": "{}", "x_fn": 8},
                    }
                ],
            ),
            vendor_row=9,
            meta_json={"x_meta": 10, "env_state": {"x_env": 11}},
        )
    ],
    shape="envelope",
    root={"capture": {"host": "gw-1"}},
)


def test_residual_pointers_of_the_residual_table() -> None:
    story = one(RESIDUAL_TABLE, shape="envelope", root={"capture": {"host": "gw-1"}})
    assert fields(story) == {
        "/capture": {"host": "gw-1"},
        "/session_steps/0/vendor_row": 9,
        "/session_steps/0/messages/0/x_msg": 1,
        "/session_steps/0/messages/1/tool_calls/0/x_call": 2,
        "/session_steps/0/messages/1/tool_calls/0/function/x_fn": 3,
        "/session_steps/0/messages/2/x_tool": 4,
        "/session_steps/0/messages/3/x_user": 5,
        "/session_steps/0/response/x_resp": 6,
        "/session_steps/0/response/tool_calls/0/x_call": 7,
        "/session_steps/0/response/tool_calls/0/function/x_fn": 8,
        "/session_steps/0/meta_json/x_meta": 10,
        "/session_steps/0/meta_json/env_state/x_env": 11,
    }
    assert [(t["id"], t.get("tool_calls")) for t in story["turns"]] == [
        (1, None),
        (2, [{"tcid": "c0", "fn": "ls", "args": {}}]),
        (3, None),
        (4, [{"tcid": "c1", "fn": "g", "args": {}}]),
    ]
    assert turn(story, 4)["observation"] == {"results": [{"source_call_id": "c0", "content": "a.txt"}]}


# ====================================================================== content markers (tool calls)

MARKERS = golden(
    "markers",
    [
        row(
            1,
            [user("q")],
            assistant('Let me look.\n<tool_call>\n{"name": "ls", "arguments": {"path": "."}}\n</tool_call>'),
        ),
        row(
            2,
            [
                user("q"),
                assistant('Let me look.\n<tool_call>\n{"name": "ls", "arguments": {"path": "."}}\n</tool_call>'),
                user("r"),
            ],
            assistant(
                "Running.\n<function=execute_bash>\n<parameter=command>\nls -la\n</parameter>\n"
                "<parameter=timeout>30</parameter>\n</function>"
            ),
        ),
        row(
            3,
            [user("q"), user("s")],
            assistant('<tool_call>{"name": "a", "arguments": {}}</tool_call><tool_call>{"name": "b"}</tool_call>'),
        ),
        row(
            4,
            [user("q"), user("t")],
            assistant('<tool_call>{"name": "x", "arguments": {}}</tool_call>', tool_calls=[call("real", "y")]),
        ),
    ],
)


def test_content_markers_derive_tool_calls_without_structured_calls() -> None:
    story = one(MARKERS)
    agents = [t for t in story["turns"] if t["src"] == "agent"]
    assert [t.get("tool_calls") for t in agents] == [
        [{"tcid": "call-0-content-0", "fn": "ls", "args": {"path": "."}}],
        [{"tcid": "call-1-content-0", "fn": "execute_bash", "args": {"command": "ls -la", "timeout": "30"}}],
        [{"tcid": "call-2-content-0", "fn": "a", "args": {}}, {"tcid": "call-2-content-1", "fn": "b", "args": {}}],
        [{"tcid": "real", "fn": "y", "args": {}}],  # structured calls exist: markers derive nothing
    ]
    assert all(t["kind"] == "autonomous" for t in agents)
    # content still maps only to /msg
    assert agents[0]["msg"] == 'Let me look.\n<tool_call>\n{"name": "ls", "arguments": {"path": "."}}\n</tool_call>'


def test_marker_derived_calls_are_not_exported_as_structured_calls() -> None:
    rows_out, _ = parse_export(from_storyline(NAME, read(MARKERS)))
    assert [("tool_calls" in r["response"]) for r in rows_out] == [False, False, False, True]
    assert [r["response"]["content"] for r in rows_out] == [r["response"]["content"] for r in MARKERS]


# ========================================================================= history copies (reading 1)

REPEATED_USER = golden(
    "repeated_user",
    [
        row(1, [system("S"), user("q1")], assistant("a1")),
        row(2, [system("S"), user("q1"), assistant("a1"), user("q2")], assistant("a2")),
        row(3, [system("S"), user("q1"), assistant("a1"), user("q2"), assistant("a2")], assistant("a3")),
        row(4, [system("S"), user("q1"), assistant("a1"), user("q2"), assistant("a2")], assistant("a3 again")),
    ],
)


def test_repeated_last_user_message_makes_no_second_request_turn() -> None:
    story = one(REPEATED_USER)
    assert [(t["id"], t["src"], t["msg"]) for t in story["turns"]] == [
        (1, "system", "S"),
        (2, "user", "q1"),
        (3, "agent", "a1"),
        (4, "user", "q2"),
        (5, "agent", "a2"),
        (7, "agent", "a3"),
        # step 4 repeats step 3's messages without its response: they are still the history prefix
        (9, "agent", "a3 again"),
    ]
    assert fields(story) == {}


RETRY = golden(
    "retry",
    [row(1, [system("S"), user("q1")], assistant("a1")), row(2, [system("S"), user("q1")], assistant("a1 (retry)"))],
)


def test_retry_row_repeating_the_history_makes_no_request_turn() -> None:
    story = one(RETRY)
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [(1, "S"), (2, "q1"), (3, "a1"), (5, "a1 (retry)")]


NO_DOUBLE_RESULT = golden(
    "no_double_result",
    [
        row(1, [system("S"), user("q")], assistant(None, tool_calls=[call("c1", "ls")])),
        row(
            2,
            [system("S"), user("q"), assistant(None, tool_calls=[call("c1", "ls")]), tool("c1", "a.txt")],
            assistant(None, tool_calls=[call("c2", "cat", '{"f":"a.txt"}')]),
        ),
        row(
            3,
            [
                system("S"),
                user("q"),
                assistant(None, tool_calls=[call("c1", "ls")]),
                tool("c1", "a.txt"),
                assistant(None, tool_calls=[call("c2", "cat", '{"f":"a.txt"}')]),
                tool("c2", "hello"),
            ],
            assistant("It says hello."),
        ),
    ],
)


def test_no_tool_result_is_attached_twice() -> None:
    story = one(NO_DOUBLE_RESULT)
    assert [(t["id"], t.get("observation")) for t in story["turns"] if t["src"] == "agent"] == [
        (3, None),
        (5, {"results": [{"source_call_id": "c1", "content": "a.txt"}]}),
        (7, {"results": [{"source_call_id": "c2", "content": "hello"}]}),
    ]
    assert fields(story) == {}


SECOND_NEW_USER = golden(
    "second_new_user",
    [
        row(1, [user("q1")], assistant("a1")),
        row(2, [user("q1"), assistant("a1"), user("also this"), user("q2")], assistant("a2")),
    ],
)


def test_second_new_user_message_is_residual() -> None:
    story = one(SECOND_NEW_USER)
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [(1, "q1"), (2, "a1"), (3, "q2"), (4, "a2")]
    assert fields(story) == {"/session_steps/1/messages/2": {"role": "user", "content": "also this"}}


STRIPPED_REASONING = golden(
    "stripped_reasoning",
    [
        row(1, [user("q1")], assistant("a1", reasoning_content="think 1")),
        row(2, [user("q1"), assistant("a1"), user("q2")], assistant("a2", reasoning_content="think 2")),
        row(
            3,
            [user("q1"), assistant("a1", reasoning_content="think 1"), user("q2"), assistant("a2"), user("q3")],
            assistant("a3"),
        ),
        row(
            4,
            [
                user("q1"),
                assistant("a1", reasoning_content=None, refusal=None, tool_calls=[]),
                user("q2"),
                assistant("a2", name=""),
                user("q3"),
                assistant("a3"),
                user("q4"),
            ],
            assistant("a4"),
        ),
    ],
)


def test_history_copies_compare_without_reasoning_and_normalise_it_away() -> None:
    story = one(STRIPPED_REASONING)
    assert [(t["id"], t["msg"], t.get("reason")) for t in story["turns"]] == [
        (1, "q1", None),
        (2, "a1", "think 1"),
        (3, "q2", None),
        (4, "a2", "think 2"),
        (5, "q3", None),
        (6, "a3", None),
        (7, "q4", None),
        (8, "a4", None),
    ]
    assert fields(story) == {}


COPY_EXTRAS = golden(
    "copy_extras",
    [
        row(1, [user("q")], assistant(None, tool_calls=[call("c1", "ls")])),
        row(
            2,
            [user("q"), assistant(None, tool_calls=[call("c1", "ls")]), tool("c1", "r", name="ls")],
            assistant(None, tool_calls=[call("c2", "ls")]),
        ),
        row(
            3,
            [
                user("q"),
                assistant(None, tool_calls=[call("c1", "ls")]),
                tool("c1", "r", name="ls"),
                assistant(None, tool_calls=[call("c2", "ls")], refusal="x"),
                tool("c2", "r2"),
            ],
            assistant("done"),
        ),
        row(
            4,
            [
                user("q"),
                assistant(None, tool_calls=[call("c1", "ls")]),
                tool("c1", "r", name="ls"),
                assistant(None, tool_calls=[call("c2", "ls")]),
                tool("c2", "r2"),
                assistant("done", refusal="y", audio={"id": "au-1"}),
                user("thanks"),
            ],
            assistant("bye"),
        ),
    ],
)


def test_extra_keys_of_a_history_copy_are_residual_at_the_copy_pointer() -> None:
    story = one(COPY_EXTRAS)
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [
        (1, "q"),
        (2, None),
        (4, None),
        (6, "done"),
        (7, "thanks"),
        (8, "bye"),
    ]
    assert fields(story) == {
        "/session_steps/1/messages/2/name": "ls",  # on the new tool message
        "/session_steps/2/messages/2/name": "ls",  # on its copies in later rows
        "/session_steps/3/messages/2/name": "ls",
        # a copy's refusal is normalised away when the copy has no content, kept beside valid content
        "/session_steps/3/messages/5/refusal": "y",
        "/session_steps/3/messages/5/audio": {"id": "au-1"},
    }


DIVERGED = golden(
    "diverged",
    [
        row(1, [system("S"), user("q1")], assistant("a1")),
        row(2, [system("S"), user("Summary of the work so far."), assistant("ok"), user("q2")], assistant("a2")),
    ],
)


def test_messages_after_a_diverging_history_are_new() -> None:
    story = one(DIVERGED)
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [(1, "S"), (2, "q1"), (3, "a1"), (4, "q2"), (5, "a2")]
    assert fields(story) == {
        "/session_steps/1/messages/1": {"role": "user", "content": "Summary of the work so far."},
        "/session_steps/1/messages/2": {"role": "assistant", "content": "ok"},
    }


NOTHING_DROPPED = golden(
    "nothing_dropped",
    [
        row(1, [user("q1")], assistant("a1")),
        row(
            2,
            [
                user("q1"),
                assistant("a1"),
                {"role": "tool", "content": "no id"},
                tool("", "empty id"),
                assistant("thinking aloud"),
                user("q2"),
            ],
            assistant("a2"),
        ),
    ],
)


def test_new_messages_neither_selected_nor_results_are_residual_whole() -> None:
    story = one(NOTHING_DROPPED)
    assert [(t["id"], t["msg"]) for t in story["turns"]] == [(1, "q1"), (2, "a1"), (3, "q2"), (4, "a2")]
    assert "observation" not in turn(story, 4)
    assert fields(story) == {
        "/session_steps/1/messages/2": {"role": "tool", "content": "no id"},
        "/session_steps/1/messages/3": {"role": "tool", "tool_call_id": "", "content": "empty id"},
        "/session_steps/1/messages/4": {"role": "assistant", "content": "thinking aloud"},
    }


# ======================================================================== tool call ids (reading 3)

MISSING_IDS = golden(
    "missing_ids",
    [
        row(
            1,
            [user("q")],
            assistant(
                None,
                tool_calls=[
                    {"type": "function", "function": {"name": "ls", "arguments": "{}"}},
                    call("", "cat", '{"f":"a"}'),
                    call(None, "pwd"),
                ],
            ),
        )
    ],
)


def test_missing_or_empty_tool_call_ids_get_deterministic_ids() -> None:
    story = one(MISSING_IDS)
    assert turn(story, 2)["tool_calls"] == [
        {"tcid": "call-0-response-0", "fn": "ls", "args": {}},
        {"tcid": "call-0-response-1", "fn": "cat", "args": {"f": "a"}},
        {"tcid": "call-0-response-2", "fn": "pwd", "args": {}},
    ]
    assert one(MISSING_IDS) == story  # deterministic
    # The original, when present, is residual; an absent id is remembered by the export hints.
    assert fields(story) == {
        "/session_steps/0/response/tool_calls/1/id": "",
        "/session_steps/0/response/tool_calls/2/id": None,
    }


def _reused(step: int) -> list:
    a1 = assistant(None, tool_calls=[call("call_0", "ls")])
    a2 = assistant(None, tool_calls=[call("call_0", "cat", '{"f":"a"}')])
    history = [user("q"), a1, tool("call_0", "a"), a2, tool("call_0", "text")]
    cut = {1: 1, 2: 3, 3: 5}[step]
    response = {1: a1, 2: a2, 3: assistant("done")}[step]
    return row(step, history[:cut], response)


REUSED_IDS = golden("reused_ids", [_reused(1), _reused(2), _reused(3)])


def test_reused_tool_call_id_is_renamed_and_results_follow_their_own_call() -> None:
    story = one(REUSED_IDS)
    assert [(t["id"], t.get("tool_calls"), t.get("observation")) for t in story["turns"] if t["src"] == "agent"] == [
        (2, [{"tcid": "call_0", "fn": "ls", "args": {}}], None),
        (
            4,
            [{"tcid": "call-1-response-0", "fn": "cat", "args": {"f": "a"}}],
            # this result answers step 1's call_0, which kept its id
            {"results": [{"source_call_id": "call_0", "content": "a"}]},
        ),
        (
            6,
            None,
            # this one answers step 2's call, renamed: the link follows the rename
            {"results": [{"source_call_id": "call-1-response-0", "content": "text"}]},
        ),
    ]
    assert fields(story) == {
        "/session_steps/1/response/tool_calls/0/id": "call_0",
        "/session_steps/2/messages/4/tool_call_id": "call_0",
    }


DUPLICATE_IN_MESSAGE = golden(
    "duplicate_in_message",
    [row(1, [user("q")], assistant(None, tool_calls=[call("c1", "f"), call("c1", "g")]))],
)


def test_duplicate_tool_call_id_within_one_message_is_renamed() -> None:
    story = one(DUPLICATE_IN_MESSAGE)
    assert turn(story, 2)["tool_calls"] == [
        {"tcid": "c1", "fn": "f", "args": {}},
        {"tcid": "call-0-response-1", "fn": "g", "args": {}},
    ]
    assert fields(story) == {"/session_steps/0/response/tool_calls/1/id": "c1"}


UNUSABLE_CALL = golden(
    "unusable_call",
    [
        row(
            1,
            [user("q")],
            assistant("A", tool_calls=[{"id": "x", "function": {"arguments": "{}"}}, call("c2", "g"), "junk"]),
        )
    ],
)


def test_unusable_tool_call_is_residual_whole_in_its_place() -> None:
    story = one(UNUSABLE_CALL)
    assert turn(story, 2)["tool_calls"] == [{"tcid": "c2", "fn": "g", "args": {}}]
    assert fields(story) == {
        "/session_steps/0/response/tool_calls/0": {"id": "x", "function": {"arguments": "{}"}},
        "/session_steps/0/response/tool_calls/2": "junk",
    }


ALL_CALLS_UNUSABLE = golden(
    "all_calls_unusable",
    [
        row(
            1,
            [system("S"), assistant("x", tool_calls=[{"function": {}}]), user("q")],
            assistant("A", tool_calls=["junk"]),
        )
    ],
)


def test_message_whose_tool_calls_are_all_unusable() -> None:
    story = one(ALL_CALLS_UNUSABLE)
    assert story["turns"] == [
        {"id": 1, "src": "system", "msg": "S", "copied": True, "kind": "context"},
        {"id": 2, "src": "agent", "msg": "x", "copied": True, "kind": "llm.response"},
        {"id": 3, "src": "user", "msg": "q", "kind": "llm.request"},
        {"id": 4, "src": "agent", "msg": "A", "nllm": 1, "kind": "llm.response"},
    ]
    assert fields(story) == {
        "/session_steps/0/messages/1/tool_calls/0": {"function": {}},
        "/session_steps/0/response/tool_calls/0": "junk",
    }
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == ALL_CALLS_UNUSABLE  # the calls come back as an array, in place


CONTEXT_CALL_WITHOUT_ID = golden(
    "context_call_without_id",
    [
        row(
            1,
            [
                system(compact([{"type": "text", "text": "S"}])),
                assistant(None, tool_calls=[{"type": "function", "function": {"name": "ls"}}]),
                user("q"),
            ],
            assistant("A"),
        )
    ],
)


def test_context_call_without_id_and_context_content_parts_string() -> None:
    story = one(CONTEXT_CALL_WITHOUT_ID)
    assert story["turns"][:2] == [
        {"id": 1, "src": "system", "msg": [{"type": "text", "text": "S"}], "copied": True, "kind": "context"},
        {
            "id": 2,
            "src": "agent",
            "msg": None,
            "copied": True,
            "kind": "autonomous",
            # no arguments at all: args is null (RFC-0001 requires the key)
            "tool_calls": [{"tcid": "call-0-messages-1-0", "fn": "ls", "args": None}],
        },
    ]
    assert fields(story) == {}
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == CONTEXT_CALL_WITHOUT_ID


WITHOUT_CONTENT = golden(
    "without_content",
    [
        row(1, [{"role": "user"}], {"role": "assistant", "tool_calls": [call("c1", "f")]}),
        row(
            2,
            [
                {"role": "user"},
                {"role": "assistant", "tool_calls": [call("c1", "f")]},
                {"role": "tool", "tool_call_id": "c1"},
            ],
            assistant("done"),
        ),
    ],
)


def test_messages_without_content_key() -> None:
    story = one(WITHOUT_CONTENT)
    assert story["turns"] == [
        {"id": 1, "src": "user", "msg": None, "kind": "llm.request"},
        {
            "id": 2,
            "src": "agent",
            "msg": None,
            "nllm": 1,
            "kind": "autonomous",
            "tool_calls": [{"tcid": "c1", "fn": "f", "args": {}}],
        },
        {
            "id": 4,
            "src": "agent",
            "msg": "done",
            "nllm": 1,
            "kind": "llm.response",
            "observation": {"results": [{"source_call_id": "c1"}]},
        },
    ]
    assert fields(story) == {}
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == WITHOUT_CONTENT  # absent content stays absent


WITHOUT_MESSAGES = golden(
    "without_messages",
    [{"session_id": "s1", "step_id": 1, "response": assistant("a")}, row(2, None, assistant("b"))],
)


def test_rows_without_messages() -> None:
    story = one(WITHOUT_MESSAGES)
    assert story["turns"] == [
        {"id": 2, "src": "agent", "msg": "a", "nllm": 1, "kind": "llm.response"},
        {"id": 4, "src": "agent", "msg": "b", "nllm": 1, "kind": "llm.response"},
    ]
    assert fields(story) == {}
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == WITHOUT_MESSAGES  # absent stays absent, null stays null


NON_STRING_ENV = golden(
    "non_string_env",
    [
        row(
            1,
            [user("q")],
            assistant("a"),
            id=7,
            env_name=5,
            dt=None,
            meta_json={"env_state": {"endpoint": ["x"], "event_type": 1, "request_id": None}},
        )
    ],
)


def test_env_values_storyline_cannot_hold_are_residual() -> None:
    story = one(NON_STRING_ENV)
    assert "task" not in story and "env" not in turn(story, 2)
    assert fields(story) == {
        "/session_steps/0/id": 7,
        "/session_steps/0/env_name": 5,
        "/session_steps/0/dt": None,
        "/session_steps/0/meta_json/env_state/endpoint": ["x"],
        "/session_steps/0/meta_json/env_state/event_type": 1,
        "/session_steps/0/meta_json/env_state/request_id": None,
    }


# ============================================================================ reasoning (reading 4)

for _key in ("reasoning", "thinking"):
    golden(f"reasoning_key_{_key}", [row(1, [user("q")], assistant("A", **{_key: "pondering"}))])


@pytest.mark.parametrize("key", ["reasoning", "thinking"])
def test_reasoning_or_thinking_read_when_reasoning_content_is_absent_and_written_back(key: str) -> None:
    rows = GOLDEN[f"reasoning_key_{key}"][0]
    story = one(rows)
    assert turn(story, 2)["reason"] == "pondering"
    assert fields(story) == {}
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows


REASONING_PRIORITY = golden(
    "reasoning_priority",
    [row(1, [user("q")], assistant("A", reasoning_content="rc", reasoning="r", thinking="t"))],
)


def test_reasoning_content_wins_and_the_other_keys_are_residual() -> None:
    story = one(REASONING_PRIORITY)
    assert turn(story, 2)["reason"] == "rc"
    assert fields(story) == {"/session_steps/0/response/reasoning": "r", "/session_steps/0/response/thinking": "t"}


# =========================================================================== original forms (reading 5)

FORMS = golden(
    "forms",
    [
        row(
            1,
            [
                system("S"),
                user(compact([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}}])),
            ],
            assistant(
                None,
                reasoning="r",
                tool_calls=[
                    {"type": "function", "function": {"name": "f", "arguments": compact({"a": 1})}},
                    call("c2", "g", {"b": 2}),
                    call("c3", "h", "42"),
                    call("c4", "k", "not json"),
                ],
            ),
            meta_json=compact({"env_state": compact({"prompt_tokens": 1, "x": [1]})}),
            created_at=T0,
        ),
        row(
            2,
            [
                system("S"),
                user(compact([{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}}])),
                assistant(
                    None,
                    tool_calls=[
                        {"type": "function", "function": {"name": "f", "arguments": compact({"a": 1})}},
                        call("c2", "g", {"b": 2}),
                        call("c3", "h", "42"),
                        call("c4", "k", "not json"),
                    ],
                ),
                tool("c2", "ok"),
                user(compact({"type": "text", "text": "next"})),
            ],
            {"role": "assistant", "content": compact([{"type": "output_text", "text": "ok"}])},
            meta_json={"env_state": compact({"prompt_tokens": 2})},
        ),
        row(
            3,
            [user("fresh")],
            {"role": "assistant", "content": "fin", "reasoning_content": None},
            session="s2",
            meta_json={"source": "gw"},
        ),
    ],
)


def test_same_source_export_restores_original_forms_exactly() -> None:
    stories = read(FORMS)
    s1 = stories[0]
    assert turn(s1, 2)["msg"] == [{"type": "text", "text": "hi"}, {"type": "image_url", "image_url": {"url": "u"}}]
    assert [c["args"] for c in turn(s1, 3)["tool_calls"]] == [{"a": 1}, {"b": 2}, 42, "not json"]
    assert turn(s1, 4)["msg"] == {"type": "text", "text": "next"}
    assert turn(s1, 5)["msg"] == [{"type": "output_text", "text": "ok"}]
    rows_out, root_out = parse_export(from_storyline(NAME, stories))
    assert root_out == {}
    assert rows_out == FORMS  # strings stay strings, objects objects, absent stays absent, 42 stays "42"


# ======================================================================= envelope root fields (reading 6)

ROOT = {"capture": {"host": "gw-1", "format": 2}, "x/y~z": [1]}
ENVELOPE_ROOT = golden("envelope_root", TWO_SESSIONS, shape="envelope", root=ROOT)


def test_envelope_root_fields_are_residual_of_the_first_document_only() -> None:
    alpha, beta = read(TWO_SESSIONS, shape="envelope", root=ROOT)
    assert fields(alpha) == {
        "/capture": {"host": "gw-1", "format": 2},
        "/x~1y~0z": [1],
        "/session_steps/0/vendor_row": {"x": 1},
    }
    assert fields(beta) == {}


def test_envelope_root_fields_are_written_back_exactly_once() -> None:
    alpha, beta = read(TWO_SESSIONS, shape="envelope", root=ROOT)
    text = from_storyline(NAME, [alpha, beta])
    assert json.loads(text) == {**ROOT, "session_steps": TWO_SESSIONS}
    assert json.loads(from_storyline(NAME, [alpha])) == {**ROOT, "session_steps": [TWO_SESSIONS[0], TWO_SESSIONS[2]]}
    # Without root fields the export is JSON Lines.
    assert [json.loads(line) for line in from_storyline(NAME, [beta]).splitlines()] == [TWO_SESSIONS[1]]


# ======================================================================================= refusals


@pytest.mark.parametrize("value", ["", 7, None, ["s1"], "MISSING"])
def test_refuse_empty_or_non_string_session_id(value: Any) -> None:
    bad = row(1, [user("q")], assistant("a"))
    if value == "MISSING":
        del bad["session_id"]
    else:
        bad["session_id"] = value
    good = row(1, [user("q")], assistant("a"), session="ok")
    err = refused(array([good, bad]))
    assert (err.pointer, err.line) == ("/session_steps/1/session_id", None)
    assert "/session_steps/1/session_id" in str(err)
    err = refused(jsonl([good, bad]))
    assert (err.pointer, err.line) == ("/session_steps/1/session_id", 2)


@pytest.mark.parametrize("value", [True, False, 1.0, 0, -1, "1", None, [1], "MISSING"])
def test_refuse_step_id_that_is_not_a_positive_integer(value: Any) -> None:
    bad = row(value, [user("q")], assistant("a"))
    if value == "MISSING":
        del bad["step_id"]
    err = refused(array([bad]))
    assert err.pointer == "/session_steps/0/step_id"
    assert "/session_steps/0/step_id" in str(err) and DOC in str(err)


def test_refuse_repeated_step_id_at_the_second_occurrence() -> None:
    rows = [
        row(1, [user("q")], assistant("a")),
        row(2, [user("q"), assistant("a")], assistant("b")),
        row(1, [user("q")], assistant("c"), session="other"),  # another session may reuse it
        row(1, [user("q")], assistant("a again")),
    ]
    err = refused(jsonl(rows))
    assert (err.pointer, err.line) == ("/session_steps/3/step_id", 4)


@pytest.mark.parametrize(
    ("rows", "pointer"),
    [
        ([row(1, [user("q")])], "/session_steps/0/messages"),
        ([{"session_id": "s1", "step_id": 1}], "/session_steps/0/messages"),
        ([row(1, [user("q")], assistant(""))], "/session_steps/0/response"),
        (
            [row(1, [user("q")], assistant(None, reasoning_content="only thoughts", tool_calls=[]))],
            "/session_steps/0/response",
        ),
        (
            [row(1, [user("q"), assistant("")], {"role": "assistant", "content": None, "refusal": ""})],
            "/session_steps/0/response",
        ),
        ([row(1, [user("q")], assistant("a")), row(2, [user("q"), assistant("a")])], "/session_steps/1/messages"),
    ],
)
def test_refuse_row_without_a_valid_assistant_output(rows: list, pointer: str) -> None:
    err = refused(array(rows))
    assert err.pointer == pointer


@pytest.mark.parametrize("key", ["run_id", "run_bucket", "job_id"])
def test_refuse_run_identity_changing_within_a_session(key: str) -> None:
    rows = [
        row(2, [user("q"), assistant("a")], assistant("b"), **{key: "run-B"}),
        row(1, [user("q")], assistant("a"), **{key: "run-A"}),
        row(3, [user("q"), assistant("a")], assistant("c")),
    ]
    err = refused(jsonl(rows))
    assert (err.pointer, err.line) == (f"/session_steps/0/{key}", 1)  # the later step (in step order) is refused


def test_refuse_turn_id_overflow() -> None:
    step = 2**62 - 1  # response id = context_count + 2**63 - 2
    with_two_context = [row(step, [system("S"), assistant("hello"), user("q")], assistant("a"))]
    err = refused(jsonl(with_two_context))
    assert (err.pointer, err.line) == ("/session_steps/0/step_id", 1)
    [story] = read([row(step, [system("S"), user("q")], assistant("a"))])
    assert ids(story) == [1, 2**63 - 2, 2**63 - 1]
    err = refused(jsonl([row(2**62, [user("q")], assistant("a"))]))
    assert err.pointer == "/session_steps/0/step_id"


@pytest.mark.parametrize(
    ("data", "pointer", "line"),
    [
        ("{bad", "", 1),
        ('[{"session_id": "s1",\n "step_id": 1', "", None),
        ('"rows"', "", None),
        ("5", "", None),
        ('{"rows": []}', "", None),
        ('{"session_steps": {"session_id": "s1"}}', "/session_steps", None),
        (
            '[{"session_id": "s1", "step_id": 1, "messages": [], "response": {"content": "a"}}, 3]',
            "/session_steps/1",
            None,
        ),
        ('{"session_steps": [[]]}', "/session_steps/0", None),
    ],
)
def test_refuse_invalid_json_or_wrong_top_level_shape(data: str, pointer: str, line: Any) -> None:
    err = refused(data)
    assert err.pointer == pointer
    if line is not None:
        assert err.line == line


def _lines_with_bad(bad_at: int) -> tuple[str, list[str]]:
    lines = [
        json.dumps(row(1, [user("q")], assistant("a"), session="s1")),
        json.dumps(row(1, [user("q")], assistant("a"), session="s2")),
        json.dumps(row(1, [user("q")], assistant("a"), session="s3")),
    ]
    lines[bad_at] = lines[bad_at][:25]  # a truncated line (a crashed writer)
    return "\n".join(lines) + "\n", [s for i, s in enumerate(["s1", "s2", "s3"]) if i != bad_at]


@pytest.mark.parametrize("bad_at", [1, 2, 0], ids=["middle-line", "last-line", "first-line"])
def test_bad_json_lines_line_is_its_own_error_record(bad_at: int) -> None:
    data, sessions = _lines_with_bad(bad_at)
    records = list(fmt.iter_records(data, DOC))
    errors = [r for r in records if r.error is not None]
    assert len(errors) == 1
    err = errors[0].error
    assert isinstance(err, FormatError)
    assert (err.line, errors[0].line, err.document_id) == (bad_at + 1, bad_at + 1, DOC)
    assert f"line {bad_at + 1}" in str(err) and DOC in str(err)
    assert [r.story["session"] for r in records if r.story is not None] == sessions
    with pytest.raises(FormatError):
        into_storyline(NAME, data, document_id=DOC)


def test_a_refused_session_does_not_stop_the_others() -> None:
    data = jsonl(
        [
            row(1, [user("q")], assistant("a"), session="s1"),
            row(0, [user("q")], assistant("a"), session="s2"),
            row(2, [user("q"), assistant("a")], assistant("b"), session="s1"),
            [1, 2],
        ]
    )
    records = list(fmt.iter_records(data, DOC))
    assert sorted((r.error.pointer, r.error.line) for r in records if r.error) == [
        ("/session_steps/1/step_id", 2),
        ("/session_steps/3", 4),
    ]
    [good] = [r.story for r in records if r.story is not None]
    assert (good["session"], ids(good)) == ("s1", [1, 2, 4])


# ========================================================================================= writer


@pytest.mark.parametrize("path", OPENAI_SAMPLES, ids=lambda p: p.name)
def test_sample_captures_same_source_roundtrip(path: Path) -> None:
    data = path.read_text(encoding="utf-8")
    text = assert_same_source(data, doc=path.name)
    _, root = parse_export(text)
    assert bool(root) == (path.suffix == ".json")  # the envelope sample has root fields, JSON Lines none


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_inputs_same_source_roundtrip(name: str) -> None:
    rows, shape, root = GOLDEN[name]
    assert_same_source(SHAPES[shape](rows, root))


HAND_WRITTEN = {
    "schema_version": "storyline/v1",
    "session": "hand-1",
    "run": "run-9",
    "agent": {"id": "planner", "name": "Planner", "model": "m-big"},
    "turns": [
        {"id": 1, "src": "system", "msg": "S", "copied": True},
        {"id": 2, "src": "user", "msg": "Q", "ts": T0},
        {
            "id": 3,
            "src": "agent",
            "msg": "looking",
            "model": "m-small",
            "ts": T1,
            "reason": "need a listing",
            "tool_calls": [{"tcid": "t1", "fn": "ls", "args": {"p": "."}}],
            "observation": {"results": [{"source_call_id": "t1", "content": "a.txt"}]},
            "metrics": {"prompt_tokens": 10, "reward": 0},
        },
        {"id": 4, "src": "agent", "msg": "one file", "ts": T2},
    ],
    "unknown_fields": {"sources": {"atif": {"source_document_id": "t.json", "fields": {"/steps/0/extra_x": 1}}}},
}
HAND_WRITTEN["unknown_key_counts"] = compute_unknown_key_counts(HAND_WRITTEN["unknown_fields"])
HAND_CALL = {"id": "t1", "type": "function", "function": {"name": "ls", "arguments": {"p": "."}}}
HAND_ROWS = [
    {
        "session_id": "hand-1",
        "step_id": 1,
        "job_id": "run-9",
        "agent_id": "planner",
        "agent_model": "m-small",
        "created_at": T1,
        "reward": 0,
        "meta_json": {"env_state": {"prompt_tokens": 10}},
        "messages": [system("S"), user("Q")],
        "response": assistant("looking", reasoning_content="need a listing", tool_calls=[HAND_CALL]),
        "_storyline": {"version": 1, "unknown_fields": HAND_WRITTEN["unknown_fields"]},
    },
    {
        "session_id": "hand-1",
        "step_id": 2,
        "job_id": "run-9",
        "agent_id": "planner",
        "agent_model": "m-big",
        "created_at": T2,
        "messages": [
            system("S"),
            user("Q"),
            assistant("looking", reasoning_content="need a listing", tool_calls=[HAND_CALL]),
            tool("t1", "a.txt"),
        ],
        "response": assistant("one file"),
    },
]


def _args_as_values(rows: list) -> list:
    """Synthesized arguments may be written as a JSON string or as the value: compare the value."""
    rows = copy.deepcopy(rows)
    for r in rows:
        for m in [*(r.get("messages") or []), r.get("response")]:
            for c in (m or {}).get("tool_calls") or []:
                if isinstance(c["function"].get("arguments"), str):
                    c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return rows


def test_synthesized_rows_for_a_document_without_openai_msg_residual() -> None:
    validate(HAND_WRITTEN)
    rows_out, root_out = parse_export(from_storyline(NAME, HAND_WRITTEN))
    assert root_out == {}
    assert _args_as_values(rows_out) == HAND_ROWS


def test_foreign_residual_rides_in_the_storyline_envelope_and_comes_back() -> None:
    text = from_storyline(NAME, HAND_WRITTEN)
    [story] = into_storyline(NAME, text, document_id="export.jsonl")
    assert story["unknown_fields"]["sources"]["atif"] == HAND_WRITTEN["unknown_fields"]["sources"]["atif"]
    assert fields(story) == {}  # the envelope itself is not openai-msg residual
    assert story["unknown_key_counts"] == compute_unknown_key_counts(story["unknown_fields"])
    assert (story["session"], story["run"], story["agent"]) == (
        "hand-1",
        "run-9",
        {"id": "planner", "name": "planner", "model": "m-small"},
    )
    assert [(t["id"], t["src"], t["msg"]) for t in story["turns"]] == [
        (1, "system", "S"),
        (2, "user", "Q"),
        (3, "agent", "looking"),
        (5, "agent", "one file"),
    ]
    # Same-source export of that document writes the envelope back.
    again, _ = parse_export(from_storyline(NAME, story))
    assert boundary(again) == boundary(parse_export(text)[0])


@pytest.mark.parametrize("path", STORYLINE_SAMPLES, ids=lambda p: p.name)
def test_synthesized_rows_from_storyline_samples(path: Path) -> None:
    [doc] = into_storyline("storyline", path.read_text(encoding="utf-8"), document_id=path.name)
    rows_out, root_out = parse_export(from_storyline(NAME, doc))
    responses = [t for t in doc["turns"] if t["src"] == "agent" and not t.get("copied")]
    assert root_out == {} and len(rows_out) == len(responses)
    for step, (r, t) in enumerate(zip(rows_out, responses, strict=True), 1):
        assert (r["session_id"], r["step_id"], r["agent_id"]) == (doc["session"], step, doc["agent"]["id"])
        assert r.get("job_id") == doc.get("run")
        assert "run_id" not in r and "llm_model" not in r
        assert r.get("agent_model") == (t.get("model") or doc["agent"].get("model"))
        assert r["response"]["content"] == t["msg"]
    for earlier, later in itertools.pairwise(rows_out):
        n = len(earlier["messages"])
        assert later["messages"][: n + 1] == [*earlier["messages"], earlier["response"]]  # full history
    stories = into_storyline(NAME, from_storyline(NAME, doc), document_id="export.jsonl")
    assert [s["session"] for s in stories] == [doc["session"]]
