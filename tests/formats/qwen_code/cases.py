"""The real Qwen Code sessions of tests/data/qwen_code (provenance in its README.md) and small session builders."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[2] / "data" / "qwen_code"
HOME = DATA / "qwen-home"
FILES = sorted((HOME / "projects" / "-work" / "chats").glob("*.jsonl"))

#: Counted by hand over the raw lines (jq): lines, user / assistant / tool_result records, system records by
#: subtype, functionCall parts (each answered by one functionResponse), thought parts, the usage sums, and the
#: statuses of the results in file order.
BY_HAND = {
    "27d495d1": (13, 1, 3, 2, {"attribution_snapshot": 1, "ui_telemetry": 6}, 2, 3, 6150, 1331, ["error", "success"]),
    "85aa748a": (8, 1, 2, 1, {"attribution_snapshot": 1, "ui_telemetry": 3}, 1, 2, 4100, 1296, ["error"]),
    "a719f84a": (9, 1, 1, 0, {"attribution_snapshot": 1, "ui_telemetry": 6}, 0, 1, 2050, 129, []),
    "c190cd9d": (16, 1, 4, 3, {"attribution_snapshot": 1, "ui_telemetry": 7}, 3, 4, 8200, 1375, ["error"] * 3),
}


def lines(*records: dict) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def raw_records(path: Path) -> list:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def rec(uuid: str, parent: str | None, kind: str, **more) -> dict:
    """A chat record as the recorder writes one (the keys every record has, then ``more``)."""
    base = {"uuid": uuid, "parentUuid": parent, "sessionId": "s1", "timestamp": f"2026-08-05T18:00:0{len(uuid) % 10}Z"}
    return {**base, "type": kind, "cwd": "/w", "version": "0.21.6", **more}


def user(uuid: str, parent: str | None, text: str) -> dict:
    return rec(uuid, parent, "user", message={"role": "user", "parts": [{"text": text}]})


def model(uuid: str, parent: str | None, *parts: dict) -> dict:
    return rec(uuid, parent, "assistant", model="qwen3", message={"role": "model", "parts": list(parts)})


def call(cid: str, name: str = "read_file", **args) -> dict:
    return {"functionCall": {"id": cid, "name": name, "args": args}}


def result(uuid: str, parent: str | None, cid: str, response: dict, status: str = "success") -> dict:
    part = {"functionResponse": {"id": cid, "name": "read_file", "response": response}}
    return rec(
        uuid,
        parent,
        "tool_result",
        message={"role": "user", "parts": [part]},
        toolCallResult={"callId": cid, "status": status, "resultDisplay": "shown"},
    )
