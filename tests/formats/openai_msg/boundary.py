"""RFC-0009's fidelity boundary ("保真边界") as a comparison form, and the same-source export check built on it."""

from __future__ import annotations

import copy
import json
from typing import Any

from pchronicle_datasets import from_storyline, into_storyline
from tests.formats.openai_msg.helpers import (
    DOC,
    EMPTY_MSG_KEYS,
    EMPTY_ROW_KEYS,
    NAME,
    REASONING_KEYS,
    ROW_METRICS,
    source_rows,
)


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

    Ignored: key order; whitespace inside JSON strings (arguments, meta_json, env_state, content parts, tools);
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
            elif key == "tools":
                value = _json_string(value, kinds=(list,))  # tool definitions spelled as a JSON string
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


def assert_same_source(data: str, doc: str = DOC) -> str:
    """Export equals the input within the fidelity boundary, and reads back to the same documents."""
    stories = into_storyline(NAME, data, document_id=doc)
    text = from_storyline(NAME, stories)
    rows_out, root_out = parse_export(text)
    rows_in, root_in = source_rows(data)
    assert boundary(rows_out, root_out) == boundary(rows_in, root_in)
    assert into_storyline(NAME, text, document_id=doc) == stories
    return text
