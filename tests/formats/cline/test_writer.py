"""The writers of docs/formats/cline.md: a history read from Cline comes back as equal JSON (the committed ones and
any real ones of ``PCHRONICLE_CLINE_CORPUS``); several histories are JSON Lines of arrays; another format's document
is written as Cline's native tool-calling history, its calls and results read back linked, what it cannot hold
counted, other formats' residual carried and taken back."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.formats import cline, detect

from .common import NATIVE, TEXT_PROTOCOL, histories


@pytest.mark.parametrize("path", histories(), ids=lambda p: p.parent.name)
def test_same_source_round_trip_gives_equal_json(path):
    data = path.read_bytes()
    stories = pc.into_storyline("cline", data, document_id=f"{path.parent.name}/{path.name}")
    text = pc.from_storyline("cline", stories)
    assert orjson.loads(text) == orjson.loads(data)
    assert pc.convert("cline", "cline", data) == text
    # through a dataset row and back
    again = pc.from_storyline("cline", [pc.row_to_story(pc.story_to_row(stories[0]))])
    assert orjson.loads(again) == orjson.loads(data)


def test_several_histories_are_json_lines_of_arrays():
    stories = [*cline.decode(TEXT_PROTOCOL.read_bytes(), "a/api_conversation_history.json")]
    stories += cline.decode(NATIVE.read_bytes(), "b/api_conversation_history.json")
    text = cline.encode(stories)
    assert cline.encode(stories[:1]) + cline.encode(stories[1:]) == text  # ENCODE_IN_BATCHES
    assert detect(text.encode()).NAME == "cline"
    back = cline.decode(text, "both.jsonl")
    assert [orjson.loads(line) for line in text.splitlines()] == [
        orjson.loads(TEXT_PROTOCOL.read_bytes()),
        orjson.loads(NATIVE.read_bytes()),
    ]
    assert [s["session"] for s in back] == ["both.jsonl", "both.jsonl#2"]
    assert [len(s["turns"]) for s in back] == [len(s["turns"]) for s in stories]


CHAT = {
    "id": "c1",
    "model": "gpt-4o",
    "split": "train",
    "messages": [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "List the files."},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "a.txt"},
        {"role": "assistant", "content": "One file: a.txt."},
    ],
}


def test_other_documents_are_written_as_native_tool_calls_and_count_what_they_lose():
    stories = pc.into_storyline("chat", orjson.dumps(CHAT), document_id="c.json")
    with pc.collect_losses() as report:
        text = pc.from_storyline("cline", stories)
    history = orjson.loads(text)
    assert [m["role"] for m in history] == ["user", "user", "assistant", "user", "assistant"]
    assert history[2]["content"] == [{"type": "tool_use", "id": "call_1", "name": "ls", "input": {}}]
    assert history[3]["content"] == [{"type": "tool_result", "tool_use_id": "call_1", "content": "a.txt"}]
    assert report.counts["source_renamed"] == 1  # the system turn: Cline stores user and assistant messages
    assert report.counts["not in cline: /session"] == 1
    assert detect(text.encode()).NAME == "chat"  # no turn has a time, so no message has ts: name the format
    (back,) = pc.into_storyline("cline", text, document_id="written")
    calls = [c for t in back["turns"] for c in t.get("tool_calls", ())]
    assert [(c["tcid"], c["fn"]) for c in calls] == [("call_1", "ls")]
    assert back["turns"][2]["observation"]["results"] == [{"content": "a.txt", "source_call_id": "call_1"}]
    # the chat record's own keys ride in the envelope and come back
    assert back["unknown_fields"]["sources"]["chat"] == stories[0]["unknown_fields"]["sources"]["chat"]


def test_time_model_and_metrics_are_written_for_other_documents():
    (story,) = cline.decode(NATIVE.read_bytes(), "n/api_conversation_history.json")
    story = {k: v for k, v in story.items() if k not in ("meta", "unknown_fields", "unknown_key_counts")}
    story["origin"] = {"format": "chat"}
    history = orjson.loads(pc.from_storyline("cline", [story]))
    assert history[1]["ts"] == 1777080004100
    assert history[1]["modelInfo"] == {"modelId": "anthropic/claude-sonnet-4.5"}
    assert history[1]["metrics"] == {"tokens": {"prompt": 8120, "completion": 96, "cached": 0}, "cost": 0.02579}
    assert detect(orjson.dumps(history)).NAME == "cline"


# ------------------------------------------------------------------ round trip of generated histories


_text = st.text(max_size=30)
_block = st.one_of(
    st.builds(lambda t: {"type": "text", "text": t}, _text),
    st.builds(lambda t, c: {"type": "text", "text": t, "call_id": c}, _text, st.sampled_from(["", "r1"])),
    st.builds(
        lambda n, t: {"type": "text", "text": f"[{n} for 'x'] Result:\n{t}"}, st.sampled_from(["ls", "cat"]), _text
    ),
    st.builds(lambda t: {"type": "text", "text": f"<environment_details>\n{t}\n</environment_details>"}, _text),
    st.builds(lambda t: {"type": "thinking", "thinking": t, "signature": "sig"}, _text),
    st.builds(
        lambda i, n: {"type": "tool_use", "id": i, "name": n, "input": {"p": 1}, "call_id": i},
        st.sampled_from(["t1", "t2", "t3"]),
        st.sampled_from(["ls", "cat"]),
    ),
    st.builds(
        lambda i, t: {"type": "tool_result", "tool_use_id": i, "content": t}, st.sampled_from(["t1", "t2", "t9"]), _text
    ),
    st.just({"type": "widget", "x": 1}),
)


@st.composite
def _histories(draw):
    out = []
    for i in range(draw(st.integers(1, 6))):
        role = draw(st.sampled_from(["user", "assistant"]))
        content = draw(st.one_of(_text, st.lists(_block, min_size=1, max_size=4)))
        message = {"role": role, "content": content, "ts": 1777073170000 + i}
        if role == "assistant" and draw(st.booleans()):
            message["modelInfo"] = {"modelId": draw(st.sampled_from(["m1", "m2"])), "providerId": "p", "mode": "act"}
            message["metrics"] = {"tokens": {"prompt": draw(st.integers(0, 99)), "completion": 1, "cached": 0}}
        out.append(message)
    return out


@settings(max_examples=150, deadline=None)
@given(_histories())
def test_generated_histories_round_trip_or_are_refused_with_a_pointer(history):
    data = orjson.dumps(history)
    try:
        stories = cline.decode(data, "tasks/1/api_conversation_history.json")
    except pc.PchronicleError as exc:
        assert exc.pointer.startswith("/")  # a message whose content is all residual: refused where it is
        return
    assert orjson.loads(cline.encode(stories)) == history
    pc.to_messages(pc.story_to_row(stories[0]))  # the training output takes every document


def test_the_documents_model_stamps_the_answers_that_name_none():
    # Another format's document may name its model only once (/agent/model: an OpenHands SDK run's stats): Cline
    # stamps every answer with its model, so each answer without a turn model carries the document's.
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a", "model": "minimax-m2.7"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}],
    }
    with pc.collect_losses(propagate=False) as report:
        [written] = orjson.loads("[" + pc.from_storyline("cline", [story]).strip() + "]")
    assert written[1]["modelInfo"] == {"modelId": "minimax-m2.7"} and "modelInfo" not in written[0]
    assert not any("model" in kind for kind in report.counts)
    [back] = pc.into_storyline("cline", orjson.dumps(written), document_id="h.json")
    assert back["agent"]["model"] == "minimax-m2.7"
