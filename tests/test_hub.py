"""Pushing to the Hub, tested at huggingface_hub's HTTP boundary: a fake Hub (an httpx2 mock transport)
answers the real client's requests and keeps every file the commit carries; the captured repository must
then load with `datasets` alone, in a process that never imports this package."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml
from datasets import load_dataset

import pchronicle_datasets as pc
from tests.hub_fake import (
    hub_fixture,  # noqa: F401 (the `hub` fixture)
)

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"


@pytest.fixture
def captures(tmp_path):
    return load_dataset(
        "pchronicle",
        "openai-msg",
        data_files=str(SAMPLES / "openai_msg" / "gateway_capture.jsonl"),
        split="train",
        cache_dir=str(tmp_path / "cache"),
    )


def _load_without_package(folder: Path, tmp_path: Path) -> list[dict]:
    """`load_dataset(<repository folder>)` in a fresh interpreter that never imports pchronicle_datasets."""
    script = textwrap.dedent(
        f"""
        import json, sys
        from datasets import load_dataset
        ds = load_dataset({str(folder)!r}, split="train", cache_dir={str(tmp_path / "cache2")!r})
        assert "pchronicle_datasets" not in sys.modules
        print(json.dumps({{"features": str(ds.features), "rows": ds.to_list()}}))
        """
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_push_storyline_rows_loads_back_with_datasets_alone(hub, captures, tmp_path):
    info = pc.push_to_hub(
        captures,
        "org/agent-sft",
        conversion="openai-msg → Storyline rows",
        token="hf_test_token",
        redact=pc.Redactor(key="k"),  # on by default (issue #24); a given key makes the placeholders known
    )
    assert info.oid == "abc123"
    assert hub.created[0]["name"] == "agent-sft" and hub.created[0]["type"] == "dataset"
    assert set(hub.files) == {"README.md", "data/train-00000-of-00001.parquet"}
    card = hub.files["README.md"].decode()
    meta = yaml.safe_load(card.split("---")[1])
    assert meta["configs"][0]["data_files"] == [{"split": "train", "path": "data/train-*.parquet"}]
    assert meta["dataset_info"]["splits"] == [{"name": "train", "num_examples": 3}]
    assert "openai-msg: 3" in card and "openai-msg → Storyline rows" in card and "`turns`" in card

    loaded = _load_without_package(hub.write(tmp_path / "repo"), tmp_path)
    assert len(loaded["rows"]) == 3
    stories = [pc.row_to_story(row) for row in loaded["rows"]]
    # What was pushed is the redacted documents (the sample holds a /Users/<name>/ path and e-mail addresses).
    assert stories == [pc.redact(pc.row_to_story(row), key="k") for row in captures]
    assert stories != [pc.row_to_story(row) for row in captures]


def test_push_converted_training_set_loads_back(hub, captures, tmp_path):
    train = captures.map(pc.to_sharegpt, remove_columns=captures.column_names)
    pc.push_to_hub(
        train,
        "org/agent-sft",
        conversion="openai-msg → to_sharegpt",
        token="hf_test_token",
        redact=pc.Redactor(key="k"),
    )
    loaded = _load_without_package(hub.write(tmp_path / "repo"), tmp_path)
    assert loaded["rows"] == train.map(pc.redact_row, fn_kwargs={"key": "k"}).to_list()  # redacted by default
    assert "conversations" in loaded["features"]


def test_push_dataset_dict_writes_every_split(hub, captures, tmp_path):
    from datasets import DatasetDict

    splits = DatasetDict({"train": captures.select([0, 1]), "test": captures.select([2])})
    pc.push_to_hub(splits, "org/agent-sft", token="hf_test_token")
    assert {"data/train-00000-of-00001.parquet", "data/test-00000-of-00001.parquet"} <= set(hub.files)
    folder = hub.write(tmp_path / "repo")
    ds = load_dataset(str(folder), cache_dir=str(tmp_path / "cache3"))
    assert ds["train"].num_rows == 2 and ds["test"].num_rows == 1
    assert ds["train"].features == pc.STORYLINE_FEATURES


def test_push_rejects_what_is_not_a_dataset(hub):
    with pytest.raises(TypeError, match="Dataset or a DatasetDict"):
        pc.push_to_hub([{"a": 1}], "org/x", token="hf_test_token")
