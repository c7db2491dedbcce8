"""RFC-0009, "权威字段（1:1）" (authoritative fields) and "Turn 构造与选择" (turn construction and selection):
each source value goes to exactly one Storyline field — session, ts, msg, reason, tool calls and their
arguments, observation results, ``/task/env`` and the response turn's ``/env``."""

from __future__ import annotations

import json

import pytest

from tests.formats.openai_msg.helpers import assistant, case, family, fields, jsonl, one, row, turn, user


def test_session_id_maps_to_session() -> None:
    story = one(jsonl([row(1, [user("q")], assistant("a"), session="sess-ä/1")]))
    assert story["session"] == "sess-ä/1"
    assert "session_id" not in json.dumps(fields(story))


def test_created_at_is_response_ts_copied_to_request_ts_and_not_started_at() -> None:
    golden = case("created_at")
    story = one(golden)
    # request: a convenience copy of the response ts; response: the authoritative target; epoch seconds
    assert [[t["id"], t.get("ts")] for t in story["turns"]] == golden.expected["turns_id_ts"]
    assert "started_at" not in story and "finished_at" not in story
    assert fields(story) == golden.expected["fields"]  # not a time: residual


def test_context_and_request_content_are_msg() -> None:
    golden = case("context_msg")
    story = one(golden)
    # content keeps its JSON type; a user message before the last one is context; the last one is the request
    assert [[t["id"], t["msg"], t.get("copied", False)] for t in story["turns"]] == golden.expected[
        "turns_id_msg_copied"
    ]


def test_tool_message_is_an_observation_result_of_the_response_turn() -> None:
    golden = case("tool_session")
    story = one(golden)
    # the tool role only selects the message: the result holds source_call_id and content alone
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]


def test_output_selected_from_response_else_last_valid_assistant_message() -> None:
    golden = case("output_from_messages")
    story = one(golden)
    assert [[t["id"], t["src"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_src_msg"]
    # an invalid /response is kept whole (RFC-0009); the empty assistant message after step 4's output is an
    # agent turn of its own (issue #12: a whole message is never residual)
    assert fields(story) == golden.expected["fields"]


def test_output_reasoning_content_is_reason() -> None:
    golden = case("reasoning")
    story = one(golden)
    assert turn(story, 2) == golden.expected["turn_2"]
    assert fields(story) == golden.expected["fields"]


def test_output_tool_calls_are_tool_calls() -> None:
    golden = case("output_calls")
    story = one(golden)
    assert turn(story, 2)["tool_calls"] == golden.expected["turn_2_tool_calls"]
    assert turn(story, 2)["kind"] == golden.expected["turn_2_kind"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("arguments"))
def test_arguments_parsed_when_valid_json_else_kept(member: str) -> None:
    golden = case(f"arguments/{member}")
    story = one(golden)
    assert turn(story, 2)["tool_calls"] == golden.expected["turn_2_tool_calls"]
    assert fields(story) == golden.expected["fields"]


# ------------------------------------------------------------------------------ env (authoritative)


@pytest.mark.parametrize("member", family("env"))
def test_env_source_is_task_env(member: str) -> None:
    golden = case(f"env/{member}")
    story = one(golden)
    assert story["task"] == golden.expected["task"]
    assert all("env" not in t for t in story["turns"])
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("turn_env"))
def test_id_event_type_request_id_only_on_the_response_turn_env(member: str) -> None:
    golden = case(f"turn_env/{member}")
    story = one(golden)
    assert turn(story, 3)["env"] == golden.expected["turn_3_env"]
    assert "task" not in story  # never promoted to /task/env
    assert "env" not in turn(story, 1) and "env" not in turn(story, 2)
    assert fields(story) == golden.expected["fields"]


def test_context_turns_write_no_env() -> None:
    golden = case("context_no_env")
    story = one(golden)
    assert [t["id"] for t in story["turns"] if "env" in t] == golden.expected["turn_ids_with_env"]
    assert turn(story, 5)["env"] == golden.expected["turn_5_env"]
    assert story["task"] == golden.expected["task"]
    assert fields(story) == golden.expected["fields"]


def test_session_stable_task_env_from_first_non_empty_value_later_unequal_as_turn_env_delta() -> None:
    golden = case("stable_env")
    story = one(golden)
    assert story["task"] == golden.expected["task"]
    # equal later values are consumed aliases; unequal values: the turn's env (state: shallow delta)
    assert [[t["id"], t.get("env")] for t in story["turns"] if t["src"] == "agent"] == golden.expected[
        "agent_turns_id_env"
    ]
    assert fields(story) == golden.expected["fields"]  # an empty value is not a session value


def test_env_values_storyline_cannot_hold_are_residual() -> None:
    golden = case("non_string_env")
    story = one(golden)
    assert "task" not in story and "env" not in turn(story, 2)
    assert fields(story) == golden.expected["fields"]
