"""RFC-0009: without structured tool calls, supported ``<tool_call>`` / ``<function=...>`` markers in the
output content derive ``/tool_calls``; content still maps only to ``/msg`` and is written back as is."""

from __future__ import annotations

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, case, one, read, rows_of


def test_content_markers_derive_tool_calls_without_structured_calls() -> None:
    golden = case("markers")
    story = one(golden)
    agents = [t for t in story["turns"] if t["src"] == "agent"]
    # the last row has structured calls: its markers derive nothing
    assert [t.get("tool_calls") for t in agents] == golden.expected["agent_turns_tool_calls"]
    assert all(t["kind"] == "autonomous" for t in agents)
    # content still maps only to /msg
    assert agents[0]["msg"] == golden.expected["first_agent_turn_msg"]


def test_marker_derived_calls_are_not_exported_as_structured_calls() -> None:
    golden = case("markers")
    rows_out, _ = parse_export(from_storyline(NAME, read(golden)))
    assert [("tool_calls" in r["response"]) for r in rows_out] == golden.expected["exported_responses_have_tool_calls"]
    assert [r["response"]["content"] for r in rows_out] == [r["response"]["content"] for r in rows_of(golden)]
