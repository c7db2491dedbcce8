"""The dataset schema keeps every Storyline document exact: in memory, in Arrow, in Parquet, through
``datasets`` (``load_dataset``, streaming, ``Dataset``, ``Dataset.map``), and its derived columns follow the
reference batch runner's tool statistics."""

from __future__ import annotations

import copy
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import datasets
import orjson
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pchronicle_datasets.errors import StorylineError
from pchronicle_datasets.features import (
    STORYLINE_FEATURES,
    compute_tool_stats,
    derived_columns,
    row_to_story,
    rows_to_table,
    story_to_row,
)
from pchronicle_datasets.schema import iter_errors, validate
from tests.strategies import ACTF_RESULT_KEYS, AWKWARD_FLOATS, AWKWARD_INTS, AWKWARD_STRINGS, storylines

DERIVED = ("num_turns", "num_tool_calls", "num_copied_turns", "has_reasoning", "tool_stats")
SLOW = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
# One Parquet file per example holding a batch of documents (Hypothesis caps how much one example may draw,
# so a batch is ~5-12 documents of up to 3 turns; 5 examples make 25-60 documents per test).
batches = st.lists(storylines(max_turns=3), min_size=5, max_size=12)
batch_settings = settings(
    max_examples=5, deadline=None, suppress_health_check=[*SLOW, HealthCheck.function_scoped_fixture]
)


