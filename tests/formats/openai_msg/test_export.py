"""RFC-0009, "同源恢复按原 pointer 写回…" (export): same-source export gives the input back within the
fidelity boundary (the package samples and every golden input), and a document without openai-msg
residual is written as synthesized rows (``job_id``, ``agent_id``, ``agent_model``), foreign residual
riding in the version-1 ``_storyline`` envelope."""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path

import pytest

from pchronicle_datasets import compute_unknown_key_counts, from_storyline, into_storyline, validate
from tests import goldens
from tests.formats.openai_msg.boundary import assert_same_source, boundary, parse_export
from tests.formats.openai_msg.helpers import AREA, NAME, case, fields

SAMPLES = Path(__file__).resolve().parents[3] / "pchronicle_datasets" / "samples"
OPENAI_SAMPLES = sorted((SAMPLES / "openai_msg").glob("*.json*"))
STORYLINE_SAMPLES = sorted((SAMPLES / "storyline").glob("*.storyline.json"))
EXPORT = goldens.DATA / AREA / "export"


def hand_written() -> tuple[dict, list]:
    """The hand-written document of ``export/hand_written.storyline.json`` and the rows it must give."""
    doc = json.loads((EXPORT / "hand_written.storyline.json").read_text(encoding="utf-8"))
    rows = [json.loads(line) for line in (EXPORT / "hand_written.rows.jsonl").read_text(encoding="utf-8").splitlines()]
    return doc, rows


@pytest.mark.parametrize("path", OPENAI_SAMPLES, ids=lambda p: p.name)
def test_sample_captures_same_source_roundtrip(path: Path) -> None:
    data = path.read_text(encoding="utf-8")
    text = assert_same_source(data, doc=path.name)
    _, root = parse_export(text)
    assert bool(root) == (path.suffix == ".json")  # the envelope sample has root fields, JSON Lines none


@pytest.mark.parametrize("name", goldens.names(AREA))
def test_golden_inputs_same_source_roundtrip(name: str) -> None:
    assert_same_source(case(name).text)


def _args_as_values(rows: list) -> list:
    """Synthesized arguments may be written as a JSON string or as the value: compare the value."""
    rows = copy.deepcopy(rows)
    for r in rows:
        for m in [*(r.get("messages") or []), r.get("response")]:
            for c in (m or {}).get("tool_calls") or []:
                if isinstance(c["function"].get("arguments"), str):
                    c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    return rows


def test_synthesized_rows_for_a_document_without_openai_msg_residual() -> None:
    doc, rows = hand_written()
    assert doc["unknown_key_counts"] == compute_unknown_key_counts(doc["unknown_fields"])
    validate(doc)
    rows_out, root_out = parse_export(from_storyline(NAME, doc))
    assert root_out == {}
    assert _args_as_values(rows_out) == rows


def test_foreign_residual_rides_in_the_storyline_envelope_and_comes_back() -> None:
    doc, _ = hand_written()
    text = from_storyline(NAME, doc)
    [story] = into_storyline(NAME, text, document_id="export.jsonl")
    assert story["unknown_fields"]["sources"]["atif"] == doc["unknown_fields"]["sources"]["atif"]
    assert fields(story) == {}  # the envelope itself is not openai-msg residual
    assert story["unknown_key_counts"] == compute_unknown_key_counts(story["unknown_fields"])
    assert (story["session"], story["run"], story["agent"]) == (
        "hand-1",
        "run-9",
        {"id": "planner", "name": "planner", "model": "m-small"},
    )
    assert [(t["id"], t["src"], t["msg"]) for t in story["turns"]] == [
        (1, "system", "S"),
        (2, "user", "Q"),
        (3, "agent", "looking"),
        (5, "agent", "one file"),
    ]
    # Same-source export of that document writes the envelope back.
    again, _ = parse_export(from_storyline(NAME, story))
    assert boundary(again) == boundary(parse_export(text)[0])


@pytest.mark.parametrize("path", STORYLINE_SAMPLES, ids=lambda p: p.name)
def test_synthesized_rows_from_storyline_samples(path: Path) -> None:
    [doc] = into_storyline("storyline", path.read_text(encoding="utf-8"), document_id=path.name)
    rows_out, root_out = parse_export(from_storyline(NAME, doc))
    responses = [t for t in doc["turns"] if t["src"] == "agent" and not t.get("copied")]
    assert root_out == {} and len(rows_out) == len(responses)
    for step, (r, t) in enumerate(zip(rows_out, responses, strict=True), 1):
        assert (r["session_id"], r["step_id"], r["agent_id"]) == (doc["session"], step, doc["agent"]["id"])
        assert r.get("job_id") == doc.get("run")
        assert "run_id" not in r and "llm_model" not in r
        assert r.get("agent_model") == (t.get("model") or doc["agent"].get("model"))
        assert r["response"]["content"] == t["msg"]
    for earlier, later in itertools.pairwise(rows_out):
        n = len(earlier["messages"])
        assert later["messages"][: n + 1] == [*earlier["messages"], earlier["response"]]  # full history
    stories = into_storyline(NAME, from_storyline(NAME, doc), document_id="export.jsonl")
    assert [s["session"] for s in stories] == [doc["session"]]
