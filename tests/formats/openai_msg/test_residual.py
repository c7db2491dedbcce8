"""RFC-0009, "残差" (residual): what is consumed (redundant aliases, ``type: "function"``, string/null
reasoning, null and empty values, a refusal used as ``/msg``) and what goes to
``/unknown_fields/sources/openai-msg/fields/{E(P)}`` under its whole source pointer (the residual table)."""

from __future__ import annotations

import pytest

from pchronicle_datasets import from_storyline
from pchronicle_datasets.pointer import get as pointer_get
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, case, family, fields, ids, one, read, rows_of, turn


def test_residual_key_is_the_whole_source_pointer() -> None:
    golden = case("vendor_row")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]
    # E(P): the key escaped once more inside a Storyline pointer (the RFC's example).
    assert (
        pointer_get(story, "/unknown_fields/sources/openai-msg/fields/~1session_steps~10~1vendor_row")
        == golden.expected["escaped_pointer_value"]
    )
    assert story["unknown_key_counts"] == golden.expected["unknown_key_counts"]


# ============================================================================== consumption rules


def test_redundant_aliases_consumed_only_when_equal() -> None:
    golden = case("aliases")
    story = one(golden)
    assert story["session"] == golden.expected["session"]
    assert ids(story) == golden.expected["ids"]  # llm_step_index never changes a turn id
    assert [t.get("model") for t in story["turns"] if t["src"] == "agent"] == golden.expected["agent_turns_model"]
    # a bool is not the step_id; a requested_model is residual when the row has no model
    assert fields(story) == golden.expected["fields"]


def test_meta_json_and_env_state_as_objects_or_json_strings() -> None:
    golden = case("meta_strings")
    story = one(golden)
    assert story["agent"] == golden.expected["agent"]
    assert story["task"] == golden.expected["task"]
    assert turn(story, 2)["metrics"] == golden.expected["turn_2_metrics"]
    assert turn(story, 4)["metrics"] == golden.expected["turn_4_metrics"]
    # Residual of a decoded string sits at its logical path.
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("undecodable_meta"))
def test_undecodable_meta_json_is_residual_whole(member: str) -> None:
    golden = case(f"undecodable_meta/{member}")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]
    assert "metrics" not in turn(story, 2)


def test_undecodable_env_state_is_residual_whole() -> None:
    golden = case("undecodable_env_state")
    story = one(golden)
    assert story["task"] == golden.expected["task"]
    assert fields(story) == golden.expected["fields"]


def test_type_function_consumed_other_types_residual() -> None:
    golden = case("call_types")
    story = one(golden)
    assert [c["tcid"] for c in turn(story, 2)["tool_calls"]] == golden.expected["turn_2_tcids"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("reasoning_value"))
def test_only_string_or_null_reasoning_content_is_consumed(member: str) -> None:
    golden = case(f"reasoning_value/{member}")
    reason = golden.expected["turn_2_reason"]
    story = one(golden)
    assert turn(story, 2).get("reason") == reason
    assert ("reason" in turn(story, 2)) == (reason is not None)
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("empty_msg"))
def test_null_and_empty_message_keys_count_as_missing(member: str) -> None:
    golden = case(f"empty_msg/{member}")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_msg"]
    assert "tool_calls" not in turn(story, 3)
    assert fields(story) == golden.expected["fields"]


def test_non_empty_message_keys_are_residual() -> None:
    golden = case("nonempty_msg_keys")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]  # content is valid: refusal is residual
    assert turn(story, 3)["msg"] == golden.expected["turn_3_msg"]


@pytest.mark.parametrize("member", family("empty_row"))
def test_null_and_empty_row_keys_count_as_missing(member: str) -> None:
    golden = case(f"empty_row/{member}")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]


def test_non_empty_row_keys_are_residual() -> None:
    golden = case("nonempty_row_keys")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]


def test_refusal_is_the_fallback_msg_when_content_has_no_value() -> None:
    golden = case("refusals")
    story = one(golden)
    assert [[t["id"], t["msg"]] for t in story["turns"] if t["src"] == "agent"] == golden.expected["agent_turns_id_msg"]
    assert all(t["kind"] == "llm.response" for t in story["turns"] if t["src"] == "agent")
    assert fields(story) == golden.expected["fields"]


def test_refusal_fallback_is_written_back_as_refusal() -> None:
    golden = case("refusals")
    rows_out, _ = parse_export(from_storyline(NAME, read(golden)))
    assert [r["response"] for r in rows_out] == [r["response"] for r in rows_of(golden)]


# ======================================================================== the residual table


def test_residual_pointers_of_the_residual_table() -> None:
    golden = case("residual_table")
    story = one(golden)
    assert fields(story) == golden.expected["fields"]
    assert [[t["id"], t.get("tool_calls")] for t in story["turns"]] == golden.expected["turns_id_tool_calls"]
    assert turn(story, 4)["observation"] == golden.expected["turn_4_observation"]
