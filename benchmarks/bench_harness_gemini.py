"""`load_dataset("pchronicle", "gemini-cli")` beside `load_dataset("json")` on the same Gemini CLI session files.

    .venv/bin/python benchmarks/bench_harness_gemini.py                   # ~12 MB in 24 sessions
    .venv/bin/python benchmarks/bench_harness_gemini.py --sessions 100 --turns 80

Each session is a JSONL file as Gemini CLI 0.4x-0.6x writes it (``tests/data/gemini_cli/README.md``): the metadata
record, the `$set.messages` session context, `$set` patches, gemini messages re-appended as their calls' statuses
and tokens arrive, the user record echoing the function responses, and now and then a `$rewindTo`. teich has no
Gemini reader, so `load_dataset("json")` (a row per line, nothing replayed or linked) is what the Hub path gives.
Each loader runs in a child process of its own with a fresh cache, best of 3. Reported: seconds, MB/s, rows and
peak memory.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import compile_package, load_in_child, text

TOOLS = ("read_file", "run_shell_command", "replace", "glob", "search_file_content")


def _ts(t: int) -> str:
    return f"2026-10-01T{9 + t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}.000Z"


def session(rng: random.Random, n: int, turns: int) -> str:
    sid = f"{n:08x}-0000-4000-8000-{n:012x}"
    lines: list[dict] = [
        {"sessionId": sid, "projectHash": "ab" * 32, "startTime": _ts(0), "lastUpdated": _ts(0), "kind": "main"},
        {
            "$set": {
                "messages": [{"id": "ctx", "timestamp": _ts(0), "type": "user", "content": [{"text": text(rng, 80)}]}]
            }
        },
    ]
    t = 1
    for k in range(turns):
        t += 5
        lines.append({"id": f"u{k}", "timestamp": _ts(t), "type": "user", "content": [{"text": text(rng, 30)}]})
        lines.append({"$set": {"lastUpdated": _ts(t)}})
        calls = []
        msg = {
            "id": f"g{k}",
            "timestamp": _ts(t + 1),
            "type": "gemini",
            "content": text(rng, 25),
            "thoughts": [{"subject": text(rng, 3), "description": text(rng, 40), "timestamp": _ts(t)}],
            "model": "gemini-2.5-pro",
        }
        for c in range(rng.choice((1, 1, 2, 3))):
            name = rng.choice(TOOLS)
            cid = f"{name}-{n}{k}{c}"
            ok = rng.random() > 0.1
            response = {"output": text(rng, rng.randint(40, 400))} if ok else {"error": text(rng, 20)}
            calls.append(
                {
                    "id": cid,
                    "name": name,
                    "args": {"absolute_path": f"/w/{text(rng, 1)}.py", "description": text(rng, 6)},
                    "status": "executing",
                    "timestamp": _ts(t + 1),
                    "displayName": name,
                    "description": text(rng, 8),
                    "renderOutputAsMarkdown": True,
                }
            )
            lines.append({**msg, "toolCalls": [dict(x) for x in calls]})  # re-appended as each call starts
            calls[-1].update(
                result=[{"functionResponse": {"id": cid, "name": name, "response": response}}],
                status="success" if ok else "error",
                resultDisplay=text(rng, 5),
            )
        msg["toolCalls"] = calls
        msg["tokens"] = {
            "input": rng.randint(2000, 9000),
            "output": rng.randint(10, 300),
            "cached": 1024,
            "thoughts": rng.randint(0, 200),
            "tool": 0,
            "total": 9999,
        }
        lines.append(msg)
        lines.append(
            {
                "id": f"e{k}",
                "timestamp": _ts(t + 2),
                "type": "user",
                "content": [{"functionResponse": c["result"][0]["functionResponse"]} for c in calls],
            }
        )
        lines.append(
            {
                "id": f"a{k}",
                "timestamp": _ts(t + 3),
                "type": "gemini",
                "content": text(rng, 40),
                "thoughts": [],
                "tokens": {"input": 9000, "output": 40, "cached": 0, "thoughts": 0, "tool": 0, "total": 9040},
                "model": "gemini-2.5-pro",
            }
        )
        if rng.random() < 0.05:
            lines.append({"$rewindTo": f"a{k}"})
    return "".join(json.dumps(line) + "\n" for line in lines)


def run(mode: str, files: list[Path], work: Path, k: int) -> dict:
    cache = work / f"cache-{mode}-{k}"
    return load_in_child("json" if mode == "json" else "gemini-cli", files, cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sessions", type=int, default=24)
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    rng = random.Random(22)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        chats = work / "tmp" / "project" / "chats"
        chats.mkdir(parents=True)
        files = []
        for n in range(args.sessions):
            path = chats / f"session-2026-10-01T09-00-{n:08x}.jsonl"
            path.write_text(session(rng, n, args.turns), encoding="utf-8")
            files.append(path)
        mb = sum(p.stat().st_size for p in files) / 1e6
        lines = sum(p.read_text(encoding="utf-8").count("\n") for p in files)
        print(
            f"{args.sessions} Gemini CLI sessions, {lines:,} lines, {mb:.1f} MB; "
            f"fresh cache each, best of {args.repeat}"
        )
        print()
        print("| loader | seconds | MB/s | rows | peak MB |")
        print("|---|---|---|---|---|")
        for mode, label in (
            ("json", 'load_dataset("json")'),
            ("pchronicle", 'load_dataset("pchronicle", "gemini-cli")'),
        ):
            runs = [run(mode, files, work, k) for k in range(args.repeat)]
            best = min(runs, key=lambda r: r["seconds"])
            print(
                f"| {label} | {best['seconds']:.2f} | {mb / best['seconds']:.1f} | {best['rows']:,} "
                f"| {best['peak_mb']:.0f} |"
            )
        print()
        print("json: one row per line (metadata, $set, $rewindTo, every version of a message); pchronicle: one row per")
        print("session, the conversation replayed, results on their calls, tokens once per message.")


if __name__ == "__main__":
    main()
