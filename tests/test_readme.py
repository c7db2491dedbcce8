"""The README's commands and Python examples work as written."""

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pchronicle_datasets as pc

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README, re.S)


def test_python_examples_run_as_written(monkeypatch, tmp_path):
    monkeypatch.chdir(ROOT)
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    namespace: dict = {}
    for block in _python_blocks():  # later blocks use names of earlier ones, as a reader would
        exec(compile(block, "README.md", "exec"), namespace)
    assert namespace["train"].num_rows == 3
    assert pc.into_storyline("sharegpt", namespace["records"])


def test_main_command_writes_the_sharegpt_training_set(tmp_path):
    """The first README command, minus the venv setup, run with this interpreter in a scratch folder."""
    block = re.search(r"## Two commands\n.*?```bash\n(.*?)\n```", README, re.S).group(1)
    steps = block.split(" && ")[2:]  # drop: python3 -m venv .venv, pip install -e .
    assert steps
    for step in steps:
        argv = shlex.split(step)
        assert argv[0] == ".venv/bin/python"
        argv = [str(ROOT / a) if a.startswith(("pchronicle_datasets/", "loading_scripts/")) else a for a in argv[1:]]
        proc = subprocess.run([sys.executable, *argv], cwd=tmp_path, capture_output=True, text=True, check=False)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = (tmp_path / "out" / "sharegpt" / "train.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 3
    assert all(json.loads(line)["conversations"][0]["from"] == "system" for line in lines)
    assert (tmp_path / "out" / "sharegpt" / "train.parquet").exists()