@pytest.fixture(scope="module", autouse=True)
def _offline():
    """``datasets`` reads only local files here: make sure it never tries the Hub."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        mp.setenv("HF_HUB_OFFLINE", "1")
        for name in ("HF_DATASETS_OFFLINE", "HF_HUB_OFFLINE"):
            if hasattr(datasets.config, name):
                mp.setattr(datasets.config, name, True)
        yield


# ------------------------------------------------------------------------------------ strict equality


def first_difference(actual: Any, expected: Any, path: str = "") -> str | None:
    """Where ``actual`` and ``expected`` differ as JSON values, types included, else None.

    Unlike ``==``: ``1``, ``1.0`` and ``True`` differ, ``-0.0`` and ``0.0`` differ, and floats are compared by
    their shortest repr (every digit). Object key order does not matter (JSON objects are unordered).
    """
    where = path or "(root)"
    if type(actual) is not type(expected):
        return f"{where}: {type(actual).__name__} {actual!r} != {type(expected).__name__} {expected!r}"
    if type(expected) is dict:
        if set(actual) != set(expected):
            return f"{where}: keys {sorted(actual, key=repr)} != {sorted(expected, key=repr)}"
        for key in expected:
            diff = first_difference(actual[key], expected[key], f"{path}/{key}")
            if diff:
                return diff
        return None
    if type(expected) is list:
        if len(actual) != len(expected):
            return f"{where}: {len(actual)} items != {len(expected)} items"
        for i, (a, e) in enumerate(zip(actual, expected, strict=True)):
            diff = first_difference(a, e, f"{path}/{i}")
            if diff:
                return diff
        return None
    if type(expected) is float:
        return None if repr(actual) == repr(expected) else f"{where}: {actual!r} != {expected!r}"
    return None if actual == expected else f"{where}: {actual!r} != {expected!r}"


def canonical(value: Any) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def assert_same(actual: Any, expected: Any) -> None:
    diff = first_difference(actual, expected)
    assert diff is None, diff
    assert canonical(actual) == canonical(expected)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        (1, 1.0),
        (1, True),
        (0, False),
        (-0.0, 0.0),
        ("42", 42),
        (None, "null"),
        ({"a": [1]}, {"a": [1.0]}),
        ([{}], [[]]),
        ({"a": 1}, {"a": 1, "b": None}),
        (0.30000000000000004, 0.3),
    ],
)
def test_strict_equality_tells_types_apart(a, b):
    assert first_difference(a, b) is not None
    assert first_difference(b, a) is not None
    assert canonical(a) != canonical(b)


def test_strict_equality_accepts_equal_values_in_any_key_order():
    a = {"x": [1, 2.5, "s", None, True, {"k": -0.0}], "y": 2**64 - 1}
    b = {"y": 2**64 - 1, "x": [1, 2.5, "s", None, True, {"k": -0.0}]}
    assert first_difference(a, b) is None
    assert canonical(a) == canonical(b)


# ------------------------------------------------------------------------------------------ the strategy


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW)
@given(storylines())
def test_strategy_generates_valid_documents(story):
    assert list(iter_errors(story)) == []
    validate(story)


def _paths(value: Any, path: str, out: set[str]) -> None:
    if type(value) is dict:
        for key, item in value.items():
            child = f"{path}/{key}"
            out.add(child)
            _paths(item, child, out)
    elif type(value) is list:
        for item in value:
            _paths(item, f"{path}/*", out)


def _nodes(value: Any, out: list) -> None:
    """Every value in ``value``, containers and scalars, depth first."""
    out.append(value)
    if type(value) is dict:
        for item in value.values():
            _nodes(item, out)
    elif type(value) is list:
        for item in value:
            _nodes(item, out)


def _is_empty_container(value: Any) -> bool:
    return type(value) in (dict, list) and not value


def _feature_paths(feature: Any, path: str, out: set[str]) -> None:
    if isinstance(feature, dict):
        for name, sub in feature.items():
            out.add(f"{path}/{name}")
            _feature_paths(sub, f"{path}/{name}", out)
    elif isinstance(feature, datasets.List):
        _feature_paths(feature.feature, f"{path}/*", out)


def test_strategy_covers_every_field_and_awkward_value():
    expected: set[str] = set()
    for name, feature in STORYLINE_FEATURES.items():
        if name not in DERIVED:
            expected.add(f"/{name}")
            _feature_paths(feature, f"/{name}", expected)
    # The fields the schema keeps as JSON text: task parts and turn env.
    for key in ("name", "endpoint", "id", "event_type", "request_id", "state"):
        expected |= {f"/task/env/{key}", f"/turns/*/env/{key}"}
    expected |= {f"/task/result/{k}" for k in ("correct", "final_answer", "ground_truth", "status", "score")}
    expected |= {f"/task/result/{k}" for k in ("max_score", "error", "artifacts")}
    expected |= {"/task/llm/k", "/turns/*/observation/results/*/source_call_id"}
    expected |= {"/unknown_fields/sources/openai-msg/source_document_id", "/unknown_fields/sources/openai-msg/fields"}

    seen: set[str] = set()
    nodes: list = []
    stats = {"absent_spellings": set(), "time_types": set(), "copied_prompt": 0, "all_empty_turn_prompt": 0}

    @settings(max_examples=300, database=None, derandomize=True, deadline=None, suppress_health_check=SLOW)
    @given(storylines())
    def collect(story):
        _paths(story, "", seen)
        _nodes(story, nodes)
        task = story.get("task") or {}
        for part in task.values():
            stats["absent_spellings"].add(repr(part) if part in (None, "", {}) else "present")
        for turn in story["turns"]:
            if "ts" in turn:
                stats["time_types"].add(type(turn["ts"]).__name__)
            if turn.get("copied") is True and "prompt" in turn:
                stats["copied_prompt"] += 1
            if turn.get("prompt") == {"system": "", "user": ""}:
                stats["all_empty_turn_prompt"] += 1

    collect()
    assert expected - seen == set()
    assert any(p.startswith("/task/result/") and p[13:] in ACTF_RESULT_KEYS for p in seen)  # flattened extra
    assert stats["absent_spellings"] == {"None", "''", "{}", "present"}
    assert stats["time_types"] == {"str", "int", "float"}
    assert stats["copied_prompt"] == 0
    assert stats["all_empty_turn_prompt"] > 0
    found = {canonical(v) for v in nodes if type(v) not in (dict, list)}
    for value in (*AWKWARD_FLOATS, *AWKWARD_INTS, *AWKWARD_STRINGS, None):
        assert canonical(value) in found, value
    assert any(v == {} for v in nodes) and any(v == [] for v in nodes)
    assert any(type(v) is list and v and all(map(_is_empty_container, v)) for v in nodes)  # e.g. [{}, []]
    assert any(type(v) is dict and v and all(map(_is_empty_container, v.values())) for v in nodes)  # {"k": {}}


# --------------------------------------------------------------------------------------------- pipelines


def _parquet(stories: list[dict], directory: Path) -> str:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "storylines.parquet"
    pq.write_table(rows_to_table([story_to_row(s) for s in stories]), path)
    return str(path)


def _load(path: str, directory: Path, *, streaming: bool = False):
    return datasets.load_dataset(
        "parquet", data_files=path, split="train", cache_dir=str(directory / "cache"), streaming=streaming
    )


PIPELINES = (
    "memory",
    "arrow",
    "parquet",
    "load_dataset",
    "streaming",
    "dataset",
    "dataset_map",
    "dataset_map_batched",
    "dataset_map_reencode",
)


def rows_through(pipeline: str, stories: list[dict], directory: Path) -> list[dict]:
    """The rows of ``stories`` after one trip through ``pipeline``."""
    rows = [story_to_row(s) for s in stories]
    if pipeline == "memory":
        return rows
    if pipeline == "arrow":
        return rows_to_table(rows).to_pylist()
    if pipeline == "parquet":
        return pq.read_table(_parquet(stories, directory)).to_pylist()
    if pipeline == "load_dataset":
        ds = _load(_parquet(stories, directory), directory)
        assert ds.features == STORYLINE_FEATURES
        return list(ds)
    if pipeline == "streaming":
        return list(_load(_parquet(stories, directory), directory, streaming=True))
    ds = datasets.Dataset(rows_to_table(rows))
    assert ds.features == STORYLINE_FEATURES
    if pipeline == "dataset_map":
        ds = ds.map(lambda row: row, load_from_cache_file=False)
    elif pipeline == "dataset_map_batched":
        ds = ds.map(lambda batch: batch, batched=True, batch_size=3, load_from_cache_file=False)
    elif pipeline == "dataset_map_reencode":
        ds = ds.map(
            lambda row: story_to_row(row_to_story(row)), features=STORYLINE_FEATURES, load_from_cache_file=False
        )
    assert ds.features == STORYLINE_FEATURES
    return [ds[i] for i in range(len(ds))]


def assert_rows_keep(rows: list[dict], stories: list[dict]) -> None:
    assert len(rows) == len(stories)
    for i, (row, story) in enumerate(zip(rows, stories, strict=True)):
        diff = first_difference(row_to_story(row), story)
        assert diff is None, f"document {i}: {diff}"
        assert canonical(row_to_story(row)) == canonical(story)
        assert {k: row[k] for k in DERIVED} == derived_columns(story), f"document {i}: derived columns"


# ----------------------------------------------------------------------------------------- round trips


@settings(max_examples=60, deadline=None, suppress_health_check=SLOW)
@given(storylines())
def test_round_trip_in_memory(story):
    before = copy.deepcopy(story)
    row = story_to_row(story)
    assert_same(story, before)  # story_to_row does not change the document
    assert_same(row_to_story(row), story)
    assert row == story_to_row(story, check=False)
    assert {k: row[k] for k in DERIVED} == derived_columns(story)
    assert_same(row_to_story(rows_to_table([row]).to_pylist()[0]), story)


@given(batches)
@batch_settings
def test_rows_to_table_is_the_table_from_pylist_builds(stories):
    """``rows_to_table`` builds its columns from one struct array (faster): the same table, schema metadata (the
    ``datasets`` features) included, as ``Table.from_pylist`` with the schema, for one row, many and none."""
    import pyarrow as pa

    rows = [story_to_row(s) for s in stories]
    schema = STORYLINE_FEATURES.arrow_schema
    for part in (rows, rows[:1], []):
        assert rows_to_table(part).equals(pa.Table.from_pylist(part, schema=schema), check_metadata=True)


@batch_settings
@given(batches)
def test_round_trip_parquet(tmp_path, stories):
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    path = _parquet(stories, directory)
    assert_rows_keep(pq.read_table(path).to_pylist(), stories)
    ds = _load(path, directory)
    assert ds.features == STORYLINE_FEATURES
    assert_rows_keep(list(ds), stories)


@batch_settings
@given(batches)
def test_round_trip_streaming(tmp_path, stories):
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    ds = _load(_parquet(stories, directory), directory, streaming=True)
    assert isinstance(ds, datasets.IterableDataset)
    assert_rows_keep(list(ds), stories)  # same documents, same order


@batch_settings
@given(batches)
def test_round_trip_dataset_and_map(tmp_path, stories):
    directory = Path(tempfile.mkdtemp(dir=tmp_path))
    for pipeline in ("dataset", "dataset_map", "dataset_map_batched", "dataset_map_reencode"):
        assert_rows_keep(rows_through(pipeline, stories, directory), stories)


# ---------------------------------------------------------------------------------------- golden cases

GOLDEN = {
    "schema_version": "storyline/v1",
    "session": "golden",
    "agent": {"id": "bot", "tools": [{"name": "bash"}], "extra": {"big": 2**64 - 1}},
    "task": {"env": {"name": ""}, "llm": {"k": 3}},
    "started_at": 1753872000,
    "finished_at": "2026-07-30T12:00:00Z",
    "turns": [
        {"id": 1, "src": "user", "msg": "42", "ts": 1753872000},
        {"id": 2, "src": "agent", "msg": None},
        {"id": 3, "src": "agent", "msg": 1.0, "ts": 1753872000.5, "reason": " \n"},
        {
            "id": 4,
            "src": "agent",
            "msg": {"p": 0.30000000000000004, "q": 2.5e-05, "z": -0.0, "tiny": 5e-324, "huge": 1e300},
            "ts": "2026-07-30T12:00:00Z",
            "tool_calls": [
                {"tcid": "c1", "fn": "bash", "args": {"max": 2**64 - 1, "min": -(2**63)}, "result": "1.0"},
            ],
        },
        {
            "id": 5,
            "src": "tool",
            "msg": ["null", "true", "1.0", {}, [], [{}, [[]]], "\U0001f600 中文 e\u0301 \u0000"],
            "observation": {"results": [{"source_call_id": "c1", "content": "Error: x"}]},
            "finished_at": 1753872001,
        },
    ],
}


@pytest.mark.parametrize("pipeline", PIPELINES)
def test_golden_document_is_kept_exactly(tmp_path, pipeline):
    [row] = rows_through(pipeline, [GOLDEN], tmp_path)
    turns = row["turns"]
    # The stored text: JSON for `any`, Arrow null for absent, times as given.
    assert turns[0]["msg"] == '"42"'
    assert turns[1]["msg"] == "null"
    assert turns[1].get("ts") is None  # absent field: Arrow null, not the JSON text "null"
    assert turns[2]["msg"] == "1.0"
    assert turns[0]["ts"] == "1753872000"
    assert turns[2]["ts"] == "1753872000.5"
    assert turns[3]["ts"] == "2026-07-30T12:00:00Z"
    assert "0.30000000000000004" in turns[3]["msg"]
    assert orjson.loads(turns[3]["msg"])["q"] == 2.5e-05
    assert "18446744073709551615" in turns[3]["tool_calls"][0]["args"]
    assert "-9223372036854775808" in turns[3]["tool_calls"][0]["args"]
    assert turns[3]["tool_calls"][0]["result"] == '"1.0"'
    assert row["task"] == '{"env":{"name":""},"llm":{"k":3}}'

    story = row_to_story(row)
    assert_same(story, GOLDEN)
    t = story["turns"]
    assert type(t[0]["msg"]) is str and t[0]["msg"] == "42"
    assert "msg" in t[1] and t[1]["msg"] is None and "ts" not in t[1]
    assert type(t[2]["msg"]) is float and t[2]["msg"] == 1.0
    assert type(t[0]["ts"]) is int and t[0]["ts"] == 1753872000
    assert type(t[2]["ts"]) is float and t[2]["ts"] == 1753872000.5
    assert type(t[3]["ts"]) is str and t[3]["ts"] == "2026-07-30T12:00:00Z"
    assert type(story["started_at"]) is int and story["finished_at"] == "2026-07-30T12:00:00Z"
    assert type(t[4]["finished_at"]) is int
    msg = t[3]["msg"]
    assert repr(msg["p"]) == "0.30000000000000004" and repr(msg["q"]) == "2.5e-05"
    assert math.copysign(1.0, msg["z"]) == -1.0 and msg["tiny"] == 5e-324 and msg["huge"] == 1e300
    args = t[3]["tool_calls"][0]["args"]
    assert args == {"max": 18446744073709551615, "min": -9223372036854775808}
    assert type(args["max"]) is int and type(args["min"]) is int
    assert story["agent"]["extra"]["big"] == 2**64 - 1
    assert story["task"] == {"env": {"name": ""}, "llm": {"k": 3}}
    assert {k: row[k] for k in DERIVED} == {
        "num_turns": 5,
        "num_tool_calls": 1,
        "num_copied_turns": 0,
        "has_reasoning": False,
        "tool_stats": [{"tool": "bash", "count": 1, "success": 1, "failure": 1}],
    }


@pytest.mark.parametrize(
    "value",
    ["42", "1.0", "null", "true", "", 1.0, 1, True, None, -0.0, 0.0, 2**64 - 1, -(2**63), 1e300, 5e-324, [], {}],
    ids=repr,
)
@pytest.mark.parametrize("pipeline", ["memory", "parquet", "load_dataset", "dataset_map"])
def test_any_value_keeps_its_type(tmp_path, pipeline, value):
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a"},
        "meta": value,
        "turns": [{"id": 1, "src": "agent", "msg": value, "extra": {"v": [value]}}],
    }
    [row] = rows_through(pipeline, [story], tmp_path)
    assert_same(row_to_story(row), story)


@pytest.mark.parametrize(
    "when",
    [1753872000, 1753872000.5, 0, -0.0, 1e-09, 9223372036, -9223372036, 1753872000.123456789, "2026-07-30T12:00:00Z"],
    ids=repr,
)
@pytest.mark.parametrize("pipeline", ["memory", "parquet", "streaming"])
def test_time_keeps_its_type(tmp_path, pipeline, when):
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a"},
        "started_at": when,
        "turns": [{"id": 1, "src": "agent", "msg": None, "ts": when, "finished_at": when}],
    }
    validate(story)
    [row] = rows_through(pipeline, [story], tmp_path)
    assert_same(row_to_story(row), story)


@pytest.mark.parametrize(
    "task",
    [
        {"env": {"name": ""}, "llm": {"k": 3}},
        {"env": None, "llm": "", "result": {"correct": True}},
        {"env": {}, "result": {"score": 1.0, "max_score": 2**64 - 1, "task_correct": None, "category": "42"}},
        {"env": {"name": "x", "state": {}, "id": None}, "result": {}},
        {"llm": {"k": None}, "result": {"status": "", "final_answer": "null", "retry_counts": {"a": [1, 1.0]}}},
    ],
)
def test_task_is_kept_exactly_as_given(tmp_path, task):
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "task": task, "turns": []}
    validate(story)
    for pipeline in ("memory", "parquet", "load_dataset"):
        [row] = rows_through(pipeline, [story], tmp_path / pipeline)
        assert_same(row_to_story(row)["task"], task)


def test_absent_fields_stay_absent_and_empty_values_stay_present(tmp_path):
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a", "name": ""},
        "children": [],
        "prompt": {"user": "u"},
        "turns": [
            {"id": 0, "src": "agent", "msg": "", "tool_calls": [], "copied": False, "env": {}},
            {"id": 1, "src": "agent", "msg": None, "prompt": {"system": "", "user": ""}, "reason": ""},
            {"id": 2, "src": "agent", "msg": {}, "tool_calls": [{"tcid": "c", "fn": "f", "args": None}]},
        ],
    }
    for pipeline in PIPELINES:
        [row] = rows_through(pipeline, [story], tmp_path / pipeline)
        assert_same(row_to_story(row), story)


# ---------------------------------------------------------------------------------------- derived columns


def _doc(*turns: dict, **fields: Any) -> dict:
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": list(turns), **fields}
    validate(story)
    return story


def test_derived_counts():
    story = _doc(
        {"id": 1, "src": "user", "msg": "hi", "copied": True},
        {"id": 2, "src": "agent", "msg": None, "copied": False, "reason": "   "},
        {
            "id": 3,
            "src": "agent",
            "msg": None,
            "reason": "\t\n\u3000",
            "tool_calls": [{"tcid": "a", "fn": "f", "args": {}}, {"tcid": "b", "fn": "g", "args": {}}],
        },
        {"id": 4, "src": "agent", "msg": None, "tool_calls": [{"tcid": "c", "fn": "f", "args": {}}], "copied": True},
    )
    row = story_to_row(story)
    assert row["num_turns"] == 4
    assert row["num_tool_calls"] == 3
    assert row["num_copied_turns"] == 2
    assert row["has_reasoning"] is False  # whitespace-only reasoning is not reasoning


@pytest.mark.parametrize(
    ("reasons", "expected"),
    [
        ([], False),
        ([None], False),
        ([""], False),
        ([" ", "\n\t"], False),
        (["", " x "], True),
        (["Let me think."], True),
    ],
)
def test_has_reasoning(reasons, expected):
    turns = [{"id": i, "src": "agent", "msg": None} for i in range(len(reasons))]
    for turn, reason in zip(turns, reasons, strict=True):
        if reason is not None:
            turn["reason"] = reason
    assert story_to_row(_doc(*turns))["has_reasoning"] is expected


@settings(max_examples=200, deadline=None, suppress_health_check=SLOW)
@given(storylines())
def test_tool_outcomes_by_id_are_the_linking_rules_wherever_they_apply(story):
    """compute_tool_stats' shortcut (every result names an earlier call by id) gives the outcomes of the one
    linking rule (``linking.tool_outcomes``), as a multiset; None sends the document to the rule."""
    from pchronicle_datasets.linking import tool_outcomes, tool_outcomes_by_id

    fast = tool_outcomes_by_id(story)
    if fast is None:
        return
    key = lambda o: (o[0], orjson.dumps(o[1], option=orjson.OPT_SORT_KEYS), o[2], id(o[3]))  # noqa: E731
    assert sorted(map(key, fast)) == sorted(map(key, tool_outcomes(story)))


def test_tool_outcomes_by_id_leave_positional_and_unknown_results_to_the_rule():
    from pchronicle_datasets.linking import tool_outcomes_by_id

    call = {"tcid": "c", "fn": "ls", "args": {}}
    answer = {"source_call_id": "c", "content": "x"}
    by_position = {
        "turns": [{"src": "agent", "msg": "", "tool_calls": [call], "observation": {"results": [{"content": "x"}]}}]
    }
    later = {
        "turns": [
            {"src": "agent", "msg": "", "observation": {"results": [answer]}},
            {"src": "agent", "msg": "", "tool_calls": [call]},
        ]
    }
    assert tool_outcomes_by_id(by_position) is None and tool_outcomes_by_id(later) is None
    assert compute_tool_stats(later) == [{"tool": "ls", "count": 1, "success": 0, "failure": 0}]


def test_empty_document_has_zero_counts_and_no_tool_stats():
    assert derived_columns(_doc()) == {
        "num_turns": 0,
        "num_tool_calls": 0,
        "num_copied_turns": 0,
        "has_reasoning": False,
        "tool_stats": [],
    }


def test_tool_stats_sorted_linked_by_call_id_and_only_called_tools():
    story = _doc(
        {
            "id": 1,
            "src": "agent",
            "msg": None,
            "tool_calls": [
                {"tcid": "c1", "fn": "bash", "args": {}, "result": '{"error": null}'},
                {"tcid": "c2", "fn": "bash", "args": {}, "result": "Error: no such file"},
                {"tcid": "c3", "fn": "read_file", "args": {}},
                {"tcid": "c4", "fn": "web_search", "args": {}},
                {"tcid": "c5", "fn": "Zed", "args": {}},
            ],
        },
        {
            "id": 2,
            "src": "tool",
            "msg": None,
            "observation": {
                "results": [
                    {"source_call_id": "c4", "content": '{"success": false}'},
                    {"source_call_id": "c5", "content": "done"},
                    {"source_call_id": "nope", "content": "Error: ignored"},
                    {"content": "Error: no call id"},
                    "not an object",
                    None,
                ]
            },
        },
        {"id": 3, "src": "agent", "msg": None, "tool_calls": [{"tcid": "c6", "fn": "apply", "args": {}, "result": {}}]},
        {"id": 4, "src": "tool", "msg": None, "observation": [{"source_call_id": "c6", "content": "Error: x"}]},
        {"id": 5, "src": "tool", "msg": None, "observation": {"results": {"source_call_id": "c6", "content": ""}}},
        agent={"id": "a", "tools": [{"name": "never_called"}, {"name": "bash"}]},
    )
    expected = [
        {"tool": "Zed", "count": 1, "success": 1, "failure": 0},
        {"tool": "apply", "count": 1, "success": 1, "failure": 0},
        {"tool": "bash", "count": 2, "success": 1, "failure": 1},
        {"tool": "read_file", "count": 1, "success": 0, "failure": 1},  # "Error: no call id", by position (#23)
        {"tool": "web_search", "count": 1, "success": 0, "failure": 1},
    ]
    assert compute_tool_stats(story) == expected
    assert story_to_row(story)["tool_stats"] == expected


# The reference batch runner's rule (hermes-agent batch_runner._extract_tool_stats) for one tool output.
FAILURE_RULE = [
    ('{"error": "boom"}', False),
    ('{"error": {"code": 1}}', False),
    ('{"error": 0}', False),
    ('{"error": ""}', False),
    ('{"content": {"error": "inner"}}', False),
    ('{"success": false}', False),
    ('{"success": false, "error": null}', False),
    ('{"error": null}', True),
    ('{"content": {"error": null}}', True),
    ('{"content": "error: in a string field"}', True),
    ('{"success": true}', True),
    ('{"success": 0}', True),
    ('{"success": null}', True),
    ("[]", True),
    ('["Error: inside an array"]', True),
    ("42", True),
    ("null", True),
    ('"error: a JSON string"', True),
    ("", False),
    ("error: x", False),
    ("Error: x", False),
    ("ERROR: x", False),
    ("  Error: x", False),
    ("\nerror:", False),
    ("ok", True),
    ("   ", True),
    ("errors: 3", True),
    ("an error: occurred", True),
    ("Error x", True),
    ({"error": "boom"}, False),
    ({"content": {"error": 1}}, False),
    ({"success": False}, False),
    ({"error": None}, True),
    ({"success": True, "content": {"error": None}}, True),
    (None, True),
    (0, True),
    ([], True),
    (["Error: x"], True),
]


def _outcome(content: Any, via: str) -> tuple[int, int]:
    if via == "call":
        story = _doc({"id": 1, "src": "agent", "msg": None, "tool_calls": [{"tcid": "t", "fn": "f", "args": {}}]})
        story["turns"][0]["tool_calls"][0]["result"] = content
    else:
        story = _doc(
            {"id": 1, "src": "agent", "msg": None, "tool_calls": [{"tcid": "t", "fn": "f", "args": {}}]},
            {
                "id": 2,
                "src": "tool",
                "msg": None,
                "observation": {"results": [{"source_call_id": "t", "content": content}]},
            },
        )
    [entry] = story_to_row(story)["tool_stats"]
    assert entry["tool"] == "f" and entry["count"] == 1
    return entry["success"], entry["failure"]


@pytest.mark.parametrize("via", ["call", "observation"])
@pytest.mark.parametrize(("content", "success"), FAILURE_RULE, ids=[repr(c) for c, _ in FAILURE_RULE])
def test_tool_result_failure_rule(content, success, via):
    assert _reference_success(content) is success  # the table is the reference's own reading
    assert _outcome(content, via) == ((1, 0) if success else (0, 1))


@pytest.mark.parametrize(
    "content",
    [
        '{"success": false, "score": NaN}',  # what Python's json.dumps writes for a NaN
        '{"error": Infinity}',
        '{"error": "\\ud800"}',  # an escaped lone surrogate: Python's json reads it
    ],
)
def test_tool_result_failure_rule_reads_json_like_the_reference(content):
    """The reference parses with Python's ``json``, which accepts these texts; they are failed results there."""
    assert _reference_success(content) is False
    assert _outcome(content, "call") == (0, 1)


