"""The Kimi Code journals of tests/data/kimi_code (provenance in its README.md) and small journal builders."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "kimi_code"
HOME = DATA / "kimi-code-home"
SESSIONS = HOME / "sessions"
WORK_DIR = "wd_project_ac3bb318f98e"
TOOLS = "session_1bcbe023-4f7e-4971-9dc9-43b8756045b0"  # agent-sessions' assistant_tools.jsonl and its subagent
SMALL = "session_9eb1bf57-c1af-48a5-b658-0e8d9fe794f5"  # agent-sessions' small.jsonl
SUBAGENT = "agent-0"
FILES = sorted(SESSIONS.rglob("wire.jsonl"))
VIS = DATA / "vis-fixtures" / "sessions"  # Kimi Code's own viewer fixtures (protocol 1.1)
VIS_FILES = sorted(VIS.rglob("wire.jsonl"))

#: Counted by hand over the raw lines (a few lines of Python, as jq would), by the file's path below
#: SESSIONS/WORK_DIR: lines, system prompts (distinct ``systemPrompt`` values), the user's messages (origin
#: ``user`` or a subagent's task), the CLI's messages (other origins), compactions, model steps with a part or a
#: call (distinct ``stepUuid``), ``tool.call``, ``tool.result``, ``think`` parts, results with ``isError``.
BY_HAND = {
    f"{TOOLS}/agents/{SUBAGENT}/wire.jsonl": (28, 1, 1, 0, 0, 3, 2, 2, 3, 0),
    f"{TOOLS}/agents/main/wire.jsonl": (200, 1, 8, 5, 1, 22, 19, 19, 22, 1),
    f"{SMALL}/agents/main/wire.jsonl": (36, 1, 3, 0, 0, 0, 0, 0, 0, 0),
}


def key(path: Path) -> str:
    return str(path.relative_to(SESSIONS / WORK_DIR))


def document_id(path: Path) -> str:
    """The id a folder's load gives a file (relative to the data_dir ``sessions``)."""
    return str(path.relative_to(SESSIONS))


def raw_records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def lines(*records: dict) -> str:
    """Lines as Kimi Code writes them (compact JSON, UTF-8)."""
    return "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in records)


META = {"type": "metadata", "protocol_version": "1.4", "created_at": 1785612803281}
SYSTEM = {"type": "config.update", "profileName": "agent", "systemPrompt": "You are Kimi Code CLI.", "time": 1}


def user(text: str, origin: dict | None = None, time: int = 2) -> dict:
    message = {"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": []}
    message["origin"] = {"kind": "user"} if origin is None else origin
    return {"type": "context.append_message", "message": message, "time": time}


def event(time: int = 3, **body) -> dict:
    return {"type": "context.append_loop_event", "event": body, "time": time}


def step(uuid: str, *parts: dict, calls: tuple = (), results: tuple = ()) -> list[dict]:
    """One model step: step.begin, its content parts, its calls, their results, step.end with a usage."""
    out = [event(type="step.begin", uuid=uuid, turnId="0", step=1)]
    out += [event(type="content.part", stepUuid=uuid, part=p) for p in parts]
    out += [event(type="tool.call", stepUuid=uuid, toolCallId=c, name=n, args=a) for c, n, a in calls]
    out += [event(type="tool.result", toolCallId=c, result=r) for c, r in results]
    usage = {"inputOther": 10, "output": 5, "inputCacheRead": 100, "inputCacheCreation": 0}
    out.append(event(type="step.end", uuid=uuid, turnId="0", step=1, usage=usage, finishReason="end_turn"))
    return out


def text(t: str) -> dict:
    return {"type": "text", "text": t}


def think(t: str) -> dict:
    return {"type": "think", "think": t}
