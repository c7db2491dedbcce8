"""Original forms (docs/formats/openai-msg.md, reading 5): content parts, arguments, ``meta_json`` and
``env_state`` written as JSON strings or as values are read as values and written back in their form."""

from __future__ import annotations

import json

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, assistant, call, case, jsonl, read, row, rows_of, tool, turn, user


def test_same_source_export_restores_original_forms_exactly() -> None:
    golden = case("forms")
    stories = read(golden)
    s1 = stories[0]
    assert turn(s1, 2)["msg"] == golden.expected["turn_2_msg"]
    assert [c["args"] for c in turn(s1, 3)["tool_calls"]] == golden.expected["turn_3_args"]
    assert turn(s1, 4)["msg"] == golden.expected["turn_4_msg"]
    assert turn(s1, 5)["msg"] == golden.expected["turn_5_msg"]
    rows_out, root_out = parse_export(from_storyline(NAME, stories))
    assert root_out == {}
    assert rows_out == rows_of(golden)  # strings stay strings, objects objects, absent stays absent, 42 stays "42"


def test_a_call_without_type_is_written_back_without_it_beside_a_history_copy_that_has_it() -> None:
    # Some servers leave a response's call "type" out; the client sends the call back in the next request's history
    # with "type": "function". The writer wrote "function" on the response too, so the copy's type was no longer a
    # difference to keep, and the document read back was another (a CI fuzz example, test_json_mutations).
    typeless = {k: v for k, v in call("c1", "ls").items() if k != "type"}
    rows = [
        row(1, [user("list")], assistant("", tool_calls=[call("c0", "pwd"), typeless])),
        row(2, [user("list"), assistant("", tool_calls=[call("c0", "pwd"), call("c1", "ls")]),
                tool("c0", "/w"), tool("c1", "a.txt")], assistant("done")),
    ]  # fmt: skip
    stories = read(jsonl(rows))
    text = from_storyline(NAME, stories)
    assert [json.loads(x) for x in text.splitlines()] == rows
    assert read(text) == stories


def test_a_history_copy_without_its_calls_type_is_written_back_without_it() -> None:
    # The other way round: the response's call has "type": "function" and the client resends it without it. The
    # writer rebuilds a copy from the message it copies, so it wrote "type" into the copy the client sent without
    # one (a fuzz example, test_json_mutations, FUZZ_SEED=4250523957): the copy's missing keys are kept (absent).
    typeless = {k: v for k, v in call("c1", "ls").items() if k != "type"}
    rows = [
        row(1, [user("list")], assistant("", tool_calls=[call("c0", "pwd"), call("c1", "ls")])),
        row(2, [user("list"), assistant("", tool_calls=[call("c0", "pwd"), typeless]),
                tool("c0", "/w"), tool("c1", "a.txt")], assistant("done")),
    ]  # fmt: skip
    stories = read(jsonl(rows))
    text = from_storyline(NAME, stories)
    assert [json.loads(x) for x in text.splitlines()] == rows
    assert read(text) == stories
