"""The residual and ``_storyline`` envelope rules are one rule for every format (issue 10, "Rules written
once"): a value a reader does not understand is kept as residual and written back by the same-source writer,
the envelope is taken only when it is exactly a version-1 envelope, and both readers agree."""

from __future__ import annotations

import json

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats.residual import read_envelope

SOURCES = {"x": {"source_document_id": "", "fields": {}}}
CONVERSATION = [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "<think>\n</think>\nhello"}]
ROW = {
    "session_id": "s",
    "step_id": 1,
    "messages": [{"role": "user", "content": "hi"}],
    "response": {"role": "assistant", "content": "hello"},
}
NOT_ENVELOPES = [
    {"version": 1, "unknown_fields": {"sources": SOURCES}, "junk": 5},  # the issue's reproduction
    {"version": True, "unknown_fields": {"sources": SOURCES}},  # True == 1 in Python, not in JSON
    {"version": 1.0, "unknown_fields": {"sources": SOURCES}},
    {"version": 2, "unknown_fields": {"sources": SOURCES}},
    {"version": 1, "unknown_fields": {"sources": SOURCES, "more": 1}},
    {"version": 1, "unknown_fields": {"sources": {"x": {"fields": {}}}}},
    {"version": 1, "unknown_fields": {"sources": {"": {"source_document_id": "", "fields": {}}}}},
    "a string",
]


def test_sharegpt_keeps_an_envelope_with_an_unknown_key_the_issue_reproduction():
    record = {"conversations": CONVERSATION, "_storyline": NOT_ENVELOPES[0]}
    [story] = pc.into_storyline("sharegpt", json.dumps(record), document_id="r.jsonl")
    assert story["unknown_fields"]["sources"]["sharegpt"]["fields"]["/_storyline"] == NOT_ENVELOPES[0]
    assert "x" not in story["unknown_fields"]["sources"]  # not taken half-read
    assert json.loads(pc.from_storyline("sharegpt", [story])) == record


@pytest.mark.parametrize("value", NOT_ENVELOPES, ids=range(len(NOT_ENVELOPES)))
@pytest.mark.parametrize("fmt", ["sharegpt", "openai-msg"])
def test_both_readers_keep_anything_that_is_not_exactly_an_envelope(fmt, value):
    record = {"conversations": CONVERSATION, "_storyline": value} if fmt == "sharegpt" else {**ROW, "_storyline": value}
    [story] = pc.into_storyline(fmt, json.dumps(record), document_id="r.jsonl")
    fields = story["unknown_fields"]["sources"][fmt]["fields"]
    pointer = "/_storyline" if fmt == "sharegpt" else "/session_steps/0/_storyline"
    assert fields[pointer] == value
    assert set(story["unknown_fields"]["sources"]) == {fmt}
    assert json.loads(pc.from_storyline(fmt, [story])) == record


@pytest.mark.parametrize("fmt", ["sharegpt", "openai-msg"])
def test_both_readers_carry_a_real_envelope_and_write_it_back(fmt):
    env = {"version": 1, "unknown_fields": {"sources": SOURCES}}
    record = {"conversations": CONVERSATION, "_storyline": env} if fmt == "sharegpt" else {**ROW, "_storyline": env}
    [story] = pc.into_storyline(fmt, json.dumps(record), document_id="r.jsonl")
    assert story["unknown_fields"]["sources"]["x"] == SOURCES["x"]
    assert json.loads(pc.from_storyline(fmt, [story])) == record


def test_an_envelope_holding_the_readers_own_format_is_not_taken():
    own = {"version": 1, "unknown_fields": {"sources": {"sharegpt": {"source_document_id": "", "fields": {}}}}}
    assert read_envelope(own, "sharegpt") is None
    assert read_envelope(own, "openai-msg") == own["unknown_fields"]["sources"]


def test_other_formats_residual_rides_from_sharegpt_through_openai_msg_and_back():
    record = {"conversations": CONVERSATION, "extra_key": [1, "2"]}
    [story] = pc.into_storyline("sharegpt", json.dumps(record), document_id="r.jsonl")
    rows = pc.from_storyline("openai-msg", [story])
    [again] = pc.into_storyline("openai-msg", rows, document_id="rows.jsonl")
    assert again["unknown_fields"]["sources"]["sharegpt"] == story["unknown_fields"]["sources"]["sharegpt"]
