"""The mapping table of docs/formats/cline.md, on the committed histories (modelled on a real one) and any real
ones given in ``PCHRONICLE_CLINE_CORPUS``: calls and results counted by hand, results given back as text linked
to their calls in order, what is not a result, context turns, time, model and metrics, refusals."""

from __future__ import annotations

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import FormatError, NoConversationError
from pchronicle_datasets.formats import cline, detect

from .common import NATIVE, TASKS, TEXT_PROTOCOL, by_hand, histories


def _story(path, document_id=None):
    (story,) = cline.decode(path.read_bytes(), document_id or str(path.relative_to(path.parents[2])))
    return story


@pytest.mark.parametrize("path", histories(), ids=lambda p: p.parent.name)
def test_calls_results_and_turns_are_what_the_file_holds(path):
    counted = by_hand(path)
    story = _story(path)
    assert detect(path.read_bytes()).NAME == "cline"
    turns = story["turns"]
    calls = [c for t in turns for c in t.get("tool_calls", ())]
    results = [r for t in turns for r in (t.get("observation") or {}).get("results", ())]
    assert len(calls) == counted["calls"]
    assert len(results) == counted["results"]
    assert all("source_call_id" in r for r in results)  # every result linked to a call
    assert story["meta"]["cline"]["text_results"] == counted["text_results"]
    assert story["meta"]["cline"]["unanswered_calls"] == counted["calls"] - counted["results"]
    assert sum(t["src"] == "agent" for t in turns) == counted["assistant"]
    assert sum(t.get("kind") == "context" and t.get("copied") is True for t in turns) == counted["context"]
    assert all("ts" in t for t in turns)
    assert all("model" in t and "metrics" in t for t in turns if t["src"] == "agent")


def test_text_results_answer_the_calls_in_order():
    story = _story(TEXT_PROTOCOL)
    first = story["turns"][1]
    assert [c["tcid"] for c in first["tool_calls"]] == ["tooluse_1", "tooluse_2"]
    raw = orjson.loads(TEXT_PROTOCOL.read_bytes())
    assert first["observation"]["results"] == [
        {"content": raw[2]["content"][0]["text"], "source_call_id": "tooluse_1"},
        {"content": raw[2]["content"][1]["text"], "source_call_id": "tooluse_2"},
    ]
    # a question spanning lines in the head; `[attempt_completion] Result: Done` (no line break after the head)
    results = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results", ())]
    by_call = {r["source_call_id"]: r["content"] for r in results}
    question = "[ask_followup_question for 'Should `NAME` go too?\n\nIt is unused now.'] Result:"
    assert by_call["tooluse_6"].startswith(question)
    assert by_call["tooluse_7"] == "[attempt_completion] Result: Done"
    messages = pc.to_messages(pc.story_to_row(story))["messages"]
    assert [m["role"] for m in messages[:5]] == ["user", "assistant", "tool", "tool", "user"]
    assert messages[2]["tool_call_id"] == "tooluse_1"
    assert messages[2]["content"].startswith("[read_file for 'src/hello.ts']")


def test_what_is_not_a_result():
    story = _story(TEXT_PROTOCOL)
    texts = [t["msg"] for t in story["turns"] if t["src"] == "user"]
    # after a message without calls: the harness's complaint is the user turn's text
    assert any(m.startswith("[ERROR] You did not use a tool") for m in texts)
    # the feedback Cline writes after attempt_completion's result stays the user's turn
    assert any(m.startswith("The user has provided feedback on the results.") for m in texts)
    # the interrupted plan_mode_respond and the last command have no result: counted, not balanced
    assert story["meta"]["cline"]["unanswered"] == ["tooluse_3", "tooluse_8"]
    resumed = next(t for t in story["turns"] if t["src"] == "user" and t["msg"].startswith("[TASK RESUMPTION]"))
    assert "kind" not in resumed  # the user's new instructions are in it
    assert story["meta"]["cline"]["interrupted"] == 1
    assert "interrupted" in pc.flags(pc.story_to_row(story))
    # a Result head with no call before it is text
    lone = [
        {"role": "user", "content": [{"type": "text", "text": "[read_file for 'a'] Result:\nx"}], "ts": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "ok"}], "ts": 2},
    ]
    (doc,) = cline.decode(orjson.dumps(lone), "h.json")
    assert doc["turns"][0]["msg"] == "[read_file for 'a'] Result:\nx" and doc["meta"]["cline"]["text_results"] == 0


