"""An independent reading of a Gemini CLI session for the tests: the loader's rules written again from
``chatRecordingService.ts`` in a few lines of plain Python (no pchronicle code), so the tests can count messages,
calls, results and tokens without asking the reader."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parents[2] / "data" / "gemini_cli"
LEGACY = DATA / "entireio_attribution_session.json"
CHATS = DATA / "tmp" / "3f2a" / "chats"
MAIN = CHATS / "session-2026-10-01T09-00-a1b2c3d4.jsonl"
CHILD = CHATS / "a1b2c3d4-0000-4000-8000-000000000001" / "5e6f7a8b-0000-4000-8000-000000000009.jsonl"
FILES = [LEGACY, MAIN, CHILD]


def records(path: Path) -> list[Any]:
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        return [json.loads(text)]
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def conversation(path: Path) -> list[dict[str, Any]]:
    """The messages the CLI would show, in order (a dict keeps a replaced key's place, as a JS Map does)."""
    recs = records(path)
    if path.suffix == ".json":
        return list(recs[0]["messages"])
    messages: dict[str, dict[str, Any]] = {}
    for rec in recs:
        if isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids[ids.index(rec["$rewindTo"]) :] if rec["$rewindTo"] in ids else ids
            for mid in cut:
                del messages[mid]
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = rec
        elif isinstance(rec.get("$set"), dict) and isinstance(rec["$set"].get("messages"), list):
            messages = {m["id"]: m for m in rec["$set"]["messages"]}
    return list(messages.values())


def echoes(message: dict[str, Any]) -> bool:
    content = message.get("content")
    return (
        message.get("type") == "user"
        and isinstance(content, list)
        and bool(content)
        and all(set(p) == {"functionResponse"} for p in content)
    )


def text(message: dict[str, Any]) -> str:
    """A message's text as the CLI joins it: the content string, or its text parts joined."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    return "".join(p["text"] for p in content or () if isinstance(p, dict) and isinstance(p.get("text"), str))


def calls(path: Path) -> list[dict[str, Any]]:
    return [c for m in conversation(path) for c in m.get("toolCalls") or []]


def tokens(path: Path) -> dict[str, int]:
    total: dict[str, int] = {}
    for m in conversation(path):
        for key, n in (m.get("tokens") or {}).items():
            total[key] = total.get(key, 0) + n
    return total
