"""The `pchronicle-datasets` command line, run as a user runs it (in-process `main`, and once as a process)."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest
from datasets import load_from_disk

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from tests import goldens
from tests.hub_fake import fake_hub

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
GOLDENS = SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl"
# The openai-msg golden cases the library tests read (tests/data/openai_msg/README.md), those whose expected
# fragments name the first document's turns or residual.
OPENAI_GOLDENS = [
    n for n in goldens.names("openai_msg") if {"turns", "fields"} & set(goldens.load("openai_msg", n).expected)
]


def story(**changes) -> dict:
    base = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}],
    }
    return {**base, **changes}


def test_help_shows_examples():
    proc = subprocess.run([sys.executable, "-m", "pchronicle_datasets", "--help"], capture_output=True, text=True)
    assert proc.returncode == 0
    assert "examples:" in proc.stdout and "pchronicle-datasets convert" in proc.stdout
    sub = subprocess.run(
        [sys.executable, "-m", "pchronicle_datasets", "push", "--help"], capture_output=True, text=True
    )
    assert "--repo" in sub.stdout and "examples:" in sub.stdout


def test_validate_valid_inputs_exit_0(capsys):
    assert main(["validate", str(GOLDENS), str(CAPTURE)]) == 0
    assert "9 valid document(s), 0 problem(s) in 2 file(s)" in capsys.readouterr().err


def test_validate_reports_every_error_with_file_line_and_pointer(tmp_path, capsys):
    bad = tmp_path / "bad.storyline.jsonl"
    lines = [
        json.dumps(story()),
        json.dumps(story(session="", turns=[{"id": True, "src": "user", "msg": 1}])),
        "{not json",
    ]
    bad.write_text("\n".join(lines) + "\n")
    assert main(["validate", str(bad)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"/session: must be a non-empty string in {bad} line 2",
        f"/turns/0/id: expected an integer, got boolean in {bad} line 2",
        f"(root): not valid JSON: unexpected character, expected a string key in {bad} line 3",
    ]


def test_validate_reads_compressed_files_and_detects_formats(tmp_path, capsys):
    gz = tmp_path / "capture.jsonl.gz"
    gz.write_bytes(gzip.compress(CAPTURE.read_bytes()))
    assert main(["validate", str(gz)]) == 0
    assert "3 valid document(s)" in capsys.readouterr().err


def test_inspect_counts_formats_turns_and_tools(capsys):
    assert main(["inspect", "--json", str(CAPTURE), str(GOLDENS)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["documents_per_format"] == {"atif": 6, "openai-msg": 3}
    assert report["documents"] == 9 and report["bad_records"] == 0
    assert report["tools"]["terminal"] == {"count": 6, "success": 4, "failure": 0}
    assert main(["inspect", str(CAPTURE)]) == 0
    text = capsys.readouterr().out
    assert "documents: 3" in text and "terminal" in text


@pytest.mark.parametrize("target", ["storyline", "openai-msg", "sharegpt", "parquet", "dataset"])
def test_convert_to_every_target(tmp_path, target):
    out = tmp_path / "out"
    assert main(["convert", str(CAPTURE), "--to", target, "-o", str(out)]) == 0
    expected = pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id=str(CAPTURE))
    if target == "parquet":
        assert [pc.row_to_story(r) for r in pq.read_table(out).to_pylist()] == expected
    elif target == "dataset":
        assert [pc.row_to_story(r) for r in load_from_disk(str(out))] == expected
    elif target == "sharegpt":
        lines = (out / "trajectory_samples.jsonl").read_text().splitlines()
        assert [json.loads(line)["conversations"] for line in lines] == [
            pc.to_sharegpt(s)["conversations"] for s in expected
        ]
    else:
        assert pc.into_storyline(target, out.read_bytes(), document_id=str(CAPTURE)) == expected


def test_convert_stops_at_a_bad_record_or_skips_it(tmp_path, capsys):
    src = tmp_path / "mixed.jsonl"
    src.write_text(CAPTURE.read_text() + '{"session_id": "x", "step_id": 0}\n')
    assert main(["convert", str(src), "--from", "openai-msg", "--to", "storyline", "-o", str(tmp_path / "a")]) == 1
    assert "/session_steps/14/step_id" in capsys.readouterr().err
    quarantine = tmp_path / "q" / "bad.jsonl"
    assert (
        main(
            [
                "convert",
                str(src),
                "--from",
                "openai-msg",
                "--to",
                "storyline",
                "-o",
                str(tmp_path / "b"),
                "--on-bad-records",
                "skip",
                "--quarantine",
                str(quarantine),
            ]
        )
        == 0
    )
    assert len(pc.into_storyline("storyline", (tmp_path / "b").read_bytes())) == 3
    [entry] = [json.loads(line) for line in quarantine.read_text().splitlines()]
    assert entry["pointer"] == "/session_steps/14/step_id" and entry["line"] == 15


def test_errors_are_clear(tmp_path, capsys):
    with pytest.raises(SystemExit, match="cannot read"):
        main(["validate", str(tmp_path / "missing.jsonl")])
    with pytest.raises(SystemExit):  # argparse refuses an unknown format and lists the known ones
        main(["convert", str(CAPTURE), "--to", "csv", "-o", "x"])
    assert "invalid choice" in capsys.readouterr().err


def test_push_uploads_parquet_and_a_card(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    with fake_hub() as fake:
        code = main(["push", str(CAPTURE), "--repo", "org/agent-sft", "--to", "sharegpt", "--token", "hf_test_token"])
    assert code == 0
    assert set(fake.files) == {"README.md", "data/train-00000-of-00001.parquet"}
    card = fake.files["README.md"].decode()
    assert "auto → to_sharegpt" in card and "train: 3" in card


# ------------------------------------------------------------------------ the golden cases of the library tests


@pytest.mark.parametrize("name", OPENAI_GOLDENS)
def test_convert_openai_msg_golden_inputs_gives_the_expected_documents(tmp_path, name):
    golden = goldens.load("openai_msg", name)
    out = tmp_path / "out.storyline.jsonl"
    assert main(["convert", str(golden.input_path), "--from", "openai-msg", "--to", "storyline", "-o", str(out)]) == 0
    first = pc.into_storyline("storyline", out.read_bytes())[0]
    if "turns" in golden.expected:
        assert first["turns"] == golden.expected["turns"]
    if "fields" in golden.expected:
        assert first["unknown_fields"]["sources"]["openai-msg"]["fields"] == golden.expected["fields"]


def test_convert_the_minimal_openai_msg_golden_gives_the_whole_expected_document(tmp_path, monkeypatch):
    """Run where the golden's document id is a relative path, as a user converts a capture folder."""
    golden = goldens.load("openai_msg", "minimal")
    monkeypatch.chdir(tmp_path)
    source = Path("captures/gw-2026-03-01.jsonl")
    source.parent.mkdir()
    source.write_bytes(golden.input_path.read_bytes())
    assert main(["convert", str(source), "--to", "storyline", "-o", "out.storyline.jsonl"]) == 0
    [story] = pc.into_storyline("storyline", Path("out.storyline.jsonl").read_bytes())
    assert {k: v for k, v in story.items() if k != "meta"} == golden.expected["document_without_meta"]


