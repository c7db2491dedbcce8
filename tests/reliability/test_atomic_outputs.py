"""Outputs are atomic (issue 14): complete or absent at the final path, whatever stops the run."""

from __future__ import annotations

import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import atomic, cli
from pchronicle_datasets.atomic import TEMP_MARK, AtomicOutput, OutputError
from pchronicle_datasets.cli import main

ROOT = Path(__file__).resolve().parents[2]
CAPTURE = ROOT / "pchronicle_datasets" / "samples" / "openai_msg" / "gateway_capture.jsonl"
TARGETS = {  # name → convert arguments after -o OUT
    "storyline": ["--to", "storyline"],
    "openai-msg": ["--to", "openai-msg"],
    "parquet": ["--to", "parquet"],
    "sharegpt": ["--to", "sharegpt"],
    "per-document": ["--to", "storyline", "--per-document"],
    "dataset": ["--to", "dataset"],
}


def story(i: int, text: str = "hello") -> dict:
    return {
        "schema_version": "storyline/v1",
        "session": f"session-{i}",
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": text}, {"id": 2, "src": "agent", "msg": text}],
    }


def write_corpus(path: Path, n: int, text: str = "hello") -> Path:
    path.write_text("".join(json.dumps(story(i, text)) + "\n" for i in range(n)), encoding="utf-8")
    return path


def leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if TEMP_MARK in p.name or "pchronicle-old" in p.name)


# ----------------------------------------------------------------------------------------- write errors


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_a_write_error_names_the_path_exits_1_and_leaves_nothing(tmp_path, monkeypatch, capsys, target):
    out = tmp_path / "out" / "result"

    def full_disk(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    real_open = Path.open

    def open_to_read_only(self, mode="r", *args, **kwargs):
        if set(mode) & set("wax+"):
            full_disk()
        return real_open(self, mode, *args, **kwargs)

    # The write boundary of every target: text files (also those a streaming writer opens: the output, its
    # scratch files), Parquet, and datasets' Arrow files.
    monkeypatch.setattr(Path, "write_text", full_disk)
    monkeypatch.setattr(Path, "open", open_to_read_only)
    monkeypatch.setattr(cli.pq, "write_table", full_disk)
    import datasets

    monkeypatch.setattr(datasets.Dataset, "save_to_disk", full_disk)
    assert main(["convert", str(CAPTURE), "-o", str(out), *TARGETS[target]]) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out}: No space left on device" in err
    assert "Traceback" not in err
    assert list((tmp_path / "out").iterdir()) == []  # no output, no temporary


def _mount_tmpfs(folder: Path, options: str) -> bool:
    if os.geteuid() != 0 or not shutil.which("mount"):
        return False
    folder.mkdir()
    return (
        subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True).returncode
        == 0
    )


def test_a_full_disk_is_a_clear_error_with_nothing_left(tmp_path):
    disk = tmp_path / "small"
    if not _mount_tmpfs(disk, "size=256k"):
        pytest.skip("mounting a small tmpfs needs root")
    try:
        src = write_corpus(tmp_path / "in.storyline.jsonl", 3000)  # about 600 kB of output
        for target in ("storyline", "per-document"):
            proc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "pchronicle_datasets",
                    "convert",
                    str(src),
                    "-o",
                    str(disk / "out"),
                    *TARGETS[target],
                ],
                capture_output=True,
                text=True,
                cwd=ROOT,
            )
            assert proc.returncode == 1, proc.stderr
            assert f"cannot write {disk / 'out'}: No space left on device" in proc.stderr
            assert "Traceback" not in proc.stderr
            assert list(disk.iterdir()) == []
    finally:
        subprocess.run(["umount", str(disk)], check=False)


