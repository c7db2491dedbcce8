"""Original forms (docs/formats/openai-msg.md, reading 5): content parts, arguments, ``meta_json`` and
``env_state`` written as JSON strings or as values are read as values and written back in their form."""

from __future__ import annotations

from pchronicle_datasets import from_storyline
from tests.formats.openai_msg.boundary import parse_export
from tests.formats.openai_msg.helpers import NAME, case, read, rows_of, turn


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
