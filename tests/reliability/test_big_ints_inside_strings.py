"""An integer beyond 64 bits inside a JSON string (tool-call arguments) keeps its value: spelled with escaped
digits (``\\u0031``…), or compared with another call's arguments.

The readers scan a line once for 19-digit runs and then parse the JSON texts inside its strings (tool-call
arguments) without a scan of their own. A digit written as a ``\\u`` escape is invisible to that run search, so
orjson read ``{"n": 12345678901234567890123}`` spelled that way as the float 1.2345678901234568e+22: a value
changed without a word. It must come out as the same exact text the plain spelling gives.
"""

from __future__ import annotations

import json

import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.jsonio import may_hold_big_int

INNER = json.dumps({"n": 12345678901234567890123})  # the arguments' JSON text, as a caller of a tool wrote it


def _escaped(text: str) -> str:
    """``text`` as a JSON string literal whose digits are all ``\\u`` escapes (same decoded value)."""
    body = json.dumps(text)[1:-1]
    return '"' + "".join(f"\\u{ord(c):04x}" if c.isdigit() else c for c in body) + '"'


def _gateway_row(arguments_literal: str) -> str:
    return (
        '{"session_id": "s1", "step_id": 1, "messages": [{"role": "user", "content": "q1"}], "response": '
        '{"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": '
        '{"name": "f", "arguments": ' + arguments_literal + '}}]}, "agent_model": "m"}'
    )


def _chat_record(arguments_literal: str) -> str:
    return (
        '{"messages": [{"role": "user", "content": "q1"}, {"role": "assistant", "content": null, "tool_calls": '
        '[{"id": "c1", "type": "function", "function": {"name": "f", "arguments": ' + arguments_literal + "}}]}]}"
    )


def _sharegpt_record(value_literal: str) -> str:
    """A ShareGPT record whose gpt value (``value_literal``) holds a ``<tool_call>`` block."""
    return '{"conversations": [{"from": "human", "value": "q1"}, {"from": "gpt", "value": ' + value_literal + "}]}"


@pytest.mark.parametrize("fmt, record", [("openai-msg", _gateway_row), ("chat", _chat_record)])
def test_escaped_digits_read_as_the_plain_spelling(fmt, record):
    plain, escaped = record(json.dumps(INNER)), record(_escaped(INNER))
    assert json.loads(plain) == json.loads(escaped)  # the same JSON value, two spellings
    want = pc.into_storyline(fmt, plain, document_id="plain.jsonl")
    got = pc.into_storyline(fmt, escaped, document_id="escaped.jsonl")
    calls = [c for t in got[0]["turns"] for c in t.get("tool_calls") or []]
    assert calls and all(c["args"] == INNER for c in calls)  # the exact text kept, never a float
    assert [t.get("tool_calls") for t in got[0]["turns"]] == [t.get("tool_calls") for t in want[0]["turns"]]


def test_escaped_digits_in_a_sharegpt_call_block():
    block = "<tool_call>\n" + json.dumps({"name": "f", "arguments": {"n": 12345678901234567890123}}) + "\n</tool_call>"
    plain, escaped = _sharegpt_record(json.dumps(block)), _sharegpt_record(_escaped(block))
    assert json.loads(plain) == json.loads(escaped)
    want = pc.into_storyline("sharegpt", plain, document_id="plain.jsonl")
    got = pc.into_storyline("sharegpt", escaped, document_id="escaped.jsonl")
    assert "12345678901234567890123" in json.dumps(got[0])  # the digits kept as text, never a float
    assert got[0]["turns"] == want[0]["turns"]


def test_escaped_digits_through_load_dataset(tmp_path):
    path = tmp_path / "capture.jsonl"
    path.write_text(_gateway_row(_escaped(INNER)) + "\n", encoding="utf-8")
    ds = load_dataset("pchronicle", "openai-msg", data_files=str(path), split="train", cache_dir=str(tmp_path / "c"))
    args = [c["args"] for t in ds[0]["turns"] for c in t["tool_calls"] or []]
    assert args == [json.dumps(INNER)]  # the row's JSON text of a string argument: the exact text


def test_the_scan_answers_for_an_escaped_digit_only():
    assert may_hold_big_int(_escaped(INNER))
    assert not may_hold_big_int(json.dumps("a \u003c tag \u003e in Go's escaping: \\u003c"))  # not digits
    assert not may_hold_big_int(b'{"a": "\\u003c\\u003e"}')


def test_history_arguments_that_differ_in_a_big_integer_are_not_the_same_call():
    """A capture's next row resends the call with arguments that differ only past a float's precision: an edit
    of the history, which the reader keeps. Compared as orjson reads them, both were 1.2345678901234568e+22 and
    the edited arguments were dropped as a re-serialised copy of the first."""

    def call(arguments: str) -> dict:
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": arguments}}]}  # fmt: skip

    first, edited = '{"n": 12345678901234567890123}', '{"n":12345678901234567890124}'
    rows = [
        {"session_id": "s1", "step_id": 1, "messages": [{"role": "user", "content": "q"}], "response": call(first)},
        {"session_id": "s1", "step_id": 2, "response": {"role": "assistant", "content": "done"}, "messages": [
            {"role": "user", "content": "q"}, call(edited), {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
    ]  # fmt: skip
    stories = pc.into_storyline("openai-msg", "\n".join(json.dumps(r) for r in rows), document_id="capture.jsonl")
    text = json.dumps(stories)
    assert "12345678901234567890123" in text and "12345678901234567890124" in text
