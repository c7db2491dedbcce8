"""RFC-0009, "派生身份（不是字段拷贝）" (derived identities): turn ids by formula from ``step_id`` and the
context count, ``/run``, ``/agent`` and the response turn's ``/model``."""

from __future__ import annotations

import pytest

from tests.formats.openai_msg.helpers import case, family, fields, ids, one, turn


def test_turn_ids_context_then_request_and_response_formulas() -> None:
    golden = case("turn_ids")
    story = one(golden)
    # context_count = 2; request = 2 + 2*step - 1; response = 2 + 2*step; step 5 has no new user message.
    assert [[t["id"], t["src"], t["msg"]] for t in story["turns"]] == golden.expected["turns_id_src_msg"]


def test_context_count_is_the_number_of_admitted_context_turns() -> None:
    golden = case("admitted_context")
    story = one(golden)
    # two context turns: the system and the assistant message; the developer message is a context turn too, but
    # not one RFC-0009 admits: its id comes after the derived ones, so ids 3 and 4 stay the formulas'
    assert ids(story) == golden.expected["ids"]
    assert turn(story, 5) == golden.expected["turn_5"]
    assert turn(story, 4)["observation"] == golden.expected["turn_4_observation"]
    # the tool message without an id is a result of the agent turn it follows
    assert turn(story, 2)["observation"] == golden.expected["turn_2_observation"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("run"))
def test_run_is_the_first_non_empty_run_id_run_bucket_job_id(member: str) -> None:
    golden = case(f"run/{member}")
    story = one(golden)
    run = golden.expected["run"]
    assert story.get("run") == run
    assert ("run" in story) == (run is not None)
    assert fields(story) == golden.expected["fields"]


def test_run_key_priority_wins_over_row_order() -> None:
    golden = case("run_across_rows")
    story = one(golden)
    assert story["run"] == golden.expected["run"]
    assert fields(story) == golden.expected["fields"]


@pytest.mark.parametrize("member", family("agent"))
def test_agent_id_chain_name_and_model(member: str) -> None:
    golden = case(f"agent/{member}")
    story = one(golden)
    assert story["agent"] == golden.expected["agent"]
    assert turn(story, 2).get("model") == golden.expected["turn_2_model"]
    assert fields(story) == golden.expected["fields"]


def test_agent_identity_across_rows_and_turn_model_chain() -> None:
    golden = case("agent_across_rows")
    story = one(golden)
    assert story["agent"] == golden.expected["agent"]  # agent_model before llm_model
    # the row's llm_model when it has no agent_model; a row without a model has none
    assert [[t["id"], t.get("model")] for t in story["turns"] if t["src"] == "agent"] == golden.expected[
        "agent_turns_id_model"
    ]
    # An unselected llm_model equal to the row's model is consumed; a later different agent_id is residual.
    assert fields(story) == golden.expected["fields"]


def test_unselected_llm_model_consumed_only_when_equal_to_the_selected_model() -> None:
    golden = case("unselected_llm_model")
    story = one(golden)
    assert [t.get("model") for t in story["turns"] if t["src"] == "agent"] == golden.expected["agent_turns_model"]
    assert fields(story) == golden.expected["fields"]
