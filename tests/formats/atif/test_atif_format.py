"""The atif format: the mapping table row by row, the Harbor corpus, subagents, errors and detection."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import FormatError
from pchronicle_datasets.formats import atif, detect, from_storyline, into_storyline

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data" / "atif"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
HARBOR = sorted(DATA.glob("harbor_golden_*.trajectory.json"))
GOLDEN = DATA / "golden" / "every_row.atif.json"


def _base(**root):
    doc = {"schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1"}, "steps": []}
    doc.update(root)
    return doc


def _step(**fields):
    return {"step_id": 1, "source": "agent", "message": "m", **fields}


def _read(doc):
    return atif.decode(orjson.dumps(doc), "t.json")


# ------------------------------------------------------------------------------------ the mapping table

# (ATIF pointer, ATIF value, Storyline pointer) — one row of the authoritative table each.
ROWS = [
    ("/session_id", "run-1", "/session"),
    ("/trajectory_id", "traj-1", "/trajectory"),
    ("/schema_version", "ATIF-v1.6", "/origin/schema_version"),
    ("/agent/name", "harbor", "/agent/name"),
    ("/agent/version", "0.9", "/agent/ver"),
    ("/agent/model_name", "m", "/agent/model"),
    ("/agent/tool_definitions", [{"type": "function", "function": {"name": "f"}}], "/agent/tools"),
    ("/agent/extra", {"k": 1}, "/agent/extra"),
    ("/notes", "n", "/notes"),
    ("/final_metrics", {"total_steps": 1, "total_cost_usd": 2.5e-05}, "/final_metrics"),
    ("/continued_trajectory_ref", "next.json", "/continued_trajectory_ref"),
    ("/extra", {"k": "v"}, "/extra"),
    ("/steps/0/step_id", 7, "/turns/0/id"),
    ("/steps/0/source", "user", "/turns/0/src"),
    ("/steps/0/message", [{"type": "text", "text": "t"}], "/turns/0/msg"),
    ("/steps/0/timestamp", "2025-10-16T14:30:00.5+02:00", "/turns/0/ts"),
    ("/steps/0/model_name", "m2", "/turns/0/model"),
    ("/steps/0/reasoning_effort", 0.5, "/turns/0/effort"),
    ("/steps/0/reasoning_content", "why", "/turns/0/reason"),
    ("/steps/0/observation", {"results": [{"content": "out"}]}, "/turns/0/observation"),
    ("/steps/0/metrics", {"prompt_tokens": 1, "logprobs": [-0.5]}, "/turns/0/metrics"),
    ("/steps/0/extra", {"e": None}, "/turns/0/extra"),
    ("/steps/0/llm_call_count", 0, "/turns/0/nllm"),
    ("/steps/0/is_copied_context", False, "/turns/0/copied"),
    ("/steps/0/tool_calls/0/tool_call_id", "c9", "/turns/0/tool_calls/0/tcid"),
    ("/steps/0/tool_calls/0/function_name", "grep", "/turns/0/tool_calls/0/fn"),
    ("/steps/0/tool_calls/0/arguments", {"n": 42, "s": "42"}, "/turns/0/tool_calls/0/args"),
    ("/steps/0/tool_calls/0/extra", {"timeout": 1.0}, "/turns/0/tool_calls/0/extra"),
]


def _with(pointer, value):
    doc = _base(steps=[_step(tool_calls=[{"tool_call_id": "c", "function_name": "f", "arguments": {}}])])
    node = doc
    tokens = pointer[1:].split("/")
    for t in tokens[:-1]:
        node = node[int(t)] if isinstance(node, list) else node[t]
    node[tokens[-1]] = value
    return doc


@pytest.mark.parametrize(("src", "value", "dst"), ROWS, ids=[r[0] for r in ROWS])
def test_each_authoritative_row(src, value, dst):
    doc = _with(src, value)
    story = _read(doc)[0]
    assert pc.pointer.get(story, dst) == value
    assert type(pc.pointer.get(story, dst)) is type(value)
    assert "unknown_fields" not in story  # mapped, so not residual
    assert orjson.loads(atif.encode([story])) == doc  # and written back from there


def test_agent_id_is_derived_from_the_name():
    story = _read(_base(agent={"name": "terminus-2", "version": "1"}))[0]
    assert story["agent"] == {"id": "terminus-2", "name": "terminus-2", "ver": "1"}


def test_constants_and_file_identity():
    story = _read(_base())[0]
    assert story["schema_version"] == "storyline/v1"
    assert story["origin"] == {"format": "atif", "schema_version": "ATIF-v1.8", "document_id": "t.json"}


@pytest.mark.parametrize(
    ("src", "value"),
    [
        ("/vendor", {"x": 1}),
        ("/agent/vendor", 1),
        ("/steps/0/vendor", None),
        ("/steps/0/tool_calls/0/vendor", "v"),
        ("/steps/0/timestamp", "2025-10-16T14:30:00"),  # ISO 8601 without an offset: not a Storyline time
        ("/steps/0/model_name", None),  # null is not absent: kept as it is
        ("/steps/0/llm_call_count", "1"),  # the string "1" is not 1
        ("/notes", 3),
        ("/session_id", None),
    ],
)
def test_residual_rows_keep_the_value_under_its_pointer(src, value):
    doc = _with(src, value)
    story = _read(doc)[0]
    fields = story["unknown_fields"]["sources"]["atif"]["fields"]
    assert fields == {src: value} and type(fields[src]) is type(value)
    assert story["unknown_fields"]["sources"]["atif"]["source_document_id"] == "t.json"
    assert story["unknown_key_counts"] == pc.compute_unknown_key_counts(story["unknown_fields"])
    assert orjson.loads(atif.encode([story])) == doc


def test_golden_every_row():
    expected = [
        orjson.loads(line) for line in (DATA / "golden" / "every_row.storyline.jsonl").read_bytes().splitlines()
    ]
    assert atif.decode(GOLDEN.read_bytes(), "every_row.atif.json") == expected
    assert orjson.loads(atif.encode(expected)) == orjson.loads(GOLDEN.read_bytes())


# ----------------------------------------------------------------------------------------- Harbor corpus


@pytest.mark.parametrize("path", HARBOR, ids=[p.name for p in HARBOR])
def test_harbor_file_round_trips_and_matches_the_shipped_storyline(path):
    stories = into_storyline("atif", path.read_bytes(), document_id=path.name)
    assert len(stories) == 1
    shipped = json.loads((SAMPLES / "storyline" / path.name.replace(".trajectory.json", ".storyline.json")).read_text())
    assert stories == [shipped]  # scripts/atif_goldens_to_storyline.py gives the same documents
    assert orjson.loads(from_storyline("atif", stories)) == orjson.loads(path.read_bytes())
    assert detect(path.read_bytes()[:65536]).NAME == "atif"
    assert into_storyline("auto", path.read_bytes(), document_id=path.name) == stories


def test_storyline_samples_of_atif_are_written_back_as_the_harbor_files():
    stories = into_storyline("storyline", (SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl").read_bytes())
    back = [orjson.loads(line) for line in from_storyline("atif", stories).splitlines()]
    assert back == [orjson.loads(p.read_bytes()) for p in HARBOR]


# -------------------------------------------------------------------------------------------- subagents


def _parent_with_children():
    ref = [{"trajectory_id": "kid-1"}]
    return _base(
        steps=[
            _step(
                tool_calls=[{"tool_call_id": "spawn", "function_name": "delegate", "arguments": {}}],
                observation={"results": [{"source_call_id": "spawn", "subagent_trajectory_ref": ref}]},
            )
        ],
        subagent_trajectories=[
            {"trajectory_id": "kid-1", "agent": {"name": "k", "version": "1"}, "steps": [_step()]},
            {
                "trajectory_id": "kid-2",
                "session_id": "own",
                "agent": {"name": "k", "version": "1"},
                "steps": [_step()],
                "subagent_trajectories": [
                    {"trajectory_id": "grandkid", "agent": {"name": "g", "version": "1"}, "steps": []}
                ],
            },
        ],
    )


def test_subagents_become_linked_documents_and_embed_again():
    doc = _parent_with_children()
    stories = _read(doc)
    assert [(s["session"], s.get("trajectory")) for s in stories] == [
        ("s", None),
        ("s", "kid-1"),
        ("own", "kid-2"),
        ("own", "grandkid"),
    ]
    assert stories[0]["children"] == ["kid-1", "kid-2"]
    assert stories[1]["parent"] == {"psid": "s", "ptid": 1, "scid": "spawn"}
    assert stories[2]["parent"] == {"psid": "s"} and stories[2]["children"] == ["grandkid"]
    assert stories[3]["parent"] == {"psid": "own"}
    assert orjson.loads(atif.encode(stories)) == doc
    # in any order: the writer finds each child by its parent's session and trajectory id
    assert orjson.loads(atif.encode(stories[::-1])) == doc


def test_a_child_written_alone_keeps_its_link_in_the_envelope():
    stories = _read(_parent_with_children())
    alone = orjson.loads(atif.encode([stories[1]]))
    assert "subagent_trajectories" not in alone and alone["session_id"] == "s"
    back = atif.decode(orjson.dumps(alone), "t.json")[0]
    assert back["parent"] == stories[1]["parent"]


def test_parent_without_its_children_keeps_the_children_list():
    stories = _read(_parent_with_children())
    back = _read(orjson.loads(atif.encode([stories[0]])))
    assert back[0]["children"] == ["kid-1", "kid-2"]


# ----------------------------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("doc", "pointer", "words"),
    [
        (_base(schema_version="ATIF-v2.0"), "/schema_version", "ATIF 1.x"),
        ({k: v for k, v in _base().items() if k != "schema_version"}, "/schema_version", "ATIF 1.x"),
        (_base(agent={"version": "1"}), "/agent/name", "non-empty name"),
        (_base(agent="a"), "/agent", "agent object"),
        (_base(steps={}), "/steps", "array of ATIF steps"),
        (_base(steps=["x"]), "/steps/0", "ATIF step"),
        (_base(steps=[{"source": "user", "message": "m"}]), "/steps/0/step_id", "missing"),
        (_base(steps=[_step(step_id=True)]), "/steps/0/step_id", "integer"),
        (_base(steps=[_step(source="")]), "/steps/0/source", "non-empty"),
        (_base(steps=[_step(), _step()]), "/steps/1/step_id", "repeats"),
        (
            _base(steps=[_step(tool_calls=[{"tool_call_id": "c", "function_name": "f"}])]),
            "/steps/0/tool_calls/0/arguments",
            "missing",
        ),
        (
            _base(steps=[_step(tool_calls=[{"tool_call_id": "c", "function_name": "f", "arguments": {}}] * 2)]),
            "/steps/0/tool_calls/1/tool_call_id",
            "repeats",
        ),
        (
            _base(subagent_trajectories=[{"agent": {"name": "k"}, "steps": []}]),
            "/subagent_trajectories/0/trajectory_id",
            "needs",
        ),
        (
            _base(subagent_trajectories=[{"trajectory_id": "k", "agent": {"name": "k"}, "steps": 1}]),
            "/subagent_trajectories/0/steps",
            "array",
        ),
        ([1], "", "JSON object"),
    ],
)
def test_bad_input_names_file_and_pointer(doc, pointer, words):
    with pytest.raises(FormatError) as info:
        atif.decode(orjson.dumps(doc), "bad.json")
    err = info.value
    assert err.pointer == pointer and err.document_id == "bad.json" and words in str(err)


def test_json_lines_records_keep_good_lines_and_report_the_bad_one_with_its_line():
    text = orjson.dumps(_base()) + b"\n" + orjson.dumps(_base(agent={})) + b"\n" + orjson.dumps(_base(session_id="z"))
    records = list(atif.iter_records(text, "many.jsonl"))
    assert [r.story["session"] if r.story else None for r in records] == ["s", None, "z"]
    assert records[1].error.line == 2 and records[1].error.pointer == "/agent/name"


def test_input_is_not_modified():
    doc = _parent_with_children()
    doc["extra"] = {"_storyline": {"version": 1, "fields": {"/task": {"llm": {"k": 2}}}}}
    before = copy.deepcopy(doc)
    atif.read_trajectory(doc)
    assert doc == before


# -------------------------------------------------------------------------------------------- detection


def _corpus_files():
    corpora = ROOT.parent / "shared" / "corpora"  # present on the team's machines only; the samples always
    files = sorted(SAMPLES.glob("*/*.json*")) + sorted(DATA.glob("*.json"))
    return files + (sorted(p for p in corpora.rglob("*.json*")) if corpora.is_dir() else [])


def test_detection_tells_atif_from_every_other_format():
    for path in _corpus_files():
        head = path.read_bytes()[:65536]
        is_atif = path.name.endswith(".trajectory.json")
        try:
            name = detect(head).NAME
        except FormatError:
            name = None
        assert (name == "atif") == is_atif, path.name


def test_a_pretty_printed_trajectory_beyond_64_kib_is_detected_from_its_structure():
    big = orjson.dumps(
        _base(steps=[_step(step_id=i + 1, message="x" * 1000) for i in range(100)]), option=orjson.OPT_INDENT_2
    )
    assert len(big) > 65536
    assert detect(big).NAME == "atif"
    story = _read(_base())[0]  # a Storyline document naming ATIF in its origin is still Storyline
    big_story = orjson.dumps({**story, "notes": "y" * 70000}, option=orjson.OPT_INDENT_2)
    assert detect(big_story).NAME == "storyline"
