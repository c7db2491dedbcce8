"""Speed of redaction on the path `push` runs (each document redacted as it is read), beside reading.

    .venv/bin/python benchmarks/bench_redact.py            # default: 500 documents (~9 MB)
    .venv/bin/python benchmarks/bench_redact.py --docs 200

The corpus is bench_hub.py's coding-agent trajectories, with secrets, e-mail addresses and home folder
paths planted in one tool result in ten (so some strings have something to replace). Stages, best of
--repeat runs:
  into_storyline   parse + validate every document (the anchor: what push does anyway)
  Redactor.story   redaction of every document (every string, then validation of the result)
  Redactor.row     redaction of dataset rows (row → document → redacted → row), push_to_hub's pass
"""

from __future__ import annotations

import argparse
import random

import orjson
from bench_hub import make_document
from common import best_of

from pchronicle_datasets import Redactor, into_storyline, story_to_row

PLANTS = (
    "export GITHUB_TOKEN=ghp_{tok}\n",
    "mail ann.lee@acme-corp.io about /home/annlee/project\n",
    "postgres://app:Pw{tok}@db.internal/app\n",
)


def corpus(n: int) -> bytes:
    rng = random.Random(7)
    lines = []
    for i in range(n):
        doc = make_document(rng, i)
        if i % 10 == 0:
            tok = "".join(
                rng.choice("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") for _ in range(36)
            )
            call = next(t for t in doc["turns"] if t.get("tool_calls"))["tool_calls"][0]
            call["result"] = "".join(p.format(tok=tok) for p in PLANTS) + str(call.get("result"))
        lines.append(orjson.dumps(doc))
    return b"\n".join(lines) + b"\n"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    data = corpus(args.docs)
    stories = into_storyline("storyline", data, document_id="bench.jsonl")
    rows = [story_to_row(s) for s in stories]
    mb = len(data) / 1e6
    stages = {
        "into_storyline": lambda: into_storyline("storyline", data, document_id="bench.jsonl"),
        "Redactor.story": lambda: [r.story(s) for r in [Redactor(key="k")] for s in stories],
        "Redactor.row": lambda: [r.row(row) for r in [Redactor(key="k")] for row in rows],
    }
    print(f"{args.docs} documents, {mb:.1f} MB, best of {args.repeat}")
    print("| stage | seconds | MB/s | docs/s |\n|---|---|---|---|")
    for name, fn in stages.items():
        t = best_of(fn, args.repeat)
        print(f"| {name} | {t:.2f} | {mb / t:.1f} | {args.docs / t:.0f} |")
    r = Redactor(key="k")
    for s in stories:
        r.story(s)
    print(f"redacted: {r.report.by_rule()}")


if __name__ == "__main__":
    main()
