"""Reading speed of the openai-msg reader on realistic gateway captures, beside raw orjson.

    .venv/bin/python benchmarks/bench_openai_msg.py                 # ~60 MB of JSON Lines
    .venv/bin/python benchmarks/bench_openai_msg.py --sessions 50   # smaller

The corpus is what a gateway writes: one row per LLM call, each row's `messages` the whole history so
far (system prompt, user task, assistant turns with tool calls and reasoning, tool results), `response`
the new assistant message, `meta_json` a JSON-encoded string with token counts and latencies. Reported:
MB/s of `into_storyline("openai-msg", …)` (parse + history-copy detection + mapping + validation) and of
raw `orjson.loads` on every line of the same file (the anchor: a parse with no mapping at all).
"""

from __future__ import annotations

import argparse
import random

import orjson
from common import best_of, text  # the scripts run from benchmarks/, which is on sys.path

from pchronicle_datasets import into_storyline


def session_rows(rng: random.Random, s: int, steps: int) -> list[dict]:
    history = [
        {"role": "system", "content": text(rng, 300)},
        {"role": "user", "content": text(rng, 60)},
    ]
    rows = []
    for step in range(1, steps + 1):
        calls = [
            {
                "id": f"call_{s}_{step}_{c}",
                "type": "function",
                "function": {
                    "name": rng.choice(("bash", "read_file", "write_file")),
                    "arguments": orjson.dumps({"command": text(rng, 10), "timeout": 60}).decode(),
                },
            }
            for c in range(rng.randint(0, 2))
        ]
        response = {
            "role": "assistant",
            "content": text(rng, rng.randint(10, 80)),
            "reasoning_content": text(rng, rng.randint(20, 120)),
        }
        if calls:
            response["tool_calls"] = calls
        meta = {
            "source": "bench-agent",
            "env_state": {
                "prompt_tokens": rng.randint(1000, 90000),
                "completion_tokens": rng.randint(10, 900),
                "total_latency_ms": rng.randint(200, 20000),
                "ttft_ms": rng.randint(50, 2000),
                "finish_reason": "tool_calls" if calls else "stop",
                "status_code": 200,
                "request_id": f"req-{s}-{step}",
            },
        }
        rows.append(
            {
                "session_id": f"sess-{s}",
                "step_id": step,
                "run_id": "bench-run",
                "agent_model": "gpt-5-mini",
                "created_at": f"2026-11-30T12:{step // 60 % 60:02d}:{step % 60:02d}Z",
                "env_name": "swe-bench",
                "messages": list(history),
                "response": response,
                "meta_json": orjson.dumps(meta).decode(),
            }
        )
        history = [*history, {k: v for k, v in response.items() if k != "reasoning_content"}]
        for call in calls:
            history.append({"role": "tool", "tool_call_id": call["id"], "content": text(rng, rng.randint(20, 300))})
        if rng.random() < 0.2:
            history.append({"role": "user", "content": text(rng, 20)})
    return rows


def make_corpus(sessions: int, seed: int = 11) -> bytes:
    rng = random.Random(seed)
    out = []
    for s in range(sessions):
        for row in session_rows(rng, s, rng.randint(8, 24)):
            out.append(orjson.dumps(row))
    return b"\n".join(out) + b"\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    data = make_corpus(args.sessions)
    mb = len(data) / 1e6
    lines = data.splitlines()
    stories = into_storyline("openai-msg", data, document_id="bench.jsonl")
    raw = best_of(lambda: [orjson.loads(line) for line in lines], args.repeat)
    ours = best_of(lambda: into_storyline("openai-msg", data, document_id="bench.jsonl"), args.repeat)
    print(
        f"corpus: {args.sessions} sessions, {len(lines)} rows, {mb:.1f} MB, "
        f"{sum(len(s['turns']) for s in stories)} turns"
    )
    print(f"{'reader':<34}{'seconds':>9}{'MB/s':>9}")
    print(f"{'orjson.loads per line (anchor)':<34}{raw:>9.3f}{mb / raw:>9.1f}")
    print(f"{'into_storyline(openai-msg)':<34}{ours:>9.3f}{mb / ours:>9.1f}")
    print(f"ratio: {ours / raw:.1f}x the raw parse; target >= 30 MB/s: {'met' if mb / ours >= 30 else 'NOT met'}")


if __name__ == "__main__":
    main()
