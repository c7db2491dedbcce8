"""`load_dataset("pchronicle", "chat")` against `load_dataset("json")` on the same JSONL of whole conversations.

    .venv/bin/python benchmarks/bench_chat.py                      # ~40 MB in 8 files
    .venv/bin/python benchmarks/bench_chat.py --conversations 500 --files 4

Both loaders read the same files (one conversation per line: system prompt, user turns, assistant turns with
reasoning and parallel tool calls whose arguments are JSON strings, tool results, the `tools` offered), each
with a fresh cache in a child process of its own. Reported: seconds, MB/s, rows, peak memory and the ratio;
target: pchronicle (which validates every document) at least as fast as json (which validates nothing).
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

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": name,
            "description": f"{name} tool",
            "parameters": {"type": "object", "properties": {"arg": {"type": "string"}}, "required": ["arg"]},
        },
    }
    for name in ("terminal", "read_file", "write_file", "search")
]


def conversation(rng: random.Random, n: int) -> dict:
    messages = [{"role": "system", "content": text(rng, 200)}]
    call = 0
    for _ in range(rng.randint(2, 6)):
        messages.append({"role": "user", "content": text(rng, rng.randint(10, 60))})
        for _ in range(rng.randint(1, 5)):
            calls = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                call += 1
                args = {"arg": text(rng, rng.randint(2, 12)), "n": rng.randint(0, 100)}
                calls.append(
                    {
                        "id": f"call_{n}_{call}",
                        "type": "function",
                        "function": {"name": rng.choice(TOOLS)["function"]["name"], "arguments": json.dumps(args)},
                    }
                )
            messages.append(
                {
                    "role": "assistant",
                    "content": text(rng, rng.randint(5, 40)),
                    "reasoning_content": text(rng, rng.randint(10, 80)),
                    "tool_calls": calls,
                }
            )
            for c in rng.sample(calls, len(calls)):
                messages.append({"role": "tool", "tool_call_id": c["id"], "content": text(rng, rng.randint(20, 300))})
        messages.append({"role": "assistant", "content": text(rng, rng.randint(10, 60))})
    return {"id": f"conv-{n}", "model": "gpt-4o", "messages": messages, "tools": TOOLS}


def make_corpus(conversations: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return b"".join(json.dumps(conversation(rng, seed * 100000 + i)).encode() + b"\n" for i in range(conversations))


def run(mode: str, files: list[str], cache: str) -> dict:
    return load_in_child("json" if mode == "json" else "chat", files, cache)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--conversations", type=int, default=250, help="conversations per file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per loader, each with a fresh cache; best kept")
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for i in range(args.files):
            path = root / f"chat-{i:03d}.jsonl"
            path.write_bytes(make_corpus(args.conversations, seed=1 + i))
            files.append(str(path))
        mb = sum(Path(f).stat().st_size for f in files) / 1e6
        results = {}
        for mode in ("json", "pchronicle"):
            runs = [run(mode, files, str(root / f"cache-{mode}-{i}")) for i in range(args.repeat)]
            results[mode] = min(runs, key=lambda r: r["seconds"])
        print(f"corpus: {args.files} files, {mb:.1f} MB of JSON Lines, {args.files * args.conversations} conversations")
        print(f"{'loader':<34}{'seconds':>9}{'MB/s':>8}{'rows':>8}{'peak MB':>9}")
        for mode, label in (("json", "load_dataset(json)"), ("pchronicle", "load_dataset(pchronicle, chat)")):
            r = results[mode]
            print(f"{label:<34}{r['seconds']:>9.2f}{mb / r['seconds']:>8.1f}{r['rows']:>8}{r['peak_mb']:>9.0f}")
        ratio = results["pchronicle"]["seconds"] / results["json"]["seconds"]
        print(f"ratio pchronicle/json: {ratio:.2f} (target <= 1: {'met' if ratio <= 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
