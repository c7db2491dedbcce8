"""Issue #12, "Readers never hide conversation content" (docs/formats/openai-msg.md, "What may be residual, what
must be a turn or be refused"): every source message is a turn or an observation result, never residual whole;
the ids RFC-0009 derives stay as they are; renamed call ids are shown as the source wrote them; same-source
export writes every such message back in its place. Golden cases, and the real message lists of
``tests/data/chat/corpus/`` (copies of ``../shared/corpora/openai_chat/``) wrapped into gateway rows."""

from __future__ import annotations

import json
import re

import orjson
import pytest

import pchronicle_datasets as pc
from tests import goldens
from tests.formats.openai_msg.boundary import assert_same_source
from tests.formats.openai_msg.helpers import (
    NAME,
    assistant,
    call,
    case,
    fields,
    jsonl,
    one,
    refused,
    row,
    tool,
    turn,
    user,
)

CASES = ("developer_context", "call_0_every_step", "id_less_results", "other_roles")
CORPUS = goldens.DATA / "chat" / "corpus"  # real message lists (tests/data/chat/README.md: their provenance)
WHOLE_MESSAGE = re.compile(r"^/session_steps/\d+/(messages/\d+|response)$")


def _messages(story: dict) -> list[dict]:
    with pc.collect_losses():
        return pc.to_messages(story, arguments="object")["messages"]


def test_developer_and_later_system_messages_are_turns_where_they_were() -> None:
    """A Codex session: its first row's developer message is a context turn (copied) that RFC-0009 does not count
    in context_count (ids 1–4 stay the formulas'), a later system and developer message are turns of their own
    before the request turn; ``to_messages`` shows them all, in the source order."""
    golden = case("developer_context")
    story = one(golden)
    assert [[t["id"], t["src"], t["kind"], t.get("copied")] for t in story["turns"]] == golden.expected[
        "turns_id_src_kind_copied"
    ]
    assert fields(story) == golden.expected["fields"]
    assert _messages(story) == golden.expected["messages"]


def test_a_call_id_reused_in_every_step_is_shown_as_the_source_wrote_it() -> None:
    """``call_0`` in every step: Storyline renames the later calls (ids stay unique), ``/meta/source_call_ids``
    keeps the source's, and the training output shows ``call_0`` on every call and result."""
    golden = case("call_0_every_step")
    story = one(golden)
    assert story["meta"]["source_call_ids"] == golden.expected["source_call_ids"]
    assert [[t["id"], t.get("tool_calls")] for t in story["turns"] if t["src"] == "agent"] == golden.expected[
        "agent_turns_id_tool_calls"
    ]
    out = _messages(story)
    assert out == golden.expected["messages"]
    shown = [c["id"] for m in out for c in m.get("tool_calls") or []] + [m["tool_call_id"] for m in out if "name" in m]
    assert set(shown) == {"call_0"}
    # the same from a dataset row, which decodes /meta only for these ids
    with pc.collect_losses():
        assert pc.to_messages(pc.story_to_row(story), arguments="object")["messages"] == out


def test_a_capture_without_renamed_ids_has_no_source_call_ids() -> None:
    assert "source_call_ids" not in one(case("minimal"))["meta"]


def test_tool_messages_without_an_id_are_results_of_the_agent_turn_they_follow() -> None:
    """Step 2's tool message answers step 1's calls (derived from ``<tool_call>`` markup: no id to name), step 3's
    ``tool_call_id: null`` one follows step 2's call: each is a result of that turn, so the training output shows
    it right after the call it follows (by position), not after the answer the model wrote once it had seen it."""
    golden = case("id_less_results")
    story = one(golden)
    assert [[t["id"], t.get("observation")] for t in story["turns"] if t["src"] == "agent"] == golden.expected[
        "agent_turns_id_observation"
    ]
    assert fields(story) == golden.expected["fields"]
    assert _messages(story) == golden.expected["messages"]