def test_a_read_only_output_folder_fails_before_any_input_is_read(tmp_path, monkeypatch, capsys):
    ro = tmp_path / "ro"
    if os.geteuid() == 0:
        if not _mount_tmpfs(ro, "ro,size=64k"):
            pytest.skip("a read-only folder for root needs a read-only mount")
    else:
        ro.mkdir()
        ro.chmod(0o500)
    read = []
    monkeypatch.setattr(cli, "_read", lambda path: read.append(path) or CAPTURE.read_bytes())
    try:
        for target in sorted(TARGETS):
            assert main(["convert", str(CAPTURE), "-o", str(ro / "out"), *TARGETS[target]]) == 1
            assert f"cannot write {ro / 'out'}" in capsys.readouterr().err
        assert read == []  # refused before reading anything
    finally:
        if os.geteuid() == 0:
            subprocess.run(["umount", str(ro)], check=False)
        else:
            ro.chmod(0o700)


def test_a_failing_conversion_leaves_the_previous_output_untouched(tmp_path, capsys):
    out = tmp_path / "all.jsonl"
    out.write_text("previous\n")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(CAPTURE.read_text() + "{not json\n")
    assert main(["convert", str(bad), "--to", "storyline", "-o", str(out)]) == 1
    assert out.read_text() == "previous\n" and leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------------- signals


