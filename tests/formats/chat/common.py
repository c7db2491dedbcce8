"""What the chat tests share: the golden data folder and reading a source file's records as JSON values."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

DATA = Path(__file__).resolve().parents[2] / "data" / "chat"
CORPUS = DATA / "corpus"


def source_records(path: Path) -> list[Any]:
    """The records of a chat source file as the writer gives them back (one per conversation)."""
    data = path.read_bytes()
    if path.suffix == ".jsonl":
        return [orjson.loads(line) for line in data.split(b"\n") if line.strip()]
    value = orjson.loads(data)
    if isinstance(value, list) and value and all(isinstance(v, dict) and "role" not in v for v in value):
        return value
    return [value]


def written_records(text: str) -> list[Any]:
    return [orjson.loads(line) for line in text.split("\n") if line]  # not splitlines: U+0085 is not a line end
