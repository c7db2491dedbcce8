"""RFC-0009, "接受的数据形态" (accepted shapes): a row array, JSON Lines of rows or a ``session_steps``
envelope, rows grouped by ``session_id`` into one document each; optional ``messages`` and ``content``."""

from __future__ import annotations

import json

from pchronicle_datasets import from_storyline, into_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import (
    DOC,
    NAME,
    assistant,
    case,
    fields,
    ids,
    jsonl,
    one,
    read,
    refused,
    row,
    rows_of,
    system,
    user,
)


def test_minimal_row_gives_the_whole_document() -> None:
    golden = case("minimal")
    story = one(golden)
    assert {k: v for k, v in story.items() if k != "meta"} == golden.expected["document_without_meta"]
    hints = story["meta"]["openai-msg"]
    assert hints["version"] == 1
    assert [[h["r"], h["step_id"]] for h in hints["rows"]] == golden.expected["hint_rows_r_step_id"]


def test_three_input_shapes_give_the_same_documents() -> None:
    as_jsonl = read(case("two_sessions_jsonl"))
    assert read(case("two_sessions_array")) == as_jsonl
    assert read(case("two_sessions_envelope")) == as_jsonl
    for shape in ("jsonl", "array", "envelope"):
        expected = case(f"two_sessions_{shape}").expected
        assert [s["session"] for s in as_jsonl] == expected["sessions"]
        assert fields(as_jsonl[0]) == expected["first_fields"]


def test_rows_grouped_by_session_in_first_appearance_order() -> None:
    golden = case("two_sessions_jsonl")
    alpha, beta = read(golden)
    assert [alpha["session"], beta["session"]] == golden.expected["sessions"]
    assert [[t["id"], t["msg"]] for t in alpha["turns"]] == golden.expected["first_turns_id_msg"]
    assert [[t["id"], t["msg"]] for t in beta["turns"]] == golden.expected["second_turns_id_msg"]
    assert [h["r"] for h in alpha["meta"]["openai-msg"]["rows"]] == golden.expected["first_hint_rows_r"]


def test_turns_follow_step_id_order_when_rows_are_out_of_order() -> None:
    golden = case("out_of_order")
    story = one(golden)
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]  # each row keeps its own {r}
    assert story["final_metrics"] == golden.expected["final_metrics"]


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
    [a] = read(jsonl(first), doc="day1.jsonl")
    [b] = read(jsonl(second), doc="day2.jsonl")
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
    data = case("minimal").text
    stories = into_storyline("openai-messages", data, document_id=DOC)
    assert stories == into_storyline(NAME, data, document_id=DOC)
    assert from_storyline("openai-messages", stories) == from_storyline(NAME, stories)


def test_messages_without_content_key() -> None:
    golden = case("without_content")
    story = one(golden)
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows_of(golden)  # absent content stays absent


def test_rows_without_messages() -> None:
    golden = case("without_messages")
    story = one(golden)
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows_of(golden)  # absent stays absent, null stays null
