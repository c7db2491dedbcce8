"""RFC-0009's refusals ("每个 row 必须有非空 session_id、正整数且在 session 内唯一的 step_id…"): a clear
``FormatError`` naming the document, the line when known and the JSON Pointer — and in JSON Lines a bad
line or a refused session is its own error record that does not stop the others."""

from __future__ import annotations

import json
from typing import Any

import pytest

from pchronicle_datasets import FormatError, into_storyline
from pchronicle_datasets.formats import get_format
from tests.formats.openai_msg.helpers import (
    DOC,
    NAME,
    array,
    assistant,
    ids,
    jsonl,
    read,
    refused,
    row,
    system,
    user,
)


@pytest.mark.parametrize("value", ["", 7, None, ["s1"], "MISSING"])
def test_refuse_empty_or_non_string_session_id(value: Any) -> None:
    bad = row(1, [user("q")], assistant("a"))
    if value == "MISSING":
        del bad["session_id"]
    else:
        bad["session_id"] = value
    good = row(1, [user("q")], assistant("a"), session="ok")
    err = refused(array([good, bad]))
    assert (err.pointer, err.line) == ("/session_steps/1/session_id", None)
    assert "/session_steps/1/session_id" in str(err)
    err = refused(jsonl([good, bad]))
    assert (err.pointer, err.line) == ("/session_steps/1/session_id", 2)


@pytest.mark.parametrize("value", [True, False, 1.0, 0, -1, "1", None, [1], "MISSING"])
def test_refuse_step_id_that_is_not_a_positive_integer(value: Any) -> None:
    bad = row(value, [user("q")], assistant("a"))
    if value == "MISSING":
        del bad["step_id"]
    err = refused(array([bad]))
    assert err.pointer == "/session_steps/0/step_id"
    assert "/session_steps/0/step_id" in str(err) and DOC in str(err)


def test_refuse_repeated_step_id_at_the_second_occurrence() -> None:
    rows = [
        row(1, [user("q")], assistant("a")),
        row(2, [user("q"), assistant("a")], assistant("b")),
        row(1, [user("q")], assistant("c"), session="other"),  # another session may reuse it
        row(1, [user("q")], assistant("a again")),
    ]
    err = refused(jsonl(rows))
    assert (err.pointer, err.line) == ("/session_steps/3/step_id", 4)


@pytest.mark.parametrize(
    ("rows", "pointer"),
    [
        ([row(1, [user("q")])], "/session_steps/0/messages"),
        ([{"session_id": "s1", "step_id": 1}], "/session_steps/0/messages"),
        ([row(1, [user("q")], assistant(""))], "/session_steps/0/response"),
        (
            [row(1, [user("q")], assistant(None, reasoning_content="only thoughts", tool_calls=[]))],
            "/session_steps/0/response",
        ),
        (
            [row(1, [user("q"), assistant("")], {"role": "assistant", "content": None, "refusal": ""})],
            "/session_steps/0/response",
        ),
        ([row(1, [user("q")], assistant("a")), row(2, [user("q"), assistant("a")])], "/session_steps/1/messages"),
    ],
)
def test_refuse_row_without_a_valid_assistant_output(rows: list, pointer: str) -> None:
    err = refused(array(rows))
    assert err.pointer == pointer


@pytest.mark.parametrize("key", ["run_id", "run_bucket", "job_id"])
def test_refuse_run_identity_changing_within_a_session(key: str) -> None:
    rows = [
        row(2, [user("q"), assistant("a")], assistant("b"), **{key: "run-B"}),
        row(1, [user("q")], assistant("a"), **{key: "run-A"}),
        row(3, [user("q"), assistant("a")], assistant("c")),
    ]
    err = refused(jsonl(rows))
    assert (err.pointer, err.line) == (f"/session_steps/0/{key}", 1)  # the later step (in step order) is refused


def test_refuse_turn_id_overflow() -> None:
    step = 2**62 - 1  # response id = context_count + 2**63 - 2
    with_two_context = [row(step, [system("S"), assistant("hello"), user("q")], assistant("a"))]
    err = refused(jsonl(with_two_context))
    assert (err.pointer, err.line) == ("/session_steps/0/step_id", 1)
    [story] = read(jsonl([row(step, [system("S"), user("q")], assistant("a"))]))
    assert ids(story) == [1, 2**63 - 2, 2**63 - 1]
    err = refused(jsonl([row(2**62, [user("q")], assistant("a"))]))
    assert err.pointer == "/session_steps/0/step_id"


@pytest.mark.parametrize(
    ("data", "pointer", "line"),
    [
        ("{bad", "", 1),
        ('[{"session_id": "s1",\n "step_id": 1', "", None),
        ('"rows"', "", None),
        ("5", "", None),
        ('{"rows": []}', "", None),
        ('{"session_steps": {"session_id": "s1"}}', "/session_steps", None),
        (
            '[{"session_id": "s1", "step_id": 1, "messages": [], "response": {"content": "a"}}, 3]',
            "/session_steps/1",
            None,
        ),
        ('{"session_steps": [[]]}', "/session_steps/0", None),
    ],
)
def test_refuse_invalid_json_or_wrong_top_level_shape(data: str, pointer: str, line: Any) -> None:
    err = refused(data)
    assert err.pointer == pointer
    if line is not None:
        assert err.line == line


def _lines_with_bad(bad_at: int) -> tuple[str, list[str]]:
    lines = [
        json.dumps(row(1, [user("q")], assistant("a"), session="s1")),
        json.dumps(row(1, [user("q")], assistant("a"), session="s2")),
        json.dumps(row(1, [user("q")], assistant("a"), session="s3")),
    ]
    lines[bad_at] = lines[bad_at][:25]  # a truncated line (a crashed writer)
    return "\n".join(lines) + "\n", [s for i, s in enumerate(["s1", "s2", "s3"]) if i != bad_at]


@pytest.mark.parametrize("bad_at", [1, 2, 0], ids=["middle-line", "last-line", "first-line"])
def test_bad_json_lines_line_is_its_own_error_record(bad_at: int) -> None:
    data, sessions = _lines_with_bad(bad_at)
    records = list(get_format(NAME).iter_records(data, DOC))
    errors = [r for r in records if r.error is not None]
    assert len(errors) == 1
    err = errors[0].error
    assert isinstance(err, FormatError)
    assert (err.line, errors[0].line, err.document_id) == (bad_at + 1, bad_at + 1, DOC)
    assert f"line {bad_at + 1}" in str(err) and DOC in str(err)
    assert [r.story["session"] for r in records if r.story is not None] == sessions
    with pytest.raises(FormatError):
        into_storyline(NAME, data, document_id=DOC)


def test_a_refused_session_does_not_stop_the_others() -> None:
    data = jsonl(
        [
            row(1, [user("q")], assistant("a"), session="s1"),
            row(0, [user("q")], assistant("a"), session="s2"),
            row(2, [user("q"), assistant("a")], assistant("b"), session="s1"),
            [1, 2],
        ]
    )
    records = list(get_format(NAME).iter_records(data, DOC))
    assert sorted((r.error.pointer, r.error.line) for r in records if r.error) == [
        ("/session_steps/1/step_id", 2),
        ("/session_steps/3", 4),
    ]
    [good] = [r.story for r in records if r.story is not None]
    assert (good["session"], ids(good)) == ("s1", [1, 2, 4])
