"""Tool call ids (docs/formats/openai-msg.md, reading 3): missing, empty, reused and duplicate ids get
deterministic ids (the original kept as residual), results follow their own call, and unusable calls are
residual whole in their place."""

from __future__ import annotations

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, case, fields, one, rows_of, turn


def test_missing_or_empty_tool_call_ids_get_deterministic_ids() -> None:
    golden = case("missing_ids")
    story = one(golden)
    assert turn(story, 2)["tool_calls"] == golden.expected["turn_2_tool_calls"]
    assert one(golden) == story  # deterministic
    # The original, when present, is residual; an absent id is remembered by the export hints.
    assert fields(story) == golden.expected["fields"]


def test_reused_tool_call_id_is_renamed_and_results_follow_their_own_call() -> None:
    golden = case("reused_ids")
    story = one(golden)
    # step 2's result answers step 1's call_0, which kept its id; step 3's answers step 2's call, renamed:
    # the link follows the rename
    assert [
        [t["id"], t.get("tool_calls"), t.get("observation")] for t in story["turns"] if t["src"] == "agent"
    ] == golden.expected["agent_turns_id_tool_calls_observation"]
    assert fields(story) == golden.expected["fields"]


def test_duplicate_tool_call_id_within_one_message_is_renamed() -> None:
    golden = case("duplicate_in_message")
    story = one(golden)
    assert turn(story, 2)["tool_calls"] == golden.expected["turn_2_tool_calls"]
    assert fields(story) == golden.expected["fields"]


def test_unusable_tool_call_is_residual_whole_in_its_place() -> None:
    golden = case("unusable_call")
    story = one(golden)
    assert turn(story, 2)["tool_calls"] == golden.expected["turn_2_tool_calls"]
    assert fields(story) == golden.expected["fields"]


def test_message_whose_tool_calls_are_all_unusable() -> None:
    golden = case("all_calls_unusable")
    story = one(golden)
    assert story["turns"] == golden.expected["turns"]
    assert fields(story) == golden.expected["fields"]
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows_of(golden)  # the calls come back as an array, in place


def test_context_call_without_id_and_context_content_parts_string() -> None:
    golden = case("context_call_without_id")
    story = one(golden)
    # no arguments at all: args is null (RFC-0001 requires the key)
    assert story["turns"][:2] == golden.expected["first_two_turns"]
    assert fields(story) == golden.expected["fields"]
    rows_out, _ = parse_export(from_storyline(NAME, [story]))
    assert rows_out == rows_of(golden)
