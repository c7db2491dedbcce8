"""What the openai-msg writer cannot hold of a document from another format is counted in the loss report
(``docs/formats/openai-msg.md``, "What no row can hold"; ``formats/openai_msg/unwritten.py``), never dropped
silently.

``tests/data/openai_msg/unwritten/<case>.storyline.json`` is a small document of one kind of loss and
``<case>.losses.json`` the loss report it must give (kind → count and first pointer). Beyond the cases, every
shipped sample and golden file of every other format is written, read back and compared leaf by leaf: each
value of the document is read back (in a field or as residual) or lies under a pointer the report counts.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import detect
from pchronicle_datasets.formats.openai_msg.unwritten import is_output, unwritten
from pchronicle_datasets.linking import observation_results
from pchronicle_datasets.pointer import join
from tests.strategies import storylines

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
CASES = DATA / "openai_msg" / "unwritten"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
# Derived again by the reader (origin, schema version, key counts) or renamed and counted (session_renamed).
DERIVED = re.compile(r"/(schema_version|origin|unknown_key_counts|session)(/|$)")


def load(path: Path) -> Any:
    return orjson.loads(path.read_bytes())


def write(story: dict) -> tuple[str, pc.LossReport]:
    with pc.collect_losses() as report:
        text = pc.from_storyline("openai-msg", [story])
    return text, report


def leaves(value: Any, pointer: str = "") -> list[tuple[str, Any]]:
    """``(pointer, value)`` of every scalar and empty container."""
    if isinstance(value, dict) and value:
        return [leaf for k, v in value.items() for leaf in leaves(v, join(pointer, k))]
    if isinstance(value, list) and value:
        return [leaf for i, v in enumerate(value) for leaf in leaves(v, f"{pointer}/{i}")]
    return [(pointer, value)]


def after_last_output(story: dict) -> list[str]:
    """What the synthesized writer counts itself as ``turns_after_last_output``: the turns after the last output
    and the results of the last output's own calls."""
    outputs = [t for t, turn in enumerate(story["turns"]) if is_output(turn)]
    if not outputs:
        return [""]  # no row at all: the whole document is a no_agent_turn loss
    last = outputs[-1]
    own = {c["tcid"] for c in story["turns"][last].get("tool_calls") or ()}
    out = [f"/turns/{t}" for t in range(last + 1, len(story["turns"]))]
    for o, res in enumerate(observation_results(story["turns"][last])):
        sid = res.get("source_call_id") if isinstance(res, dict) else None
        if isinstance(sid, str) and sid in own:
            out.append(f"/turns/{last}/observation/results/{o}")
    return out


def not_read_back(story: dict) -> list[str]:
    """The pointers of the leaves of ``story`` that neither come back from its rows nor are counted."""
    text, _ = write(story)
    back = pc.into_storyline("openai-msg", text, document_id="x.jsonl") if text else []
    found = set()
    stack = list(back)
    while stack:  # the read-back leaves, and those of JSON strings in them (residual keeps arguments as text)
        for _, v in leaves(stack.pop()):
            found.add(orjson.dumps(v))
            if _json_string(v):
                stack.append(orjson.loads(v))
    counted = [p for _, p in unwritten(story)] + after_last_output(story)
    missing = []
    for pointer, value in leaves(story):
        if DERIVED.match(pointer) or any(pointer == c or pointer.startswith(c + "/") for c in counted):
            continue
        if pointer.startswith("/unknown_fields") and value in ({}, []):
            continue  # residual's empty structure (no source holds a field) is not a value
        if orjson.dumps(value) not in found:
            missing.append(pointer)
    return missing


