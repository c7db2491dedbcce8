"""Speed of the Storyline hub on a realistic corpus, beside raw orjson on the same bytes.

    .venv/bin/python benchmarks/bench_hub.py            # default: 2,000 documents (~40 MB)
    .venv/bin/python benchmarks/bench_hub.py --docs 500

Each stage is timed on the same JSON Lines file (best of --repeat runs):
  orjson.loads     raw parse of every line (the anchor: what a user would otherwise do)
  into_storyline   parse + strict RFC-0001 validation (the storyline reader)
  validate         validation alone, on already parsed documents
  story_to_row     documents → dataset rows (JSON text for `any` values, derived columns)
  rows_to_table    rows → one Arrow table of STORYLINE_FEATURES
  rows_to_table×1  rows → a table of one row each (a session-log load: one file, one document, one table)
  row_to_story     Arrow rows (as datasets yields them) → documents
"""

from __future__ import annotations

import argparse
import random

import orjson
from common import best_of, text  # the scripts run from benchmarks/, which is on sys.path

from pchronicle_datasets import into_storyline, row_to_story, rows_to_table, story_to_row, validate


def make_document(rng: random.Random, i: int) -> dict:
    """A coding-agent trajectory: system + user context, then agent turns with tool calls and results."""
    turns = [
        {"id": 1, "src": "system", "msg": text(rng, 120), "copied": True},
        {"id": 2, "src": "user", "msg": text(rng, 40), "ts": "2026-07-30T12:00:00.123456Z"},
    ]
    tid = 3
    for step in range(rng.randint(8, 16)):
        calls = [
            {
                "tcid": f"call_{i}_{step}_{c}",
                "fn": rng.choice(("bash", "read_file", "write_file", "search")),
                "args": {"command": text(rng, 8), "timeout": rng.choice((30, 60.0, None))},
                "result": text(rng, rng.randint(20, 200)),
                "duration_ms": rng.randint(1, 5000),
            }
            for c in range(rng.randint(0, 2))
        ]
        turn = {
            "id": tid,
            "src": "agent",
            "msg": text(rng, rng.randint(5, 60)),
            "ts": 1753876800 + step + rng.randint(0, 999) / 1000,
            "model": "gpt-5-mini",
            "reason": text(rng, rng.randint(0, 80)),
            "metrics": {
                "prompt_tokens": rng.randint(100, 9000),
                "completion_tokens": rng.randint(5, 800),
                "cost_usd": rng.random() / 100,
            },
            "nllm": 1,
            "latency_ms": rng.randint(100, 9000),
        }
        if calls:
            turn["tool_calls"] = calls
        turns.append(turn)
        tid += 1
    return {
        "schema_version": "storyline/v1",
        "origin": {"format": "storyline", "document_id": f"bench/{i}.storyline.json"},
        "session": f"session-{i}",
        "agent": {
            "id": "bench-agent",
            "model": "gpt-5-mini",
            "tools": [
                {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
                for n in ("bash", "read_file", "write_file", "search")
            ],
        },
        "task": {"env": {"name": "swe"}, "result": {"correct": rng.random() < 0.5, "score": rng.random()}},
        "turns": turns,
        "final_metrics": {"total_prompt_tokens": rng.randint(1000, 90000)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(7)
    data = b"".join(orjson.dumps(make_document(rng, i)) + b"\n" for i in range(args.docs))
    mb = len(data) / 1e6
    lines = data.splitlines()
    stories = into_storyline("storyline", data)
    rows = [story_to_row(s, check=False) for s in stories]
    table = rows_to_table(rows)
    arrow_rows = table.to_pylist()

    stages = [
        ("orjson.loads", lambda: [orjson.loads(line) for line in lines]),
        ("into_storyline", lambda: into_storyline("storyline", data)),
        ("validate", lambda: [validate(s) for s in stories]),
        ("story_to_row", lambda: [story_to_row(s, check=False) for s in stories]),
        ("rows_to_table", lambda: rows_to_table(rows)),
        # what a session-log load does: one file is one document, so one table of one row per file
        ("rows_to_table×1", lambda: [rows_to_table([row]) for row in rows]),
        ("row_to_story", lambda: [row_to_story(r) for r in arrow_rows]),
    ]
    print(f"corpus: {args.docs} documents, {mb:.1f} MB of JSON Lines, {sum(len(s['turns']) for s in stories)} turns")
    print(f"{'stage':<16}{'seconds':>10}{'MB/s':>10}{'docs/s':>12}")
    for name, fn in stages:
        sec = best_of(fn, args.repeat)
        print(f"{name:<16}{sec:>10.3f}{mb / sec:>10.1f}{args.docs / sec:>12.0f}")


if __name__ == "__main__":
    main()