@pytest.mark.parametrize("call_id", [["t"], {"id": "t"}, [], {}])
def test_non_string_source_call_id_is_ignored(call_id):
    """``observation`` is ``any``: a result whose source_call_id is an array or object has no id, so it answers the
    waiting call by position, as the training text shows it (one linking rule, issue #23): an empty result fails."""
    story = _doc(
        {"id": 1, "src": "agent", "msg": None, "tool_calls": [{"tcid": "t", "fn": "f", "args": {}}]},
        {"id": 2, "src": "tool", "msg": None, "observation": {"results": [{"source_call_id": call_id, "content": ""}]}},
    )
    assert compute_tool_stats(story) == [{"tool": "f", "count": 1, "success": 0, "failure": 1}]
    assert_same(row_to_story(story_to_row(story)), story)


def _reference_success(content: Any) -> bool:
    """hermes-agent ``batch_runner._extract_tool_stats``: whether one tool output is a success."""
    try:
        parsed = json.loads(content) if isinstance(content, str) else content
        if isinstance(parsed, dict):
            if "error" in parsed and parsed["error"] is not None:
                return False
            if "content" in parsed and isinstance(parsed["content"], dict):
                if parsed["content"].get("error") is not None:
                    return False
            if parsed.get("success") is False:
                return False
        return True
    except (json.JSONDecodeError, ValueError, TypeError):
        return not (not content or content.strip().lower().startswith("error:"))


