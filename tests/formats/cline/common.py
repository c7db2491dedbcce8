"""The Cline histories the tests read: the committed ones (tests/data/cline/README.md) and, with
``PCHRONICLE_CLINE_CORPUS=<folder>``, every ``api_conversation_history.json`` below a folder (real histories that
cannot be committed: the checks are the same). ``by_hand`` counts what a history holds from its raw JSON, without
the reader."""

from __future__ import annotations

import os
import re
from pathlib import Path

import orjson

DATA = Path(__file__).resolve().parents[2] / "data" / "cline"
TASKS = DATA / "tasks"
TEXT_PROTOCOL = TASKS / "1777073170000" / "api_conversation_history.json"
NATIVE = TASKS / "1777080000000" / "api_conversation_history.json"
# Written independently of fields.RESULT_HEAD: "[" … "] Result:" where the part before "] Result:" is a
# description without line breaks, or "<name> for '<anything>'".
HEAD = re.compile(r"^\[(?:[^\n\[\]]+|\S+ for '.*?')\] Result:", re.S)


def histories() -> list[Path]:
    files = sorted(TASKS.glob("*/api_conversation_history.json"))
    corpus = os.environ.get("PCHRONICLE_CLINE_CORPUS")
    if corpus:
        files += sorted(Path(corpus).rglob("api_conversation_history.json"))
    return files


def by_hand(path: Path) -> dict:
    """Calls, results (native blocks, and text blocks right after the calls, in order, at most one per call),
    agent and user messages, and user messages that hold no result text and only environment details or blank
    blocks."""
    messages = orjson.loads(path.read_bytes())
    calls = native = text = 0
    context = 0
    for i, m in enumerate(messages):
        blocks = m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}]
        if m["role"] == "assistant":
            calls += sum(b.get("type") == "tool_use" for b in blocks)
            continue
        native += sum(b.get("type") == "tool_result" for b in blocks)
        previous = messages[i - 1] if i else None
        open_calls = (
            sum(b.get("type") == "tool_use" for b in previous["content"])
            if previous and previous["role"] == "assistant" and isinstance(previous["content"], list)
            else 0
        )
        results = [b for b in blocks if b.get("type") == "text" and HEAD.match(b["text"])][:open_calls]
        text += len(results)
        rest = [b["text"] for b in blocks if b.get("type") == "text" and b not in results]
        injected = ("<environment_details>", "# task_progress", "# TODO LIST UPDATE REQUIRED")
        said = [r for r in rest if r.strip()]
        if said and all(r.lstrip().startswith(injected) for r in said):
            context += 1
    return {
        "messages": len(messages),
        "assistant": sum(m["role"] == "assistant" for m in messages),
        "user": sum(m["role"] == "user" for m in messages),
        "calls": calls,
        "results": native + text,
        "text_results": text,
        "context": context,
    }
