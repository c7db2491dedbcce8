"""Issue 12, "Training outputs with fixed features": ``ds.map(pc.to_messages / pc.to_sharegpt, features=…)`` gives
exactly ``MESSAGES_FEATURES`` / ``SHAREGPT_FEATURES`` whatever the data, so outputs of every shipped sample and of
generated corpora with different tool sets concatenate, save to Parquet and load back equal, with every JSON
value exact (``output_features.py``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from datasets import Dataset, concatenate_datasets, load_dataset
from datasets.utils.json import ujson_dumps, ujson_loads
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from tests.strategies import AWKWARD_FLOATS, AWKWARD_INTS, storylines

SAMPLES = Path(pc.__file__).parent / "samples"
DATA = Path(__file__).parent / "data"
SAMPLE_FILES = sorted(p for p in SAMPLES.rglob("*.json*") if p.is_file())


def _stories(path: Path) -> list[dict]:
    return pc.into_storyline("auto", path.read_bytes(), document_id=path.name)


def _mapped(stories: list[dict], fn, features) -> Dataset:
    ds = Dataset(pc.rows_to_table([pc.story_to_row(s) for s in stories]))
    return ds.map(fn, remove_columns=ds.column_names, features=features, load_from_cache_file=False)


def _tool(name: str, parameters: dict) -> dict:
    return {"type": "function", "function": {"name": name, "description": f"{name} tool", "parameters": parameters}}


def _agent_doc(session: str, tools: list[dict], args: dict) -> dict:
    return {
        "schema_version": "storyline/v1",
        "session": session,
        "agent": {"id": "a", "tools": tools},
        "turns": [
            {"id": 1, "src": "user", "msg": "go"},
            {
                "id": 2,
                "src": "agent",
                "msg": "",
                "reason": "call it",
                "tool_calls": [{"tcid": f"{session}-c", "fn": tools[0]["function"]["name"], "args": args}],
                "observation": {"results": [{"source_call_id": f"{session}-c", "content": {"ok": True}}]},
            },
            {"id": 3, "src": "agent", "msg": "done"},
        ],
    }


# Two agents whose tool schemas differ in keys (additionalProperties, required) and a corpus without tools: the
# three type-inference failures of the issue.
STRICT_AGENT = _agent_doc(
    "strict",
    [_tool("search", {"type": "object", "properties": {"q": {"type": "string"}}, "additionalProperties": False})],
    {"q": "x", "ratio": 2.5e-05, "id": 2**63 - 1},
)
LOOSE_AGENT = _agent_doc(
    "loose",
    [_tool("fetch", {"type": "object", "properties": {"url": {}}, "required": ["url"]})],
    {"url": "u", "big": 18446744073709551615, "neg": -(2**63), "f": 0.9073017428710906},
)
NO_TOOLS = {
    "schema_version": "storyline/v1",
    "session": "plain",
    "agent": {"id": "b"},
    "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}],
}
CORPORA = [[STRICT_AGENT], [LOOSE_AGENT], [NO_TOOLS]]


def test_inferred_types_do_not_concatenate_which_is_why_the_features_are_fixed():
    inferred = [
        Dataset.from_list([pc.to_messages(s, arguments="object") for s in corpus], on_mixed_types="use_json")
        for corpus in CORPORA
    ]
    with pytest.raises(ValueError, match=r"can't be aligned|cannot be aligned|Couldn't cast"):
        concatenate_datasets(inferred)


@pytest.mark.parametrize(
    "fn,features", [(pc.to_messages, pc.MESSAGES_FEATURES), (pc.to_sharegpt, pc.SHAREGPT_FEATURES)]
)
def test_generated_corpora_with_different_tool_sets_concatenate_and_load_back_from_parquet(fn, features, tmp_path):
    parts = [_mapped(corpus, fn, features) for corpus in CORPORA]
    assert all(part.features == features for part in parts)
    combined = concatenate_datasets(parts)
    combined.to_parquet(str(tmp_path / "train.parquet"))
    back = load_dataset("parquet", data_files=str(tmp_path / "train.parquet"), split="train", cache_dir=str(tmp_path))
    assert back.features == features
    assert back.to_list() == combined.to_list() == [fn(s) for corpus in CORPORA for s in corpus]


def test_every_shipped_sample_maps_to_the_fixed_features_and_concatenates(tmp_path):
    assert SAMPLE_FILES
    for fn, features in ((pc.to_messages, pc.MESSAGES_FEATURES), (pc.to_sharegpt, pc.SHAREGPT_FEATURES)):
        parts = [_mapped(_stories(path), fn, features) for path in SAMPLE_FILES]
        combined = concatenate_datasets(parts)
        path = tmp_path / f"{fn.__name__}.parquet"
        combined.to_parquet(str(path))
        back = load_dataset("parquet", data_files=str(path), split="train", cache_dir=str(tmp_path / fn.__name__))
        assert back.features == features and back.to_list() == combined.to_list()
        assert combined.num_rows == sum(len(_stories(p)) for p in SAMPLE_FILES)


def test_json_values_are_exact_where_datasets_json_is_not():
    """``output_features``' reason for JSON text: pandas' ujson, which ``datasets.Json`` uses, rounds floats."""
    assert ujson_loads(ujson_dumps(0.9073017428710906)) != 0.9073017428710906
    assert ujson_loads(ujson_dumps(2.48696838041943e-10)) != 2.48696838041943e-10
    [row] = _mapped([LOOSE_AGENT], pc.to_messages, pc.MESSAGES_FEATURES)
    args = pc.decode_messages(row)["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert args == LOOSE_AGENT["turns"][1]["tool_calls"][0]["args"]
    assert repr(args["f"]) == "0.9073017428710906" and args["big"] == 18446744073709551615
    [row] = _mapped([STRICT_AGENT], pc.to_messages, pc.MESSAGES_FEATURES)
    args = pc.decode_messages(row)["messages"][1]["tool_calls"][0]["function"]["arguments"]
    assert repr(args["ratio"]) == "2.5e-05" and args["id"] == 2**63 - 1
    assert (
        pc.decode_messages(row, arguments="string")["messages"][1]["tool_calls"][0]["function"]["arguments"]
        == (row["messages"][1]["tool_calls"][0]["function"]["arguments"])
    )


def test_arguments_that_were_not_json_stay_text_when_a_stored_row_is_decoded():
    """docs/training.md, ``arguments``: the dataset form keeps the source's text, and decoding it gives that text
    back (nothing is lost, so nothing is counted); only ``to_messages(arguments="object")`` writes ``{}``."""
    call = {"tcid": "c1", "fn": "ls", "args": "{not json"}
    turns = [{"id": 1, "src": "user", "msg": "go"}, {"id": 2, "src": "agent", "msg": "", "tool_calls": [call]}]
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": turns}
    [row] = _mapped([story], pc.to_messages, pc.MESSAGES_FEATURES)
    with pc.collect_losses() as report:
        decoded = pc.decode_messages(row)
    assert decoded["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert not report.counts
    with pc.collect_losses() as report:
        direct = pc.to_messages(story, arguments="object")
    assert direct["messages"][1]["tool_calls"][0]["function"]["arguments"] == {}
    assert report.counts == {"invalid_arguments": 1}


def test_every_key_is_in_every_message_and_tools_is_json_text():
    out = pc.to_messages(NO_TOOLS)
    assert out["tools"] == "[]"
    assert all(set(m) == {*pc.training.output_features.MESSAGE_KEYS, "tool_calls"} for m in out["messages"])
    assert pc.decode_messages(out) == pc.to_messages(NO_TOOLS, arguments="object")


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(storylines(max_turns=3), min_size=1, max_size=3), st.sampled_from(AWKWARD_FLOATS + AWKWARD_INTS))
def test_generated_documents_round_trip_through_the_features(stories, number):
    seen: set[str] = set()
    unique = []
    for i, story in enumerate(stories):
        story = {**story, "session": f"s{i}"}
        tcids = [c["tcid"] for t in story["turns"] for c in t.get("tool_calls") or []]
        if seen.isdisjoint(tcids):
            seen.update(tcids)
            unique.append(story)
    unique.append(_agent_doc("n", STRICT_AGENT["agent"]["tools"], {"n": number}))
    # ds.map writes what to_messages returns by default (arguments="string"): decoded as strings, the same. A
    # Storyline ``args`` string (source text that was not JSON) is kept as it is in that form and becomes {} in
    # the object form (a counted loss), so the object forms are compared on the agent document of JSON arguments.
    direct = [pc.to_messages(s) for s in unique]
    with pc.collect_losses():
        mapped = _mapped(unique, pc.to_messages, pc.MESSAGES_FEATURES)
    assert mapped.features == pc.MESSAGES_FEATURES
    want = [pc.decode_messages(d, arguments="string") for d in direct]
    assert [pc.decode_messages(row, arguments="string") for row in mapped] == want
    assert [pc.decode_messages(row, arguments="string") for row in concatenate_datasets([mapped, mapped])] == want * 2
    assert pc.decode_messages(mapped[-1]) == pc.to_messages(unique[-1], arguments="object")