def _reference_tool_stats(story: dict) -> list[dict]:
    """An oracle: the reference's counting over the results the training text shows, as the one linking rule
    places them (``linking.results_by_turn``: by id, or by position; issue #23); that this rule is what the
    training text shows is ``tests/test_source_accounting.py``'s."""
    from pchronicle_datasets.linking import results_by_turn

    stats: dict[str, dict[str, int]] = {}
    for turn in story["turns"]:
        for call in turn.get("tool_calls", []):
            stats.setdefault(call["fn"], {"count": 0, "success": 0, "failure": 0})["count"] += 1
    calls = {c["tcid"]: c for t in story["turns"] for c in t.get("tool_calls", [])}
    for turn in results_by_turn(story).values():
        for sid, fn, content in turn:
            if fn in stats and fn != "unknown":
                # A result without "content" is "" as in the reference (msg.get("content", "")); a call the harness
                # marked failed (response status error/failed, a non-zero exit code) fails whatever its text.
                response = (calls.get(sid) or {}).get("response")
                code = response.get("exit_code") if isinstance(response, dict) else None
                marked = isinstance(response, dict) and (
                    response.get("status") in ("error", "failed") or (type(code) is int and code != 0)
                )
                stats[fn]["success" if _reference_success(content) and not marked else "failure"] += 1
    return [{"tool": tool, **counts} for tool, counts in sorted(stats.items())]


