"""`to_sharegpt` against the reference agent's own converter, on the same trajectories.

The reference (hermes-agent's `convert_to_trajectory_format`) is not a dependency of this project: install
it in a separate environment and point the benchmark at that interpreter:

    python3 -m venv /tmp/hermes && /tmp/hermes/bin/pip install hermes-agent==0.19.0
    .venv/bin/python benchmarks/bench_sharegpt.py --reference-python /tmp/hermes/bin/python

Both sides convert the same generated agent trajectories (system + user task, assistant turns with native
reasoning, parallel tool calls with JSON-string arguments, tool results, some JSON): the reference from
its OpenAI message lists, `to_sharegpt` from the Storyline documents of the same conversations (and from
dataset rows, which adds decoding the row's JSON text). The outputs (of documents and of rows) are compared
byte for byte with the reference's.

Each side builds its corpus first and then leaves it out of Python's cyclic garbage collector
(``gc.freeze()``): this process holds the corpus three times (messages, documents, rows), the reference's once,
and a full collection walks every live object, so without it a run measures the size of the benchmark's own
corpus as much as the converter (a collection that happens to fall in a timed run cost this side 0.4 s).
``to_messages`` is timed on the same documents and rows, for reference (it has no reference converter here).
"""

from __future__ import annotations

import argparse
import gc
import json
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from common import best_of, text  # the scripts run from benchmarks/, which is on sys.path

import pchronicle_datasets as pc

# CPU seconds of the converting process, on both sides: the machines this runs on share their cores, and a
# conversion (one thread, no I/O) costs its CPU time; the wall clock adds the time spent waiting for a core.
CLOCK = time.process_time

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": n,
            "description": f"{n} tool",
            "parameters": {"type": "object", "properties": {"arg": {"type": "string"}}, "required": ["arg"]},
        },
    }
    for n in ("terminal", "read_file", "write_file", "web_search")
]

REFERENCE_SNIPPET = r"""
import gc, json, sys, time
from agent.agent_runtime_helpers import convert_to_trajectory_format
from agent.system_prompt import format_tools_for_system_message

class Agent:
    def __init__(self, tools):
        self.tools = tools
    def _format_tools_for_system_message(self):
        return format_tools_for_system_message(self)

corpus = json.load(open(sys.argv[1]))
agent = Agent(corpus["tools"])
gc.collect()
gc.freeze()  # as on the other side: the corpus is left out of the collector
best = float("inf")
for _ in range(int(sys.argv[3])):
    start = time.process_time()
    out = [convert_to_trajectory_format(agent, t, t[0]["content"], True) for t in corpus["trajectories"]]
    best = min(best, time.process_time() - start)
json.dump({"seconds": best, "outputs": out}, open(sys.argv[2], "w"), ensure_ascii=False)
"""


def trajectory(rng: random.Random, i: int) -> list[dict]:
    """OpenAI messages as the agent keeps them (reasoning in the internal `reasoning` field)."""
    messages: list[dict] = [{"role": "user", "content": text(rng, 30)}]
    for step in range(rng.randint(4, 12)):
        calls = [
            {
                "id": f"call_{i}_{step}_{c}",
                "type": "function",
                "function": {
                    "name": rng.choice(TOOLS)["function"]["name"],
                    "arguments": json.dumps({"arg": text(rng, 6)}),
                },
            }
            for c in range(rng.randint(0, 3))
        ]
        msg: dict = {
            "role": "assistant",
            "content": text(rng, rng.randint(0 if calls else 1, 40)),
            "reasoning": text(rng, rng.randint(0, 60)),
        }
        if calls:
            msg["tool_calls"] = calls
        messages.append(msg)
        for call in calls:
            content = (
                json.dumps({"output": text(rng, 30), "error": None})
                if rng.random() < 0.5
                else text(rng, rng.randint(5, 120))
            )
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": content})
    messages.append({"role": "assistant", "content": text(rng, 20), "reasoning": text(rng, 10)})
    return messages


def to_story(messages: list[dict], i: int) -> dict:
    """The same conversation as a Storyline document, through the openai-msg reader (one row per call)."""
    rows, step = [], 0
    for k, msg in enumerate(messages):
        if msg["role"] == "assistant":
            step += 1
            rows.append({"session_id": f"s{i}", "step_id": step, "messages": messages[:k], "response": msg})
    [story] = pc.into_storyline("openai-msg", orjson.dumps(rows))
    story["agent"]["tools"] = TOOLS
    return story


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference-python", help="interpreter with hermes-agent installed")
    args = parser.parse_args()
    rng = random.Random(5)
    trajectories = [trajectory(rng, i) for i in range(args.trajectories)]
    stories = [to_story(t, i) for i, t in enumerate(trajectories)]
    rows = pc.rows_to_table(pc.story_to_row(s) for s in stories).to_pylist()
    gc.collect()
    gc.freeze()  # see the module docs: the corpus is left out of the collector, on both sides

    runs = {
        "to_sharegpt (Storyline documents)": lambda: [pc.to_sharegpt(s) for s in stories],
        "to_sharegpt (dataset rows, JSON text decoded)": lambda: [pc.to_sharegpt(r) for r in rows],
        "to_messages (Storyline documents)": lambda: [pc.to_messages(s) for s in stories],
        "to_messages (dataset rows, JSON text decoded)": lambda: [pc.to_messages(r) for r in rows],
    }
    timed = {label: best_of(run, args.repeat, CLOCK) for label, run in runs.items()}
    print(f"{args.trajectories} trajectories, {sum(len(t) for t in trajectories)} messages")
    print(f"{'converter':<48}{'seconds':>9}{'traj/s':>10}")
    for label, sec in timed.items():
        print(f"{label:<48}{sec:>9.3f}{args.trajectories / sec:>10.0f}")
    if not args.reference_python:
        print("reference: not run (pass --reference-python)")
        return
    with tempfile.TemporaryDirectory() as tmp:
        corpus, result = Path(tmp) / "corpus.json", Path(tmp) / "result.json"
        corpus.write_text(json.dumps({"tools": TOOLS, "trajectories": trajectories}))
        subprocess.run(
            [args.reference_python, "-c", REFERENCE_SNIPPET, str(corpus), str(result), str(args.repeat)], check=True
        )
        ref = json.loads(result.read_text())
    same_docs = sum(pc.to_sharegpt(s)["conversations"] == o for s, o in zip(stories, ref["outputs"], strict=True))
    same_rows = sum(pc.to_sharegpt(r)["conversations"] == o for r, o in zip(rows, ref["outputs"], strict=True))
    label, sec = "reference convert_to_trajectory_format", ref["seconds"]
    print(f"{label:<48}{sec:>9.3f}{args.trajectories / sec:>10.0f}")
    docs, on_rows = timed["to_sharegpt (Storyline documents)"], timed["to_sharegpt (dataset rows, JSON text decoded)"]
    print(
        f"identical outputs: {same_docs}/{args.trajectories} from documents, {same_rows}/{args.trajectories} from "
        f"rows; to_sharegpt is {sec / docs:.2f}x the reference's speed on documents, {sec / on_rows:.2f}x on rows"
    )
    if same_docs != args.trajectories or same_rows != args.trajectories:
        sys.exit("outputs differ from the reference")


if __name__ == "__main__":
    main()
