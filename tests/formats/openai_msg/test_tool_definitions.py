"""The project's reading, "Tool definitions" (``docs/formats/openai-msg.md``): a row's ``tools`` array is
session-stable like ``/task/env`` — the first non-empty one in step order is ``/agent/tools``, later equal
values are consumed aliases, a different value stays residual on its row (and ``inspect`` counts it); the
same-source writer puts every value back, and the synthesized writer writes ``/agent/tools`` on every row."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from tests.formats.openai_msg.boundary import assert_same_source, parse_export
from tests.formats.openai_msg.helpers import NAME, case, fields, one, refused

SAMPLES = Path(__file__).resolve().parents[3] / "pchronicle_datasets" / "samples"
CASES = [
    "tools_first_nonempty",
    "tools_equal_aliases",
    "tools_changed",
    "tools_step_order",
    "tools_json_string",
    "tools_typed",
    "tools_not_arrays",
]


def strict(value: object) -> bytes:
    """Type-strict comparison form (``1.0`` is not ``1``), key order aside."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def consuming(story: dict) -> list[int]:
    """The rows (``r``) whose ``tools`` the export hints mark as consumed."""
    return [h["r"] for h in story["meta"][NAME]["rows"] if "tools" in h["keys"]]


def check(name: str) -> dict:
    golden = case(name)
    story = one(golden)
    assert strict(story["agent"]) == strict(golden.expected["agent"])
    assert strict(fields(story)) == strict(golden.expected["fields"])
    assert consuming(story) == golden.expected["rows_consuming_tools"]
    return story


def test_the_first_non_empty_array_in_step_order_is_agent_tools() -> None:
    check("tools_first_nonempty")  # absent, [] and null before it: the empty values stay on their rows
    check("tools_step_order")  # step 1 is the file's second line: step order decides, not file order


def test_later_equal_values_are_consumed_aliases() -> None:
    check("tools_equal_aliases")  # the third row spells the same tool with its keys in another order


def test_a_later_different_value_stays_residual_on_its_row() -> None:
    check("tools_changed")


def test_equal_means_equal_as_json_with_types_told_apart() -> None:
    check("tools_typed")  # "default": 10.0 is not "default": 10


def test_a_json_string_holding_the_array_is_decoded_and_its_spelling_noted() -> None:
    story = check("tools_json_string")
    assert story["meta"][NAME]["rows"][0]["forms"] == case("tools_json_string").expected["row_0_forms"]
    [first, second] = parse_export(pc.from_storyline(NAME, story))[0]
    assert isinstance(first["tools"], str) and json.loads(first["tools"]) == second["tools"]


def test_values_that_are_not_tool_arrays_stay_residual() -> None:
    check("tools_not_arrays")  # an object, "auto", a string that is not JSON, a number, {} and ""


@pytest.mark.parametrize("name", CASES)
def test_the_same_source_writer_puts_every_value_back(name: str) -> None:
    text = assert_same_source(case(name).text)
    written = {r["step_id"]: r.get("tools", "absent") for r in parse_export(text)[0]}
    source = {r["step_id"]: r.get("tools", "absent") for r in map(json.loads, case(name).text.splitlines())}
    assert written.keys() == source.keys()
    for step, value in source.items():  # the JSON-string case is compared decoded (its whitespace is free)
        got = written[step]
        if isinstance(value, str) and case(name).expected.get("row_0_forms"):
            value, got = json.loads(value), json.loads(got)
        assert strict(got) == strict(value), step


def test_synthesized_rows_carry_agent_tools_and_read_back_to_them() -> None:
    path = SAMPLES / "storyline" / "harbor_golden_openhands_hello-world.storyline.json"
    [doc] = pc.into_storyline("storyline", path.read_text(encoding="utf-8"), document_id=path.name)
    assert doc["agent"]["tools"]
    rows, _ = parse_export(pc.from_storyline(NAME, doc))
    assert rows and all(strict(r["tools"]) == strict(doc["agent"]["tools"]) for r in rows)
    [back] = pc.into_storyline(NAME, pc.from_storyline(NAME, doc), document_id="export.jsonl")
    assert strict(back["agent"]["tools"]) == strict(doc["agent"]["tools"])
    assert not any(p.endswith("/tools") for p in fields(back))
    # A document without tools gives rows without a tools key.
    bare = {**doc, "agent": {k: v for k, v in doc["agent"].items() if k != "tools"}}
    assert all("tools" not in r for r in parse_export(pc.from_storyline(NAME, bare))[0])


def test_training_outputs_describe_the_tools_the_session_offered() -> None:
    story = one(case("tools_changed"))
    assert [t["function"]["name"] for t in pc.to_messages(story, arguments="object")["tools"]] == ["ls"]
    system = pc.to_sharegpt(story)["conversations"][0]["value"]
    assert '"name": "ls"' in system and "<tools>\n[]\n</tools>" not in system


def test_inspect_reports_the_values_kept_on_rows(capsys: pytest.CaptureFixture[str]) -> None:
    path = case("tools_changed").input_path
    assert main(["inspect", "--json", str(path)]) == 0
    assert json.loads(capsys.readouterr().out)["residual_tools"] == 1
    assert main(["inspect", str(path)]) == 0
    assert "tool definitions kept as residual (not in /agent/tools): 1" in capsys.readouterr().out
    assert main(["inspect", "--json", str(case("tools_equal_aliases").input_path)]) == 0
    assert json.loads(capsys.readouterr().out)["residual_tools"] == 0


def test_tools_nested_deeper_than_json_writers_go_are_refused_with_a_pointer() -> None:
    first, second = case("tools_equal_aliases").text.splitlines()[:2]
    deep = "[" * 300 + "]" * 300  # JSON that parses, but deeper than orjson (and Storyline) writes
    second = json.dumps({**json.loads(second), "tools": "DEEP"}).replace('"DEEP"', deep)
    err = refused(f"{first}\n{second}\n")
    assert "nested deeper" in str(err) and err.line == 1, str(err)