def test_native_tool_results_thinking_and_images():
    story = _story(NATIVE)
    agent = story["turns"][1]
    assert agent["reason"].startswith("A one-pixel image")
    assert agent["extra"]["reasoning"] == [{"signature": "EqQBCkgIBxABGAIqQKxL"}]
    assert agent["observation"]["results"][0]["source_call_id"] == "toolu_01A"
    assert agent["observation"]["results"][0]["content"][0]["text"].startswith("[list_files for '.'] Result:")
    assert story["turns"][0]["extra"]["media"][0]["type"] == "image"
    assert agent["metrics"] == {"prompt_tokens": 8120, "completion_tokens": 96, "cached_tokens": 0, "cost_usd": 0.02579}
    fields = story["unknown_fields"]["sources"]["cline"]["fields"]
    assert fields["/1/id"] == "msg_01Xq" and fields["/2/content/0/call_id"] == "toolu_01A"


def test_context_turns():
    story = _story(TEXT_PROTOCOL)
    context = [t for t in story["turns"] if t.get("kind") == "context"]
    assert [t["extra"]["cline"]["context"] for t in context] == [
        ["environment_details"],
        ["task_progress", "environment_details"],
        ["environment_details"],
        ["environment_details"],
    ]
    assert all(t["copied"] is True and t["src"] == "user" for t in context)
    kept = pc.to_messages(pc.story_to_row(story))["messages"]
    dropped = pc.to_messages(pc.story_to_row(story), drop_copied=True)["messages"]
    assert len(kept) - len(dropped) == len(context)
    # the first message holds the task beside its environment details: a user turn
    assert story["turns"][0]["src"] == "user" and "kind" not in story["turns"][0]


def test_time_model_metrics_and_session():
    story = _story(TEXT_PROTOCOL)
    agent = story["turns"][1]
    assert agent["ts"] == "2026-04-24T23:26:13.494Z"  # 1777073173494 ms
    assert agent["model"] == "claude-sonnet-4-5" == story["agent"]["model"]
    assert agent["metrics"] == {"prompt_tokens": 9812, "completion_tokens": 141, "cached_tokens": 0}
    assert story["session"] == "1777073170000"  # the task's folder
    (alone,) = cline.decode(TEXT_PROTOCOL.read_bytes(), "h.json")
    assert alone["session"] == "h.json"
    fields = story["unknown_fields"]["sources"]["cline"]["fields"]
    assert fields["/1/ts"] == 1777073173494 and fields["/1/modelInfo"]["mode"] == "plan"  # derived: kept too


@pytest.mark.parametrize(
    ("history", "pointer", "error"),
    [
        ([{"role": "system", "content": "x", "ts": 1}], "/0", FormatError),
        ([{"role": "user", "content": "x", "ts": 1}, 5], "/1", FormatError),
        ([{"role": "user", "content": [{"type": "widget", "x": 1}], "ts": 1}], "/0/content/0", FormatError),
        ([], "", NoConversationError),
    ],
)
def test_refusals_name_the_pointer(history, pointer, error):
    with pytest.raises(error) as info:
        cline.decode(orjson.dumps(history), "h.json")
    assert info.value.pointer == pointer and info.value.document_id == "h.json"


def test_detection_takes_cline_histories_and_leaves_bare_message_arrays_to_chat():
    assert detect((TASKS / "1777073170000" / "api_conversation_history.json").read_bytes()).NAME == "cline"
    bare = [{"role": "user", "content": [{"type": "text", "text": "hi"}]}, {"role": "assistant", "content": "yo"}]
    assert detect(orjson.dumps(bare)).NAME == "chat"
    half = [{"role": "user", "content": "hi", "ts": 1}, {"role": "assistant", "content": "yo"}]
    assert detect(orjson.dumps(half)).NAME == "chat"  # not every message stamped: not Cline's
    # A chat log that stamps its messages but holds a role no Anthropic history has (system, tool) stays chat's,
    # which reads it as it did before the cline format existed; read as cline (--from cline), it is refused.
    system = [{"role": "system", "content": "x", "ts": 1}, {"role": "user", "content": "hi", "ts": 2}]
    assert detect(orjson.dumps(system)).NAME == "chat"
    tool = [{"role": "assistant", "content": "", "ts": 1}, {"role": "tool", "content": "ok", "ts": 2}]
    assert detect(orjson.dumps(tool)).NAME == "chat"
