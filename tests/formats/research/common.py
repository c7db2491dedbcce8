"""What the research-agent format tests share: the real files and reading them the way a user does."""

from __future__ import annotations

from pathlib import Path

import orjson
from datasets import load_dataset

import pchronicle_datasets as pc

DATA = Path(__file__).resolve().parents[2] / "data"


def load_auto(paths: list[Path], cache: Path) -> list[dict]:
    """The documents of ``paths`` through ``load_dataset("pchronicle", "auto")``, by file name and order."""
    ds = load_dataset("pchronicle", "auto", data_files=[str(p) for p in paths], split="train", cache_dir=str(cache))
    return [pc.row_to_story(row) for row in ds]


def records(path: Path) -> list:
    """The source records of a file: its one JSON value, or each JSON Lines line."""
    data = path.read_bytes()
    try:
        return [orjson.loads(data)]
    except orjson.JSONDecodeError:
        return [orjson.loads(line) for line in data.splitlines() if line.strip()]


def written(text: str) -> list:
    return [orjson.loads(line) for line in text.splitlines() if line.strip()]


def calls(story: dict) -> list[tuple]:
    return [(c["tcid"], c["fn"], c["args"]) for t in story["turns"] for c in t.get("tool_calls") or ()]


def results(story: dict) -> list[tuple]:
    return [
        (r.get("source_call_id"), r.get("content"))
        for t in story["turns"]
        for r in ((t.get("observation") or {}).get("results") or ())
    ]