def test_convert_the_hand_written_storyline_golden_to_openai_msg_gives_the_expected_rows(tmp_path):
    export = goldens.DATA / "openai_msg" / "export"
    out = tmp_path / "rows.jsonl"
    assert main(["convert", str(export / "hand_written.storyline.json"), "--to", "openai-msg", "-o", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    for r in rows:  # synthesized arguments may be a JSON string or the value: compare the value
        for m in [*r["messages"], r["response"]]:
            for c in m.get("tool_calls") or []:
                if isinstance(c["function"]["arguments"], str):
                    c["function"]["arguments"] = json.loads(c["function"]["arguments"])
    want = (export / "hand_written.rows.jsonl").read_text(encoding="utf-8").splitlines()
    assert rows == [json.loads(line) for line in want]


@pytest.mark.parametrize(
    "name", ["ex2_parallel_tools.record.json", "ex2_parallel_tools.batch_record.json", "seed_example.record.json"]
)
def test_convert_sharegpt_golden_records_to_sharegpt_writes_them_back(tmp_path, name):
    record = goldens.DATA / "sharegpt" / name
    out = tmp_path / "out"
    assert main(["convert", str(record), "--to", "sharegpt", "-o", str(out)]) == 0
    [line] = (out / "trajectory_samples.jsonl").read_text(encoding="utf-8").splitlines()
    assert json.loads(line) == json.loads(record.read_text(encoding="utf-8"))  # completed: true
    assert (out / "failed_trajectories.jsonl").read_text(encoding="utf-8") == ""
