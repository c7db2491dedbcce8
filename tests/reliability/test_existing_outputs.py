"""Outputs that already exist (issue 28): an output that is one of the inputs, or a read-only file, is refused
with its path and what to do; the input is left byte for byte. The Spark engine's refusals are in
``tests/test_spark.py`` (they need a Spark session)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from pchronicle_datasets.atomic import TEMP_MARK
from pchronicle_datasets.cli import main

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "pchronicle_datasets" / "samples" / "openai_msg" / "gateway_capture.jsonl"
SHAREGPT = ROOT / "pchronicle_datasets" / "samples" / "sharegpt" / "trajectory_samples.jsonl"
TARGETS = {  # name → convert arguments after -o OUT
    "storyline": ["--to", "storyline"],
    "openai-msg": ["--to", "openai-msg"],
    "chat": ["--to", "chat"],
    "parquet": ["--to", "parquet"],
    "sharegpt": ["--to", "sharegpt"],
    "per-document": ["--to", "storyline", "--per-document"],
    "dataset": ["--to", "dataset"],
}


def _capture(folder: Path) -> Path:
    path = folder / "cap.jsonl"
    path.write_bytes(CAPTURE.read_bytes())
    return path


def _refused(capsys, argv: list[str], path: Path) -> str:
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert f"cannot write {path}" in err and "Traceback" not in err
    return err


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_the_input_as_output_is_refused_and_left_untouched(tmp_path, capsys, target):
    cap = _capture(tmp_path)
    before = cap.read_bytes()
    err = _refused(capsys, ["convert", str(cap), "-o", str(cap), *TARGETS[target]], cap)
    assert "it is the input" in err and "name another output path" in err
    assert cap.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.jsonl"]  # no temporary left either


@pytest.mark.parametrize("target", ["storyline", "parquet"])
def test_the_input_through_a_link_or_another_spelling_is_refused(tmp_path, capsys, target):
    cap = _capture(tmp_path)
    before = cap.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(cap)
    os.link(cap, tmp_path / "hard.jsonl")
    for given, out in [
        (tmp_path / "link.jsonl", cap),  # the input is a link to the output
        (cap, tmp_path / "link.jsonl"),  # the output is a link to the input
        (cap, tmp_path / "hard.jsonl"),  # the same file under another name
        (cap, tmp_path / "sub" / ".." / "cap.jsonl"),
    ]:
        _refused(capsys, ["convert", str(given), "-o", str(out), *TARGETS[target]], out)
        assert cap.read_bytes() == before


def test_an_output_read_back_from_an_input_folder_is_refused(tmp_path, capsys):
    data = tmp_path / "data"
    data.mkdir()
    _capture(data)
    out = data / "all.storyline.jsonl"
    assert main(["convert", str(data), "--to", "storyline", "-o", str(out)]) == 0  # a new file: fine
    before = out.read_bytes()
    # Again: the folder now holds the output, which would be read and replaced by its own conversion.
    err = _refused(capsys, ["convert", str(data), "--to", "storyline", "-o", str(out)], out)
    assert f"it is the input {out}" in err
    assert out.read_bytes() == before


@pytest.mark.parametrize("target", ["sharegpt", "per-document", "dataset"])
def test_a_folder_output_holding_an_input_is_refused(tmp_path, capsys, target):
    out = tmp_path / "out"
    out.mkdir()
    inside = out / "trajectory_samples.jsonl"  # a name the sharegpt output itself writes: replaceable
    inside.write_bytes(SHAREGPT.read_bytes())
    before = inside.read_bytes()
    err = _refused(capsys, ["convert", str(inside), "-o", str(out), *TARGETS[target]], out)
    assert f"it holds the input {inside}" in err
    assert inside.read_bytes() == before


@pytest.mark.parametrize("target", ["storyline", "openai-msg", "parquet"])
def test_a_read_only_output_file_is_not_replaced(tmp_path, capsys, target):
    cap = _capture(tmp_path)
    out = tmp_path / "out"
    out.write_bytes(b"kept\n")
    out.chmod(0o444)
    err = _refused(capsys, ["convert", str(cap), "-o", str(out), *TARGETS[target]], out)
    assert "read-only" in err and "make it writable or name another path" in err
    assert out.read_bytes() == b"kept\n" and stat.S_IMODE(out.stat().st_mode) == 0o444
    assert not [p for p in tmp_path.iterdir() if TEMP_MARK in p.name]
    out.chmod(0o644)  # made writable, as the message says: replaced
    assert main(["convert", str(cap), "-o", str(out), *TARGETS[target]]) == 0


def test_a_read_only_file_in_a_previous_folder_output_is_not_replaced(tmp_path, capsys):
    cap = _capture(tmp_path)
    out = tmp_path / "out"
    assert main(["convert", str(cap), "--to", "sharegpt", "-o", str(out)]) == 0
    kept = out / "trajectory_samples.jsonl"
    before = kept.read_bytes()
    kept.chmod(0o444)
    err = _refused(capsys, ["convert", str(cap), "--to", "sharegpt", "-o", str(out)], out)
    assert "trajectory_samples.jsonl in it is read-only" in err
    assert kept.read_bytes() == before


def test_the_quarantine_file_is_neither_an_input_nor_the_output(tmp_path, capsys):
    cap = _capture(tmp_path)
    before = cap.read_bytes()
    skip = ["--on-bad-records", "skip", "--quarantine"]
    _refused(capsys, ["convert", str(cap), "--to", "storyline", "-o", str(tmp_path / "o.jsonl"), *skip, str(cap)], cap)
    assert cap.read_bytes() == before
    q = tmp_path / "q.jsonl"
    err = _refused(capsys, ["convert", str(cap), "--to", "storyline", "-o", str(q), *skip, str(q)], q)
    assert "name another quarantine file" in err
    out = tmp_path / "out"  # a folder output holding the quarantine file would drop it when replaced
    _refused(
        capsys, ["convert", str(cap), "--to", "sharegpt", "-o", str(out), *skip, str(out / "q.jsonl")], out / "q.jsonl"
    )
    assert sorted(p.name for p in tmp_path.iterdir()) == ["cap.jsonl"]