def test_function_custom_and_unselected_assistant_messages() -> None:
    """A legacy ``function`` message is a result without an id (its role and name residual per key, so export
    writes them back); ``ipython`` is a turn of that src; a message of role ``agent`` an agent turn whose role is
    residual (the writer would write ``assistant``); an unselected assistant message with calls an agent turn (its
    ``reasoning_content`` its ``reason``) whose call the next tool message answers."""
    golden = case("other_roles")
    story = one(golden)
    assert [[t["id"], t["src"], t["kind"]] for t in story["turns"]] == golden.expected["turns_id_src_kind"]
    assert turn(story, 3)["observation"] == golden.expected["turn_3_observation"]
    assert turn(story, 8) == golden.expected["turn_8"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("name", CASES)
def test_no_message_is_residual_whole_and_export_writes_each_back(name: str) -> None:
    golden = case(name)
    story = one(golden)
    assert not [p for p in fields(story) if WHOLE_MESSAGE.match(p)]
    assert_same_source(golden.text)


@pytest.mark.parametrize(
    ("message", "got"),
    [({"content": "x"}, "missing"), ({"role": "", "content": "x"}, "an empty string"), ({"role": 7}, "integer")],
)
def test_a_new_message_without_a_role_is_refused_with_its_pointer(message: dict, got: str) -> None:
    """A message that must be a turn needs a src: without a role it is refused (the OpenAI API refuses it too)."""
    data = jsonl([row(1, [message, user("q")], assistant("a"))])
    error = refused(data)
    assert error.pointer == "/session_steps/0/messages/0/role"
    assert f"a message needs a role (a non-empty string), got {got}" in str(error)


# ------------------------------------------------------------------------------------------ real message lists


def _valid_output(msg: dict) -> bool:
    return any(msg.get(k) not in (None, "", [], {}) for k in ("content", "refusal", "tool_calls"))


def _gateway_rows(messages: list[dict], sid: str) -> list[dict]:
    """A message list as a gateway logs it: one row per model call (each valid assistant output), with the whole
    history before it as ``messages``."""
    out = []
    for i, msg in enumerate(messages):
        if msg.get("role") == "assistant" and _valid_output(msg):
            out.append({"session_id": sid, "step_id": len(out) + 1, "messages": messages[:i], "response": msg})
    return out


def _corpus_lists() -> list[tuple[str, list[dict]]]:
    found = []
    for path in sorted(CORPUS.glob("*.json")):
        data = json.loads(path.read_text())
        if isinstance(data, dict) and isinstance(data.get("messages"), list):  # a litellm request/response log
            data = [*data["messages"], data["response"]["choices"][0]["message"]]
        elif data and "role" not in data[0]:  # records holding a message list
            data = data[0]["messages"]
        found.append((path.name, data))
    return found


def test_real_message_lists_show_every_message_and_come_back() -> None:
    """Real conversations (OpenHands runs with tool messages, a litellm log, Toucan's legacy ``function_call``
    answered by a ``function`` message after a text-only assistant message) logged as gateway rows: no message is
    residual whole, every message's text is in ``to_messages``, and same-source export gives the rows back."""
    lists = _corpus_lists()
    assert len(lists) == 4
    for name, messages in lists:
        gateway = _gateway_rows(messages, name)
        data = b"".join(orjson.dumps(r) + b"\n" for r in gateway).decode()
        story = one(data, doc=f"corpora/{name}")
        assert not [
            p
            for p in story.get("unknown_fields", {}).get("sources", {}).get(NAME, {}).get("fields", {})
            if WHOLE_MESSAGE.match(p)
        ], name
        shown = [m["content"] for m in _messages(story)]
        last = max(i for i, m in enumerate(messages) if m.get("role") == "assistant" and _valid_output(m))
        for msg in messages[: last + 1]:  # what some row logged
            if isinstance(msg.get("content"), str) and msg["content"]:
                assert msg["content"] in shown, (name, msg["role"], msg["content"][:60])
        assert_same_source(data, doc=f"corpora/{name}")


def test_a_tool_call_id_that_is_not_a_string_is_residual_at_its_key() -> None:
    """``tool_call_id: 42`` names no call: the message is a result without an id, and the 42 is residual where it
    was; a tool message with neither id nor content is a result with nothing in it. Both are written back."""
    first = row(1, [user("q")], assistant(None, tool_calls=[call("c", "ls")]))
    second = row(2, [user("q"), assistant(None, tool_calls=[call("c", "ls")]), tool(42, "x"), {"role": "tool"}])
    second["response"] = assistant("ok")
    data = jsonl([first, second])
    story = one(data)
    assert turn(story, 2)["observation"] == {"results": [{"content": "x"}, {}]}
    assert fields(story) == {"/session_steps/1/messages/2/tool_call_id": 42}
    assert_same_source(data)


def test_tool_output_after_an_output_selected_from_messages_is_a_result_of_that_output() -> None:
    """The row's output is its last valid assistant message; the tool message after it follows it."""
    data = jsonl([row(1, [user("q"), assistant("A"), {"role": "tool", "content": "late"}], assistant(""))])
    story = one(data)
    assert [[t["id"], t["src"], t.get("observation")] for t in story["turns"]] == [
        [1, "user", None],
        [2, "agent", {"results": [{"content": "late"}]}],
    ]
    assert fields(story) == {"/session_steps/0/response": {"role": "assistant", "content": ""}}
    assert_same_source(data)
