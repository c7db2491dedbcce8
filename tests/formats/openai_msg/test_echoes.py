"""Issue #23, "A delta-style gateway row duplicates the previous response" (docs/formats/openai-msg.md,
"Echoes"): a gateway that logs only each request's new messages still resends the assistant message whose calls
the new tool results answer. Such a message repeats what the session already holds: it is a history copy (no new
turn, no renamed call, RFC-0009's "未选中的 assistant / 历史 messages 副本不生成新 turn"), and the same-source writer
puts it back in its place."""

from __future__ import annotations

import pchronicle_datasets as pc
from tests.formats.openai_msg.boundary import assert_same_source
from tests.formats.openai_msg.helpers import assistant, call, case, fields, jsonl, one, row, tool, user


def _messages(story: dict) -> list[dict]:
    with pc.collect_losses():
        return pc.to_messages(story, arguments="object")["messages"]


def test_an_echoed_assistant_message_and_result_add_no_turn() -> None:
    golden = case("delta_echo")
    story = one(golden)
    assert [t["id"] for t in story["turns"]] == golden.expected["ids"]
    assert fields(story) == golden.expected["fields"]  # the echo's own extra key stays residual
    messages = _messages(story)
    assert messages == golden.expected["messages"]
    calls = [c["id"] for m in messages for c in m.get("tool_calls") or ()]
    assert calls == ["call_1"]  # the call once, under the id the source gave it
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["call_1"]


def test_the_echo_is_written_back_where_it_was() -> None:
    assert_same_source(case("delta_echo").text)


def test_a_user_message_that_repeats_itself_is_a_new_turn() -> None:
    """A person may say the same thing twice: only assistant and tool messages can be echoes."""
    second = [assistant("a"), user("again"), user("more")]  # delta style: the echo, then two new user messages
    story = one(jsonl([row(1, [user("again")], assistant("a")), row(2, second, assistant("b"))]))
    assert [t["msg"] for t in story["turns"]] == ["again", "a", "again", "more", "b"]


def test_a_new_call_with_an_earlier_calls_id_is_not_an_echo() -> None:
    """Same id, other arguments: a new message (the reader renames its id), not a copy."""
    first = assistant("", tool_calls=[call("c1", "ls", '{"p": "a"}')])
    second = assistant("", tool_calls=[call("c1", "ls", '{"p": "b"}')])
    story = one(jsonl([row(1, [user("go")], first), row(2, [second, tool("c1", "x")], assistant("done"))]))
    assert sum(len(t.get("tool_calls") or ()) for t in story["turns"]) == 2


def test_the_echo_index_grows_with_the_new_messages_not_with_every_resent_history() -> None:
    """A full-history gateway resends every earlier message with each row: the index holds each message once
    (a copy equal to the one at its place in the previous row is counted, not indexed again), so reading a
    session stays linear in its length; positions still count every message, as the writer counts them."""
    from pchronicle_datasets.formats.openai_msg.history import Held, history_key

    held, history, rows = Held(), [user("go")], 40
    for k in range(rows):
        history = [*history, assistant(f"step {k}"), tool(f"out {k}", "c")]
        held.add(history, [history_key(m) for m in history])
    indexed = sum(len(entries) for entries in held._by_print.values())
    assert indexed == 2 * rows  # each assistant and tool message once (users are never echoes)
    assert held.count == sum(1 + 2 * (k + 1) for k in range(rows))
    found = held.find(assistant("step 3"), history_key(assistant("step 3")))
    assert found is not None and found[0] == sum(1 + 2 * (k + 1) for k in range(3)) + 7  # where it first came
