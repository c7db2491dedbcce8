"""The README's quickstart and main command work as written."""

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq

import pchronicle_datasets as pc

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_quickstart_runs_as_written(monkeypatch):
    code = re.search(r"## Quickstart\n\n```python\n(.*?)```", README, re.S).group(1)
    monkeypatch.chdir(ROOT)
    exec(compile(code, "README.md quickstart", "exec"), {})


def test_main_command_validates_and_converts_the_samples(tmp_path):
    """The first README command, minus the venv setup, run with this interpreter in a scratch folder."""
    block = re.search(r"## Two commands\n.*?```bash\n(.*?)\n```", README, re.S).group(1)
    steps = block.split(" && ")[2:]  # drop: python3 -m venv .venv, pip install -e .
    assert steps and all(s.startswith(".venv/bin/pchronicle-datasets ") for s in steps)
    for step in steps:
        argv = shlex.split(step.removeprefix(".venv/bin/pchronicle-datasets "))
        argv = [str(p) for a in argv for p in (sorted(ROOT.glob(a)) if "*" in a else [a])]
        argv = [str(ROOT / a) if a.startswith("pchronicle_datasets/") else a for a in argv]
        proc = subprocess.run(
            [sys.executable, "-m", "pchronicle_datasets", *argv], cwd=tmp_path, capture_output=True, text=True
        )
        assert proc.returncode == 0, proc.stdout + proc.stderr
    table = pq.read_table(tmp_path / "out" / "harbor_goldens.parquet")
    assert table.num_rows == 6
    assert table.schema.names == list(pc.STORYLINE_FEATURES)
    converted = (tmp_path / "out" / "gateway_capture.storyline.jsonl").read_bytes()
    sessions = pc.into_storyline("storyline", converted)
    assert [s["origin"]["format"] for s in sessions] == ["openai-msg"] * 3