@settings(max_examples=100, deadline=None, suppress_health_check=SLOW)
@given(storylines())
def test_derived_columns_match_an_independent_oracle(story):
    derived = story_to_row(story)
    turns = story["turns"]
    assert derived["num_turns"] == len(turns)
    assert derived["num_tool_calls"] == sum(len(t.get("tool_calls", [])) for t in turns)
    assert derived["num_copied_turns"] == sum(t.get("copied") is True for t in turns)
    assert derived["has_reasoning"] is any(bool(t.get("reason", "").strip()) for t in turns)
    stats = derived["tool_stats"]
    assert stats == _reference_tool_stats(story)
    assert [s["tool"] for s in stats] == sorted({s["tool"] for s in stats})
    assert all(s["count"] > 0 for s in stats)
    assert sum(s["count"] for s in stats) == derived["num_tool_calls"]


@settings(max_examples=30, deadline=None, suppress_health_check=SLOW)
@given(storylines(), st.data())
def test_row_to_story_ignores_derived_columns(story, data):
    row = story_to_row(story)
    changed = {
        **row,
        "num_turns": data.draw(st.one_of(st.none(), st.integers(-5, 5))),
        "num_tool_calls": 10**6,
        "num_copied_turns": None,
        "has_reasoning": not row["has_reasoning"],
        "tool_stats": [{"tool": "ghost", "count": 7, "success": 7, "failure": 0}],
    }
    assert_same(row_to_story(changed), story)
    assert_same(row_to_story(rows_to_table([changed]).to_pylist()[0]), story)
    without = {k: v for k, v in row.items() if k not in DERIVED}
    assert_same(row_to_story(without), story)