def _json_string(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        orjson.loads(value)
    except orjson.JSONDecodeError:
        return False
    return True


# -------------------------------------------------------------------------------------- the cases by kind

CASE_NAMES = sorted(p.name.split(".")[0] for p in CASES.glob("*.storyline.json"))


def test_the_cases_are_there():
    assert len(CASE_NAMES) >= 8 and {p.name.split(".")[0] for p in CASES.glob("*.losses.json")} == set(CASE_NAMES)


@pytest.mark.parametrize("name", CASE_NAMES)
def test_each_case_gives_its_loss_report(name):
    story = load(CASES / f"{name}.storyline.json")
    _, report = write(story)
    got = {k: {"count": n, "first": report.first[k]} for k, n in report.counts.items()}
    assert got == load(CASES / f"{name}.losses.json")
    assert not_read_back(story) == []


def test_a_document_the_rows_hold_whole_reports_no_loss():
    """Turn ids as the reader numbers them (context, then request and response of each row: a row with no new
    user message has no request turn, so 4 is skipped), final metrics equal to the last row's."""
    story = load(CASES / "held_whole.storyline.json")
    assert load(CASES / "held_whole.losses.json") == {}
    [back] = pc.into_storyline("openai-msg", write(story)[0], document_id="x")
    assert [t["id"] for t in back["turns"]] == [t["id"] for t in story["turns"]] == [1, 2, 3, 5, 6, 7]
    for turn, got in zip(story["turns"], back["turns"], strict=True):
        assert {k: got[k] for k in turn} == turn
    assert (back["agent"], back["final_metrics"]) == (story["agent"], story["final_metrics"])
    assert back["unknown_fields"]["sources"]["atif"] == story["unknown_fields"]["sources"]["atif"]


def test_a_file_reports_each_kind_once_with_the_count_of_every_document(caplog):
    story = load(CASES / "turn_fields.storyline.json")
    with caplog.at_level("WARNING", logger="pchronicle_datasets.losses"):
        pc.from_storyline("openai-msg", [story, {**story, "session": "other"}])
    lines = [r.getMessage() for r in caplog.records if "/turns/*/extra" in r.getMessage()]
    assert lines == [
        "lossy write: not in openai-msg: /turns/*/extra (2 values) at /turns/1/extra (first in session 's')"
    ]


def test_the_cli_prints_the_report(tmp_path, capsys):
    out = tmp_path / "rows.jsonl"
    assert main(["convert", str(CASES / "turn_fields.storyline.json"), "--to", "openai-msg", "-o", str(out)]) == 0
    err = capsys.readouterr().err
    assert "not in openai-msg: /turns/*/extra 1 (first at /turns/1/extra)" in err
    assert "  not in openai-msg: /turns/*/extra: a Storyline value no openai-msg row has a place for" in err


# --------------------------------------------------------------------------- every file of another format


def other_format_files() -> list[Path]:
    files = [*SAMPLES.rglob("*.json*"), *DATA.rglob("*.json*")]
    return sorted(p for p in files if p.is_file() and not p.name.endswith((".expected.json", ".losses.json")))


def documents_of_other_formats() -> list[tuple[str, list[dict]]]:
    out = []
    for path in other_format_files():
        data = path.read_bytes()
        try:
            fmt = detect(data, path.name).NAME
        except pc.PchronicleError:
            continue  # files made to be refused (tests/data/validation, hostile inputs)
        if fmt == "openai-msg":
            continue
        try:
            out.append((str(path.relative_to(ROOT)), pc.into_storyline(fmt, data, document_id=path.name)))
        except pc.PchronicleError:
            continue
    return out


OTHERS = documents_of_other_formats()


def test_the_files_cover_every_other_format():
    formats = {detect((ROOT / name).read_bytes(), name).NAME for name, _ in OTHERS}
    from pchronicle_datasets.formats import formats as registered

    # every other registered format (swe-agent keeps its own .traj extension: tests/formats/research covers it)
    assert formats == {f.NAME for f in registered()} - {"openai-msg", "swe-agent"}
    assert sum(len(stories) for _, stories in OTHERS) > 400


@pytest.mark.parametrize(("name", "stories"), OTHERS, ids=[name for name, _ in OTHERS])
def test_everything_the_writer_drops_is_counted(name, stories):
    for story in stories:
        assert not_read_back(story) == [], story["session"]


def test_a_same_source_round_trip_reports_no_loss():
    files = [*SAMPLES.glob("openai_msg/*"), *(DATA / "openai_msg").rglob("*.input.*")]
    assert len(files) > 100
    with pc.collect_losses() as report:
        for path in files:
            stories = pc.into_storyline("openai-msg", path.read_bytes(), document_id=path.name)
            pc.from_storyline("openai-msg", stories)
    assert not report, report.summary()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(storylines())
def test_every_value_comes_back_or_is_counted(story):
    assert not_read_back(story) == []
