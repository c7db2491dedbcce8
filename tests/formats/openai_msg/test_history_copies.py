"""History copies (docs/formats/openai-msg.md, reading 1; RFC-0009 "后续 row 里重复的历史 messages 视为
context 副本"): a row's messages repeating the session's history are copies — no new turns, no residual,
compared on role, content, calls and tool_call_id; only what follows the copied prefix is new."""

from __future__ import annotations

from tests.formats.openai_msg.helpers import case, fields, one, turn


def test_repeated_last_user_message_makes_no_second_request_turn() -> None:
    golden = case("repeated_user")
    story = one(golden)
    # step 4 repeats step 3's messages without its response: they are still the history prefix
    assert [[t["id"], t["src"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_src_msg"]
    assert fields(story) == golden.expected["fields"]


def test_retry_row_repeating_the_history_makes_no_request_turn() -> None:
    golden = case("retry")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_msg"]


def test_no_tool_result_is_attached_twice() -> None:
    golden = case("no_double_result")
    story = one(golden)
    assert [[t["id"], t.get("observation")] for t in story["turns"] if t["src"] == "agent"] == golden.expected[
        "agent_turns_id_observation"
    ]
    assert fields(story) == golden.expected["fields"]


def test_second_new_user_message_is_a_user_turn_where_it_was() -> None:
    """Issue #12: a whole message is never residual. The earlier new user message is a user turn before the
    request turn, with an id after the derived ones (docs/formats/openai-msg.md, "What may be residual")."""
    golden = case("second_new_user")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_msg"]
    assert turn(story, 5) == golden.expected["turn_5"]
    assert fields(story) == golden.expected["fields"]


def test_history_copies_compare_without_reasoning_and_normalise_it_away() -> None:
    golden = case("stripped_reasoning")
    story = one(golden)
    assert [[t["id"], t["msg"], t.get("reason")] for t in story["turns"]] == golden.expected["turns_id_msg_reason"]
    assert fields(story) == golden.expected["fields"]


def test_extra_keys_of_a_history_copy_are_residual_at_the_copy_pointer() -> None:
    golden = case("copy_extras")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_msg"]
    # the new tool message's name and its copies in later rows; a copy's refusal is normalised away when
    # the copy has no content, kept beside valid content
    assert fields(story) == golden.expected["fields"]


def test_messages_after_a_diverging_history_are_new() -> None:
    # the rewritten history (a summary user message, an assistant reply) is new: two turns of their own
    golden = case("diverged")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_msg"]
    assert fields(story) == golden.expected["fields"]


def test_new_messages_neither_selected_nor_linked_results_are_turns_or_results() -> None:
    """Issue #12: tool messages without an id are results of the agent turn they follow (turn 2, the previous
    row's response), an unselected assistant message is an agent turn where it was; nothing is residual."""
    golden = case("nothing_dropped")
    story = one(golden)
    assert [[t["id"], t["src"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_src_msg"]
    assert turn(story, 2)["observation"] == golden.expected["turn_2_observation"]
    assert turn(story, 5) == golden.expected["turn_5"]
    assert "observation" not in turn(story, 4)
    assert fields(story) == golden.expected["fields"]


def test_resent_arguments_are_a_copy_only_when_equal_with_their_types() -> None:
    """Arguments a client re-serialised (spacing, key order) are still a copy; arguments whose values changed type
    (``true`` → ``1``, ``1`` → ``1.0``, which Python's ``==`` calls equal) are an edit of the history, kept: as a
    copy, the edited arguments were dropped and the writer gave back the first ones."""
    import json

    import pchronicle_datasets as pc

    def rows(first: str, resent: str) -> str:
        call = {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": first}}]}  # fmt: skip
        again = json.loads(json.dumps(call))
        again["tool_calls"][0]["function"]["arguments"] = resent
        return "\n".join(json.dumps(r) for r in [
            {"session_id": "s", "step_id": 1, "messages": [{"role": "user", "content": "q"}], "response": call},
            {"session_id": "s", "step_id": 2, "response": {"role": "assistant", "content": "done"}, "messages": [
                {"role": "user", "content": "q"}, again, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
        ])  # fmt: skip

    def resent_arguments(text: str) -> object:
        back = pc.from_storyline("openai-msg", pc.into_storyline("openai-msg", text, document_id="c.jsonl"))
        row = json.loads(back.splitlines()[1])
        return json.loads(row["messages"][1]["tool_calls"][0]["function"]["arguments"])

    for first, resent in [('{"a": true}', '{"a":1}'), ('{"a": 1}', '{"a": 1.0}'), ('{"a": 0}', '{"a": false}')]:
        assert json.dumps(resent_arguments(rows(first, resent))) == json.dumps(json.loads(resent)), (first, resent)
    copy = rows('{"a": 1, "b": "x"}', '{"b":"x","a":1}')  # re-serialised: one call, no new turn
    story = pc.into_storyline("openai-msg", copy, document_id="c.jsonl")[0]
    assert sum(len(t.get("tool_calls") or []) for t in story["turns"]) == 1


def test_resent_messages_are_copies_only_when_equal_with_their_types() -> None:
    """A resent message whose values changed type only (``true`` → ``1``, ``1`` → ``1.0`` in a content part, an
    extra key, a call's field), which Python's ``==`` calls equal, is an edit of the history; a copy whose call
    holds a value RFC-0009 does not consume (``index``, a function's other keys) otherwise than the message it
    copies keeps it. Either way the values come back as the later row spelled them: before, the writer gave back
    the first row's. A message resent equal (key order aside) is still a copy: no new turn. What the RFC
    normalises away in a copy stays normalised: arguments re-spaced, ``""`` content for ``null``."""
    import copy as copying
    import json

    import orjson

    import pchronicle_datasets as pc
    from pchronicle_datasets.formats.openai_msg.history import same_values
    from pchronicle_datasets.jsonio import loads

    user = {"role": "user", "content": [{"type": "text", "text": "q", "cache": True, "w": 1}]}
    call = {"role": "assistant", "content": None, "extra": {"n": 2}, "tool_calls": [
        {"id": "c1", "type": "function", "index": 0, "function": {"name": "f", "arguments": "{}"}}]}  # fmt: skip

    def rows(edit) -> str:
        again_user, again_call = copying.deepcopy(user), copying.deepcopy(call)
        edit(again_user, again_call)
        return "\n".join(json.dumps(r) for r in [
            {"session_id": "s", "step_id": 1, "messages": [user], "response": call},
            {"session_id": "s", "step_id": 2, "response": {"role": "assistant", "content": "done"}, "messages": [
                again_user, again_call, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},
        ])  # fmt: skip

    def typed(text: str) -> list:
        return [orjson.dumps(loads(line.encode()), option=orjson.OPT_SORT_KEYS) for line in text.splitlines()]

    edits = {
        "part true → 1": lambda u, c: u["content"][0].update(cache=1),
        "part 1 → 1.0": lambda u, c: u["content"][0].update(w=1.0),
        "extra key 2 → 2.0": lambda u, c: c["extra"].update(n=2.0),
        "call field 0 → false": lambda u, c: c["tool_calls"][0].update(index=False),
        # Equal as history keys, a value RFC-0009 does not consume spelled otherwise: still copies, the value kept.
        "call field 0 → 5": lambda u, c: c["tool_calls"][0].update(index=5),
        "function field": lambda u, c: c["tool_calls"][0]["function"].update(strict=True),
    }
    for what, edit in edits.items():
        text = rows(edit)
        back = pc.from_storyline("openai-msg", pc.into_storyline("openai-msg", text, document_id="c.jsonl"))
        assert typed(back) == typed(text), what

    def reorder(u: dict, c: dict) -> None:
        u["content"][0] = dict(reversed(list(u["content"][0].items())))
        c["extra"]["n"] = 2
        c["tool_calls"][0]["index"] = 0

    def same(u: dict, c: dict) -> None:
        c["extra"]["n"] = 2  # the same value: a copy

    def respaced(u: dict, c: dict) -> None:
        c["tool_calls"][0]["function"]["arguments"] = "{ }"

    def empty_content(u: dict, c: dict) -> None:
        c["content"] = ""

    plain = pc.into_storyline("openai-msg", rows(lambda u, c: None), document_id="c.jsonl")[0]
    for edit in (reorder, same, respaced, empty_content):
        story = pc.into_storyline("openai-msg", rows(edit), document_id="c.jsonl")[0]
        assert [t["src"] for t in story["turns"]] == [t["src"] for t in plain["turns"]], edit.__name__
        if edit in (respaced, empty_content):  # normalised away (RFC-0009): no residual for the copy
            assert story["unknown_fields"] == plain["unknown_fields"], edit.__name__
    # Values orjson cannot write (integers beyond 64 bits, which the reader refuses later with their pointer)
    # are compared one by one.
    assert same_values([{"n": 2**70, "b": True}], [{"b": True, "n": 2**70}])
    assert not same_values([{"n": 2**70, "b": True}], [{"n": 2**70, "b": 1}])
