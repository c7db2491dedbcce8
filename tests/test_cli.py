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


# --- issue 25: training outputs, policies and flags through the CLI, on the shipped real files -------------------

ATIF_GOLDENS = sorted((ROOT / "tests" / "data" / "atif").glob("harbor_golden_*.trajectory.json"))
CLAUDE = ROOT / "tests" / "data" / "claude_code" / "entire_2.0.76" / "488c5296-fc78-4fdf-8cfd-f1cae9454bd0.jsonl"


def _docs(*paths):
    return [s for p in paths for s in pc.into_storyline("auto", p.read_bytes(), document_id=str(p))]


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_inspect_counts_each_flag(capsys):
    inputs = [*ATIF_GOLDENS, CAPTURE, CLAUDE]
    want = {flag: sum(flag in pc.flags(s) for s in _docs(*inputs)) for flag in pc.training.FLAGS}
    assert want["incomplete"] and want["tool_call_unanswered"]  # the real files have flagged runs
    assert main(["inspect", "--json", *map(str, inputs)]) == 0
    assert json.loads(capsys.readouterr().out)["flags"] == want
    assert main(["inspect", *map(str, inputs)]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("documents flagged"))
    assert line == "documents flagged (pc.flags): " + ", ".join(f"{k} {v}" for k, v in want.items())


@pytest.mark.parametrize("trainable", ["all", "last", "final_answer"])
def test_convert_to_messages_and_prompt_completion_with_a_policy(tmp_path, trainable):
    inputs = [*ATIF_GOLDENS, CAPTURE]
    docs = _docs(*inputs)
    out = tmp_path / "messages.jsonl"
    args = ["convert", *map(str, inputs), "--to", "messages", "--trainable", trainable, "--mask-tool-arguments"]
    assert main([*args, "-o", str(out)]) == 0
    assert _lines(out) == [pc.to_messages(s, trainable=trainable, mask_tool_arguments=True) for s in docs]
    if trainable == "all":  # TRL trains the whole completion: "all" with results between trained turns is refused
        return
    out = tmp_path / "pc.jsonl"
    assert (
        main(["convert", *map(str, inputs), "--to", "prompt-completion", "--trainable", trainable, "-o", str(out)]) == 0
    )
    assert _lines(out) == [json.loads(json.dumps(pc.to_prompt_completion(s, trainable=trainable))) for s in docs]


def test_convert_prompt_completion_all_names_what_to_do(tmp_path, capsys):
    out = tmp_path / "pc.jsonl"
    assert main(["convert", str(CLAUDE), "--to", "prompt-completion", "--trainable", "all", "-o", str(out)]) == 1
    assert "assistant_only_loss" in capsys.readouterr().err and not out.exists()


def test_convert_sharegpt_marks_the_trained_elements(tmp_path):
    out = tmp_path / "sg"
    assert main(["convert", *map(str, ATIF_GOLDENS), "--to", "sharegpt", "--trainable", "last", "-o", str(out)]) == 0
    written = _lines(out / "trajectory_samples.jsonl") + _lines(out / "failed_trajectories.jsonl")
    want = [pc.to_sharegpt(s, trainable="last")["conversations"] for s in _docs(*ATIF_GOLDENS)]
    assert sorted(map(json.dumps, (r["conversations"] for r in written))) == sorted(map(json.dumps, want))


def test_convert_drops_flagged_documents_and_counts_them_per_flag(tmp_path, capsys):
    inputs = [*ATIF_GOLDENS, CAPTURE, CLAUDE]
    docs = _docs(*inputs)
    kept = [s for s in docs if not {"incomplete", "failed"} & set(pc.flags(s))]
    assert 0 < len(kept) < len(docs)
    out = tmp_path / "kept.jsonl"
    drop = ["--drop-flagged", "incomplete,failed"]
    assert main(["convert", *map(str, inputs), "--to", "storyline", *drop, "-o", str(out)]) == 0
    assert pc.into_storyline("storyline", out.read_bytes(), document_id="kept") == kept
    err = capsys.readouterr().err
    per = {f: sum(f in pc.flags(s) for s in docs) for f in ("incomplete", "failed")}
    assert (
        f"dropped {len(docs) - len(kept)} flagged document(s) (--drop-flagged): incomplete {per['incomplete']}, "
        f"failed {per['failed']}"
    ) in err


def test_convert_refuses_unknown_flags_and_misplaced_policies(tmp_path, capsys):
    out = str(tmp_path / "x")
    with pytest.raises(SystemExit) as exc:
        main(["convert", str(CAPTURE), "--to", "storyline", "--drop-flagged", "incomplete,broken", "-o", out])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown flag(s) broken" in err and ", ".join(pc.training.FLAGS) in err
    with pytest.raises(SystemExit, match="--to sharegpt, messages, prompt-completion"):
        main(["convert", str(CAPTURE), "--to", "storyline", "--trainable", "last", "-o", out])


def test_convert_to_llamafactorys_sharegpt_counts_its_repairs(tmp_path, capsys):
    inputs = [*ATIF_GOLDENS, CAPTURE, CLAUDE]
    out = tmp_path / "lf.jsonl"
    args = ["convert", *map(str, inputs), "--to", "sharegpt", "--dialect", "llamafactory", "--trainable", "last"]
    assert main([*args, "-o", str(out)]) == 0
    docs = _docs(*inputs)
    assert _lines(out) == [pc.to_sharegpt(s, dialect="llamafactory", trainable="last") for s in docs]
    err = capsys.readouterr().err
    assert "alternation_repaired: results merged" in err and "alternation_repaired: trailing input dropped" in err
    with pytest.raises(SystemExit, match="use it with --to sharegpt"):
        main(["convert", str(CAPTURE), "--to", "messages", "--dialect", "llamafactory", "-o", str(out)])
