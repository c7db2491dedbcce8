"""Each script of loading_scripts/ runs as a user runs it, on the shipped samples."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
from datasets import load_dataset

import pchronicle_datasets as pc

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"


def run(script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, str(ROOT / "loading_scripts" / script), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def test_gateway_to_sharegpt_writes_the_training_set(tmp_path):
    capture = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
    run("gateway_to_sharegpt.py", str(capture), "-o", "out", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)
    lines = (tmp_path / "out" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    expected = [pc.to_sharegpt(s) for s in pc.into_storyline("openai-msg", capture.read_bytes(), document_id="x")]
    assert [json.loads(line) for line in lines] == expected
    assert pq.read_table(tmp_path / "out" / "train.parquet").to_pylist() == expected
    assert not (tmp_path / "out" / "quarantine.jsonl").exists()
    # The sample captures carry the request's tools: every system prompt describes the tools the run calls.
    for line in lines:
        system = json.loads(line)["conversations"][0]["value"]
        listed = json.loads(system[system.index("\n<tools>\n") + 9 : system.rindex("\n</tools>\n")])
        assert [t["name"] for t in listed] == ["terminal", "str_replace_editor", "finish"]


def test_gateway_to_sharegpt_sets_bad_sessions_aside(tmp_path):
    good = (SAMPLES / "openai_msg" / "gateway_capture.jsonl").read_text(encoding="utf-8")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(good + '{"session_id": "broken", "step_id": 0, "response": {"content": "x"}}\n{oops\n')
    proc = run("gateway_to_sharegpt.py", str(bad), "-o", "out", "--cache-dir", str(tmp_path / "cache"), cwd=tmp_path)
    assert "2 bad record(s)" in proc.stdout
    entries = [json.loads(line) for line in (tmp_path / "out" / "quarantine.jsonl").read_text().splitlines()]
    assert [e["pointer"] for e in entries] == ["/session_steps/14/step_id", ""]
    assert len((tmp_path / "out" / "train.jsonl").read_text().splitlines()) == 3


def test_corpus_to_hub_dry_run_is_a_loadable_repository(tmp_path):
    files = [
        str(SAMPLES / "openai_msg" / "gateway_capture.jsonl"),
        str(SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl"),
    ]
    run(
        "corpus_to_hub.py",
        *files,
        "--repo",
        "org/demo",
        "--to",
        "sharegpt",
        "--dry-run",
        "repo",
        "--cache-dir",
        str(tmp_path / "cache"),
        cwd=tmp_path,
    )
    card = (tmp_path / "repo" / "README.md").read_text(encoding="utf-8")
    assert "to_sharegpt" in card and "org/demo" in card
    ds = load_dataset(str(tmp_path / "repo"), split="train", cache_dir=str(tmp_path / "cache2"))
    assert ds.num_rows == 9 and ds.column_names == ["conversations"]
