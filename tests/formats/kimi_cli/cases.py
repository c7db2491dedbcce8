"""The Kimi CLI contexts of tests/data/kimi_cli (provenance in its README.md) and small context builders."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "kimi_cli"
HOME = DATA / "kimi-home"
SESSIONS = HOME / "sessions"
WORK_DIR_HASH = "11dd9429831578384393182ae89b24ff"  # md5 of "/work/demo"
FIRST = "7884d440-3c18-45c4-af21-a614fd3e0d2d"
SECOND = "e833996a-2cca-46f4-85b8-7fe424b8c1c5"
SUBAGENT = "a5f3c2d1"
FILES = sorted(SESSIONS.rglob("context*.jsonl"))
THIRD_PARTY = sorted((DATA / "claude-code-history-viewer").rglob("context.jsonl"))

#: Counted by hand over the raw lines (a few lines of Python, as jq would): lines, _system_prompt / user /
#: assistant / tool messages, _checkpoint and _usage lines, tool calls, think parts, results whose first text
#: opens with "<system>ERROR:", by the file's path below SESSIONS/WORK_DIR_HASH.
BY_HAND = {
    f"{FIRST}/context.jsonl": (24, 1, 2, 5, 4, 2, 10, 4, 4, 1),
    f"{SECOND}/context.jsonl": (15, 1, 3, 3, 1, 2, 5, 1, 1, 0),
    f"{SECOND}/context_1.jsonl": (19, 1, 2, 4, 2, 2, 8, 2, 2, 0),
    f"{SECOND}/subagents/{SUBAGENT}/context.jsonl": (10, 1, 1, 2, 1, 1, 4, 1, 1, 0),
}


def key(path: Path) -> str:
    return str(path.relative_to(SESSIONS / WORK_DIR_HASH))


def document_id(path: Path) -> str:
    """The id a folder's load gives a file (relative to the data_dir ``sessions``)."""
    return str(path.relative_to(SESSIONS))


def raw_records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def lines(*records: dict) -> str:
    """Lines as Kimi CLI writes them: markers with ``json.dumps``, messages compact (pydantic)."""
    out = []
    for r in records:
        marker = str(r.get("role", "")).startswith("_")
        out.append(json.dumps(r) if marker else json.dumps(r, ensure_ascii=False, separators=(",", ":")))
    return "".join(x + "\n" for x in out)


def call(cid: str, name: str = "Shell", **args) -> dict:
    return {"type": "function", "id": cid, "function": {"name": name, "arguments": json.dumps(args)}}


def tool(cid: str, *texts: str) -> dict:
    parts = [{"type": "text", "text": t} for t in texts]
    return {"role": "tool", "content": parts[0]["text"] if len(parts) == 1 else parts, "tool_call_id": cid}


SYSTEM = {"role": "_system_prompt", "content": "You are Kimi CLI."}
