"""The ``role-text`` format (docs/formats/role-text.md): ``{"trajectory": [{"role": "ai", "text": …}]}``
records as JSON Lines; counted from the source here; same-source round trips give equal JSON."""

from __future__ import annotations

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError

from .common import DATA, load_auto, records, written

FILE = DATA / "role_text" / "swe_agent_trajectories.jsonl"


def test_load_dataset_auto_reads_every_turn(tmp_path):
    stories = load_auto([FILE], tmp_path)
    sources = records(FILE)
    assert len(stories) == len(sources) == 2
    for story, source in zip(stories, sources, strict=True):
        assert story["origin"]["format"] == "role-text"
        roles = {"ai": "agent"}
        assert [(t["src"], t["msg"]) for t in story["turns"]] == [
            (roles.get(e["role"], e["role"]), e["text"]) for e in source["trajectory"]
        ]
        assert story["session"] == source["instance_id"] and story["agent"]["model"] == source["model_name"]
        assert story["task"]["result"]["correct"] is source["target"]
        assert story["task"]["result"]["status"] == source["exit_status"]
    assert stories[0]["task"]["result"]["final_answer"] == sources[0]["generated_patch"]
    assert "final_answer" not in stories[1]["task"]["result"]  # an empty patch is no answer: kept as residual


def test_same_source_round_trip_is_equal_json():
    stories = pc.into_storyline("auto", FILE.read_bytes(), document_id=FILE.name)
    assert written(pc.from_storyline("role-text", stories)) == records(FILE)


def test_chat_names_the_format_that_reads_it():
    record = {"trajectory": [{"role": "user", "text": "hi"}, {"role": "ai", "text": "hello"}]}
    with pytest.raises(FormatError) as err:
        pc.into_storyline("chat", orjson.dumps(record), document_id="r.json")
    assert "read it with --from role-text" in str(err.value)
    assert "a message is an object with a string role, got object" not in str(err.value)


def test_an_entry_without_a_role_is_refused_with_its_pointer():
    record = {"trajectory": [{"role": "user", "text": "hi"}, {"text": "no role"}]}
    with pytest.raises(FormatError, match=r"/trajectory/1: a trajectory entry is an object with a string role"):
        pc.into_storyline("auto", orjson.dumps(record), document_id="r.jsonl")
