"""What ``datasets`` + ``teich`` lose on Claude Code session files, beside what ``load_dataset("pchronicle",
"claude-code")`` keeps, measured on the same files (docs/formats/claude-code.md, the last table).

Counts come from the source lines themselves (walked here, independently of both readers), then from each
reader's rows:

    python benchmarks/claude_code_teich.py [FILE_OR_FOLDER ...]     # default: tests/data/claude_code

Needs ``teich`` (the ``test`` extra); without it the teich column is skipped with a reason.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = ROOT / "tests" / "data" / "claude_code"


def session_files(args: list[str]) -> list[str]:
    """The ``.jsonl`` files given (folders: recursively), sorted; by default those of tests/data/claude_code but
    its ``.written`` files (this project's own, each written for one rule: not a file of the wild to measure)."""
    out: list[str] = []
    for arg in args or [str(DEFAULT)]:
        if os.path.isdir(arg):
            out += sorted(str(p) for p in Path(arg).rglob("*.jsonl") if args or ".written." not in p.name)
        else:
            out.append(arg)
    return out


def _lines(path: str) -> list[dict[str, Any]]:
    """The file's records: every JSON object of every line (a line that holds two, ``{…}{…}``, gives both; a line
    that is not JSON gives none)."""
    out, decoder = [], json.JSONDecoder()
    for raw in Path(path).read_bytes().split(b"\n"):
        text = raw.decode("utf-8", "replace").strip()
        while text:
            try:
                value, end = decoder.raw_decode(text)
            except ValueError:
                break
            if isinstance(value, dict):
                out.append(value)
            text = text[end:].lstrip()
    return out


def _blocks(line: dict[str, Any]) -> list[dict[str, Any]]:
    message = line.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def source_counts(paths: list[str]) -> dict[str, int]:
    """What the files hold, walked line by line."""
    c = dict(results=0, responses=0, signatures=0, is_error=0, nontext_results=0, compact_summaries=0, children=0)
    for path in paths:
        lines = _lines(path)
        c["children"] += any(line.get("isSidechain") is True and "agentId" in line for line in lines)
        ids = set()
        for line in lines:
            c["compact_summaries"] += line.get("isCompactSummary") is True
            for b in _blocks(line):
                if b.get("type") == "tool_result":
                    c["results"] += 1
                    c["is_error"] += b.get("is_error") is True
                    inner = b.get("content")
                    if isinstance(inner, list):
                        c["nontext_results"] += sum(1 for x in inner if isinstance(x, dict) and x.get("type") != "text")
                if b.get("type") == "thinking" and b.get("signature"):
                    c["signatures"] += 1
            if line.get("type") == "assistant" and isinstance(line.get("message"), dict):
                ids.add(line["message"].get("id"))
        c["responses"] += len(ids)
    return c


def teich_counts(paths: list[str]) -> dict[str, Any] | str:
    """What ``load_dataset("json", data_files=…)`` (datasets' teich path) gives, or why it cannot run."""
    try:
        import teich  # noqa: F401
    except ImportError:
        return "teich is not installed (pip install teich): the teich column is skipped"
    from datasets import load_dataset

    c: dict[str, Any] = dict(rows=0, failed_files=0, results=0, unknown_tool=0, usages=0, linked_children=0)
    c.update(compact_summary_user_turns=0, signatures=0, is_error=0, abandoned_messages_kept=0)
    try:
        rows = list(load_dataset("json", data_files=paths, split="train", cache_dir=tempfile.mkdtemp()))
    except Exception:  # one file it cannot read stops the whole load: read them one by one to count them
        rows = []
        for path in paths:
            try:
                rows += list(load_dataset("json", data_files=[path], split="train", cache_dir=tempfile.mkdtemp()))
            except Exception:
                c["failed_files"] += 1
    c["rows"] = len(rows)
    c["rows_not_traces"] = sum(1 for row in rows if not isinstance(row.get("messages"), list))
    for row in rows:
        if not isinstance(row.get("messages"), list):
            continue  # datasets did not take the file for agent traces: plain JSON rows
        text = json.dumps(row["messages"])
        c["signatures"] += text.count('"signature"')
        c["is_error"] += text.count('"is_error": true')
        c["usages"] += 1 if (row.get("metadata") or {}).get("usage") else 0
        for m in row["messages"]:
            if m.get("role") == "tool":
                c["results"] += 1
                c["unknown_tool"] += m.get("name") == "unknown_tool"
            if m.get("role") == "user" and str(m.get("content", "")).startswith("This session is being continued"):
                c["compact_summary_user_turns"] += 1
            if m.get("content") in ("First attempt", "First answer"):  # the rewind fixture's abandoned branch
                c["abandoned_messages_kept"] += 1
    return c


def pchronicle_counts(paths: list[str]) -> dict[str, Any]:
    """What ``load_dataset("pchronicle", "claude-code", data_files=…)`` gives."""
    from datasets import load_dataset

    import pchronicle_datasets as pc

    ds = load_dataset(
        "pchronicle",
        "claude-code",
        data_files=paths,
        split="train",
        cache_dir=tempfile.mkdtemp(),
        on_bad_records="skip",
    )
    c: dict[str, Any] = dict(rows=len(ds), results=0, resolved=0, usages=0, linked_children=0)
    c.update(compact_summary_user_turns=0, signatures=0, is_error=0, abandoned_messages_kept=0)
    for row in ds:
        story = pc.row_to_story(row)
        names = {call["tcid"]: call["fn"] for t in story["turns"] for call in t.get("tool_calls") or ()}
        c["linked_children"] += "parent" in story
        for turn in story["turns"]:
            c["usages"] += "metrics" in turn
            c["signatures"] += sum(1 for r in (turn.get("extra") or {}).get("reasoning", ()) if "signature" in r)
            if turn["src"] == "user" and not turn.get("copied"):
                c["compact_summary_user_turns"] += str(turn["msg"]).startswith("This session is being continued")
                c["abandoned_messages_kept"] += turn["msg"] == "First attempt"
            if turn["src"] == "agent":
                c["abandoned_messages_kept"] += turn["msg"] == "First answer"
            for res in (turn.get("observation") or {}).get("results", ()):
                c["results"] += 1
                c["resolved"] += res.get("source_call_id") in names
                c["is_error"] += res.get("is_error") is True
    return c


def main(argv: list[str]) -> int:
    paths = session_files(argv)
    report = {"files": len(paths), "source": source_counts(paths), "teich": teich_counts(paths)}
    report["pchronicle"] = pchronicle_counts(paths)
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