def _convert_process(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pchronicle_datasets", "convert", *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _wait_for(predicate, proc: subprocess.Popen, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert proc.poll() is None, f"the conversion ended before it could be killed: {proc.stderr.read()!r}"
        assert time.monotonic() < deadline, "the conversion never reached the point to kill it"
        time.sleep(0.005)


@pytest.fixture(scope="module")
def large_input(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("large")
    return write_corpus(folder / "large.storyline.jsonl", 12000, text="y" * 2000)  # about 50 MB


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_killed_mid_convert_leaves_nothing_at_the_final_path(tmp_path, large_input, sig):
    out = tmp_path / "all.storyline.jsonl"
    proc = _convert_process([str(large_input), "--to", "openai-msg", "-o", str(out)])
    _wait_for(lambda: leftovers(tmp_path), proc)  # the temporary exists: the run is under way
    proc.send_signal(sig)
    code = proc.wait(60)
    assert code == (128 + sig if sig == signal.SIGTERM else -sig)
    assert not out.exists()
    if sig == signal.SIGTERM:
        assert leftovers(tmp_path) == []  # SIGTERM runs the cleanup; SIGKILL can leave only the hidden temporary


@pytest.mark.parametrize("target", ["storyline", "per-document"])
def test_a_stop_while_the_temporary_is_created_leaves_nothing(tmp_path, monkeypatch, target):
    # CI once caught SIGTERM landing right as the temporary appeared: the CLI's handler raised SystemExit before
    # the ``with`` block had begun, and the temporary stayed. Each window, made certain here: the stop lands
    # before the temporary exists, right after it is created, and after the output is made but before its block.
    real_create, real_output = atomic._create, cli._output

    def stop_before(path, folder):
        raise SystemExit(128 + signal.SIGTERM)

    def stop_after(path, folder):
        real_create(path, folder)
        raise SystemExit(128 + signal.SIGTERM)

    def made_then_stopped(args):
        real_output(args)
        raise SystemExit(128 + signal.SIGTERM)

    for module, name, patch in ((atomic, "_create", stop_before), (atomic, "_create", stop_after),
                                (cli, "_output", made_then_stopped)):  # fmt: skip
        with monkeypatch.context() as mp:
            mp.setattr(module, name, patch)
            with pytest.raises(SystemExit) as stop:
                main(["convert", str(CAPTURE), "-o", str(tmp_path / "out"), *TARGETS[target]])
        assert stop.value.code == 128 + signal.SIGTERM
        assert list(tmp_path.iterdir()) == [], patch.__name__


def test_sigterm_mid_per_document_leaves_no_folder(tmp_path, large_input):
    out = tmp_path / "sessions"
    proc = _convert_process([str(large_input), "--to", "storyline", "--per-document", "-o", str(out)])

    def some_files_written() -> bool:
        temps = [p for p in tmp_path.iterdir() if TEMP_MARK in p.name]
        return bool(temps) and any(temps[0].iterdir())

    _wait_for(some_files_written, proc)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(60) == 128 + signal.SIGTERM
    assert not out.exists() and leftovers(tmp_path) == []


def test_a_complete_run_replaces_the_previous_output_folder_whole(tmp_path):
    out = tmp_path / "sessions"
    first = write_corpus(tmp_path / "first.jsonl", 5)
    assert main(["convert", str(first), "--to", "storyline", "--per-document", "-o", str(out)]) == 0
    assert len(list(out.iterdir())) == 5
    second = write_corpus(tmp_path / "second.jsonl", 2)
    assert main(["convert", str(second), "--to", "storyline", "--per-document", "-o", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["session-0.storyline.json", "session-1.storyline.json"]
    assert leftovers(tmp_path) == []


def test_a_folder_holding_other_files_is_not_replaced(tmp_path, capsys):
    out = tmp_path / "train"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert main(["convert", str(CAPTURE), "--to", "sharegpt", "-o", str(out)]) == 1
    assert "'notes.txt', which this output does not write" in capsys.readouterr().err
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt"] and leftovers(tmp_path) == []


# ------------------------------------------------------------------------------------------ symlinks


@pytest.mark.parametrize(
    ("target", "planted"),
    [
        ("sharegpt", "trajectory_samples.jsonl"),
        ("dataset", "dataset_info.json"),
        ("dataset", "data-00000-of-00001.arrow"),
    ],
)
def test_a_planted_symlink_is_never_written_through(tmp_path, capsys, target, planted):
    victim = tmp_path / "elsewhere" / "precious.txt"
    victim.parent.mkdir()
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    (out / planted).symlink_to(victim)
    assert main(["convert", str(CAPTURE), "-o", str(out), *TARGETS[target]]) == 1
    assert f"{planted} in it is a symbolic link" in capsys.readouterr().err
    assert victim.read_text() == "precious"
    assert (out / planted).is_symlink() and leftovers(tmp_path) == []


def test_a_symlink_at_a_file_output_is_replaced_not_followed(tmp_path):
    victim = tmp_path / "precious.txt"
    victim.write_text("precious")
    out = tmp_path / "all.jsonl"
    out.symlink_to(victim)
    assert main(["convert", str(CAPTURE), "--to", "storyline", "-o", str(out)]) == 0
    assert victim.read_text() == "precious"
    assert not out.is_symlink() and len(pc.into_storyline("storyline", out.read_bytes())) == 3


def test_atomic_output_refuses_the_wrong_kind_of_target(tmp_path):
    (tmp_path / "d").mkdir()
    with pytest.raises(OutputError, match="it is a folder"):
        AtomicOutput(tmp_path / "d")
    (tmp_path / "f").write_text("x")
    with pytest.raises(OutputError, match="not a folder"):
        AtomicOutput(tmp_path / "f", folder=True)
    with pytest.raises(KeyError), AtomicOutput(tmp_path / "g", folder=True) as tmp:
        (tmp / "x").write_text("x")
        raise KeyError("stop")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "f"]


# ----------------------------------------------------------------------------------------------- push


@pytest.mark.parametrize("stop", [RuntimeError("network down"), SystemExit(143), KeyboardInterrupt()])
def test_push_cleans_its_staged_folder_on_every_exit_path(tmp_path, monkeypatch, stop):
    from huggingface_hub import HfApi

    staging = tmp_path / "tmp"
    staging.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(staging))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(HfApi, "create_repo", lambda self, *a, **k: None)
    seen = []

    def upload_folder(self, *, folder_path, **kwargs):
        seen.append(sorted(p.name for p in Path(folder_path).iterdir()))
        raise stop

    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    with pytest.raises(type(stop)):
        main(["push", str(CAPTURE), "--repo", "org/x", "--token", "hf_test"])
    assert seen == [["README.md", "data"]]  # it was staged, then removed
    assert list(staging.iterdir()) == []