# -------------------------------------------------------------------------------------- invalid documents

_OK = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}


def _turn(**fields: Any) -> dict:
    return {**_OK, "turns": [{"id": 1, "src": "agent", "msg": None, **fields}]}


def _call(**fields: Any) -> dict:
    return _turn(tool_calls=[{"tcid": "c", "fn": "f", "args": {}, **fields}])


_ENTRY = {"source_document_id": "d", "fields": {}}
INVALID = {
    "not an object": [],
    "null": None,
    "string": "storyline/v1",
    "no schema_version": {k: v for k, v in _OK.items() if k != "schema_version"},
    "schema v2": {**_OK, "schema_version": "storyline/v2"},
    "schema_version not a string": {**_OK, "schema_version": 1},
    "no session": {k: v for k, v in _OK.items() if k != "session"},
    "empty session": {**_OK, "session": ""},
    "no agent": {k: v for k, v in _OK.items() if k != "agent"},
    "agent null": {**_OK, "agent": None},
    "empty agent id": {**_OK, "agent": {"id": ""}},
    "no turns": {k: v for k, v in _OK.items() if k != "turns"},
    "turns an object": {**_OK, "turns": {}},
    "turn not an object": {**_OK, "turns": [1]},
    "undeclared root key": {**_OK, "extra_field": 1},
    "undeclared turn key": _turn(message="hi"),
    "turn without msg": {**_OK, "turns": [{"id": 1, "src": "agent"}]},
    "turn id bool": _turn(id=True),
    "turn id float": _turn(id=1.0),
    "turn id beyond int64": _turn(id=2**63),
    "duplicate turn ids": {**_OK, "turns": [{"id": 1, "src": "a", "msg": 1}, {"id": 1, "src": "b", "msg": 2}]},
    "empty src": _turn(src=""),
    "ts date only": _turn(ts="2026-07-30"),
    "ts without zone": _turn(ts="2026-07-30T12:00:00"),
    "ts Feb 30": _turn(ts="2026-02-30T12:00:00Z"),
    "ts hour 24": _turn(ts="2026-07-30T24:00:00Z"),
    "ts number as text": _turn(ts="1753872000"),
    "ts 10 decimals": _turn(ts=0.1234567891),
    "ts below a nanosecond": _turn(ts=1e-10),
    "ts beyond int64 ns": _turn(ts=9223372037),
    "ts nan": _turn(ts=float("nan")),
    "ts inf": _turn(finished_at=float("inf")),
    "ts bool": _turn(ts=True),
    "started_at list": {**_OK, "started_at": [1]},
    "msg nan": _turn(msg=float("nan")),
    "msg big int": _turn(msg=[2**64]),
    "msg below int64": _turn(msg={"n": -(2**63) - 1}),
    "msg tuple": _turn(msg=(1, 2)),
    "msg set": _turn(msg={1, 2}),
    "msg bytes": _turn(msg=b"x"),
    "msg object()": _turn(msg=object()),
    "msg non-string key": _turn(msg={1: "a"}),
    "msg mixed keys": _turn(msg={1: "a", "b": 2}),
    "msg lone surrogate": _turn(msg="\ud800"),
    "key lone surrogate": _turn(extra={"\udfff": 1}),
    "reason not a string": _turn(reason=1),
    "copied not a bool": _turn(copied=1),
    "nllm float": _turn(nllm=1.5),
    "turn env null": _turn(env=None),
    "turn env undeclared": _turn(env={"nope": 1}),
    "turn env state list": _turn(env={"state": [1]}),
    "prompt on copied turn": _turn(copied=True, prompt={"user": "u"}),
    "empty turn prompt": _turn(prompt={}),
    "half-empty turn prompt": _turn(prompt={"system": ""}),
    "turn prompt not string": _turn(prompt={"system": 1, "user": "u"}),
    "empty document prompt": {**_OK, "prompt": {}},
    "all-empty document prompt": {**_OK, "prompt": {"system": "", "user": ""}},
    "tool_calls object": _turn(tool_calls={}),
    "tool call not an object": _turn(tool_calls=["c"]),
    "tool call without args": _turn(tool_calls=[{"tcid": "c", "fn": "f"}]),
    "empty tcid": _call(tcid=""),
    "tcid not a string": _call(tcid=["c"]),
    "empty fn": _call(fn=""),
    "duplicate tcid across turns": {
        **_OK,
        "turns": [
            {"id": 1, "src": "a", "msg": 1, "tool_calls": [{"tcid": "x", "fn": "f", "args": 1}]},
            {"id": 2, "src": "a", "msg": 1, "tool_calls": [{"tcid": "x", "fn": "g", "args": 2}]},
        ],
    },
    "empty response": _call(response={}),
    "exit_code string": _call(response={"exit_code": "0"}),
    "duration float": _call(duration_ms=1.0),
    "empty task": {**_OK, "task": {}},
    "task null": {**_OK, "task": None},
    "task all absent": {**_OK, "task": {"env": None, "llm": "", "result": {}}},
    "task parts absent inside": {**_OK, "task": {"env": {"name": ""}, "llm": {"k": None}}},
    "task env list": {**_OK, "task": {"env": [1], "llm": {"k": 1}}},
    "task llm k zero": {**_OK, "task": {"llm": {"k": 0}}},
    "task llm k bool": {**_OK, "task": {"llm": {"k": True}}},
    "task llm undeclared": {**_OK, "task": {"llm": {"k": 1, "n": 2}}},
    "task result score bool": {**_OK, "task": {"result": {"score": True}}},
    "task result score nan": {**_OK, "task": {"result": {"score": float("nan")}}},
    "task result correct string": {**_OK, "task": {"result": {"correct": "yes"}}},
    "task result extra nan": {**_OK, "task": {"result": {"task_correct": float("nan")}}},
    "task undeclared": {**_OK, "task": {"llm": {"k": 1}, "budget": 1}},
    "origin without format": {**_OK, "origin": {}},
    "origin empty document_id": {**_OK, "origin": {"format": "x", "document_id": ""}},
    "parent without psid": {**_OK, "parent": {"rel": "spawn"}},
    "parent ptid string": {**_OK, "parent": {"psid": "p", "ptid": "1"}},
    "children string": {**_OK, "children": "abc"},
    "children with int": {**_OK, "children": ["a", 1]},
    "trajectory empty": {**_OK, "trajectory": ""},
    "unknown_fields list": {**_OK, "unknown_fields": []},
    "unknown_fields without sources": {**_OK, "unknown_fields": {}},
    "unknown_fields undeclared": {**_OK, "unknown_fields": {"sources": {}, "x": 1}},
    "unknown_fields sources list": {**_OK, "unknown_fields": {"sources": []}},
    "unknown_fields empty source name": {**_OK, "unknown_fields": {"sources": {"": _ENTRY}}},
    "unknown_fields entry null": {**_OK, "unknown_fields": {"sources": {"s": None}}},
    "unknown_fields entry without id": {**_OK, "unknown_fields": {"sources": {"s": {"fields": {}}}}},
    "unknown_fields fields list": {**_OK, "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": []}}}},
    "unknown_fields bad pointer": {**_OK, "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {"a/b": 1}}}}},
    "unknown_fields bad tilde": {**_OK, "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {"/a~2": 1}}}}},
    "unknown_fields int pointer": {**_OK, "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {5: 1}}}}},
    "counts mismatch": {
        **_OK,
        "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {"/a/0": 1, "/a/1": 2}}}},
        "unknown_key_counts": {"s": {"/a/0": 1, "/a/1": 1}},
    },
    "counts without fields": {**_OK, "unknown_key_counts": {"s": {}}},
    "counts list": {**_OK, "unknown_key_counts": []},
    "count a bool": {
        **_OK,
        "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {"/a": 1}}}},
        "unknown_key_counts": {"s": {"/a": True}},
    },
    "count a float": {
        **_OK,
        "unknown_fields": {"sources": {"s": {**_ENTRY, "fields": {"/a": 1}}}},
        "unknown_key_counts": {"s": {"/a": 1.0}},
    },
    "counts with int key": {**_OK, "unknown_fields": {"sources": {"a": _ENTRY}}, "unknown_key_counts": {1: {}}},
    "source names of mixed types with counts": {
        **_OK,
        "unknown_fields": {"sources": {1: _ENTRY, "a": _ENTRY}},
        "unknown_key_counts": {},
    },
}


@pytest.mark.parametrize("story", list(INVALID.values()), ids=list(INVALID))
def test_invalid_document_raises_storyline_error(story):
    with pytest.raises(StorylineError):
        story_to_row(story)


def _owned_objects(story: dict) -> list[dict]:
    """Every object of ``story`` whose keys the RFC declares (undeclared keys are refused there)."""
    owned = [story, story["agent"]]
    owned += [story[k] for k in ("origin", "parent", "prompt", "task") if k in story]
    task = story.get("task", {})
    owned += [task[k] for k in ("env", "llm") if type(task.get(k)) is dict]
    for turn in story["turns"]:
        owned.append(turn)
        owned += [turn[k] for k in ("env", "prompt") if k in turn]
        for call in turn.get("tool_calls", []):
            owned.append(call)
            if "response" in call:
                owned.append(call["response"])
    return owned


@settings(max_examples=40, deadline=None, suppress_health_check=SLOW)
@given(storylines(), st.data())
def test_undeclared_key_anywhere_raises_storyline_error(story, data):
    target = data.draw(st.sampled_from(_owned_objects(story)))
    target["zz_undeclared"] = data.draw(st.sampled_from([None, 1, "x", {}]))
    with pytest.raises(StorylineError) as info:
        story_to_row(story)
    assert info.value.pointer.endswith("/zz_undeclared")
