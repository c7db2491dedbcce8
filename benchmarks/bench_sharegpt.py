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

``--map`` measures what a user runs instead (issue 26): the README's ``ds.map`` call on a saved dataset of the
conversations, each with **its own tool set** (so no row's tools prompt is a cache hit), in fresh processes, beside
the reference converting each conversation and serialising it to a JSON line (``json.dumps(…, ensure_ascii=False)``
written to a file, as its ``save_trajectory`` does, but into one open file). Each process loads its side's corpus
first (our side: ``load_from_disk`` of its own copy, memory-mapped, nothing decoded; the reference: ``json.load``
of the message lists), leaves it out of the collector, and then clocks, in CPU seconds: the import of the converter
(``import pchronicle_datasets``; ``agent.agent_runtime_helpers``) and the conversion — on our side ``ds.map`` with
its Arrow decoding and its writing of the output cache file. The sides alternate, one process each in turn, and
each figure is the median over the processes; the outputs of the first round are compared line for line.

    .venv/bin/python benchmarks/bench_sharegpt.py --map --reference-python /tmp/hermes/bin/python
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson
from common import best_of, compile_package, text  # the scripts run from benchmarks/, which is on sys.path

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


# The README's call and its two batched forms, each run in a fresh process by MAP_CHILD.
MAP_CALLS = {
    "per-example": "ds.map(pc.to_sharegpt, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)",
    "batched": "ds.map(pc.to_sharegpt, batched=True, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)",
    "arrow": 'ds.with_format("arrow").map(pc.to_sharegpt, batched=True, remove_columns=ds.column_names, '
    "features=pc.SHAREGPT_FEATURES)",
    # Not a conversion: the same batched call with a function that hands back the finished conversations (OUT,
    # read before the clock). What ``datasets`` itself costs to map 2,000 rows into these outputs — the batches,
    # the outputs' conversion to Arrow, the cache file — which every function pays. (Its own fingerprint: hashing
    # the lambda would pickle OUT, a cost no real function has.)
    "floor": "ds.map(lambda batch, idx: {'conversations': [OUT[i] for i in idx]}, with_indices=True, batched=True, "
    "remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES, new_fingerprint='floor')",
}

MAP_CHILD = r"""
import gc, json, shutil, sys, tempfile, time
call, saved, dump, outputs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
OUT = [json.loads(line)["conversations"] for line in open(outputs, encoding="utf-8")] if outputs else None
import datasets
from datasets import load_from_disk
datasets.disable_progress_bars()
work = tempfile.mkdtemp()
shutil.copytree(saved, work + "/ds")  # a fresh copy: its own cache folder, so no map is served from a cache
ds = load_from_disk(work + "/ds")
gc.collect()
gc.freeze()
start = time.process_time()
import pchronicle_datasets as pc
imported = time.process_time()
out = eval(call)
end = time.process_time()
if dump:
    with open(dump, "w", encoding="utf-8") as f:
        for conv in out.with_format(None)["conversations"]:
            f.write(json.dumps({"conversations": conv}, ensure_ascii=False) + "\n")
shutil.rmtree(work)
print(json.dumps({"import": imported - start, "convert": end - imported}))
"""

MAP_REFERENCE = r"""
import gc, json, sys, time
corpus, lines = json.load(open(sys.argv[1])), sys.argv[2]
gc.collect()
gc.freeze()
start = time.process_time()
from agent.agent_runtime_helpers import convert_to_trajectory_format
from agent.system_prompt import format_tools_for_system_message
imported = time.process_time()

class Agent:
    def __init__(self, tools):
        self.tools = tools
    def _format_tools_for_system_message(self):
        return format_tools_for_system_message(self)

with open(lines, "w", encoding="utf-8") as f:
    for tools, messages in zip(corpus["tools"], corpus["trajectories"]):
        conv = convert_to_trajectory_format(Agent(tools), messages, messages[0]["content"], True)
        f.write(json.dumps({"conversations": conv}, ensure_ascii=False) + "\n")
end = time.process_time()
print(json.dumps({"import": imported - start, "convert": end - imported}))
"""

TOOL_NAMES = ("terminal", "read_file", "write_file", "web_search", "patch", "search_files", "browser", "todo")


def tool_set(rng: random.Random) -> list[dict]:
    """A conversation's own tools (4 to 8, descriptions of their own): no two rows share a tools prompt."""
    return [
        {
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name}: {text(rng, rng.randint(5, 25))}",
                "parameters": {
                    "type": "object",
                    "properties": {"arg": {"type": "string", "description": text(rng, 5)}},
                    "required": ["arg"],
                },
            },
        }
        for name in TOOL_NAMES[: rng.randint(4, 8)]
    ]


def map_benchmark(n: int, processes: int, reference: str | None, calls: list[str]) -> dict:
    """The README's ``ds.map`` call (``calls``: which forms) beside the reference, fresh processes (see the docs)."""
    from datasets import Dataset, disable_progress_bars

    disable_progress_bars()
    rng = random.Random(5)
    trajectories = [trajectory(rng, i) for i in range(n)]
    tools = [tool_set(rng) for _ in range(n)]
    rows = []
    for i, (messages, own) in enumerate(zip(trajectories, tools, strict=True)):
        story = to_story(messages, i)
        story["agent"]["tools"] = own
        rows.append(pc.story_to_row(story))
    times: dict[str, list[dict]] = {label: [] for label in [*calls, "reference"]}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        saved, corpus = Path(tmp) / "ds", Path(tmp) / "corpus.json"
        Dataset(pc.rows_to_table(rows)).save_to_disk(str(saved))
        finished = Path(tmp) / "finished.jsonl"  # the floor's outputs (MAP_CALLS), converted here beforehand
        with finished.open("w", encoding="utf-8") as f:
            for row in rows:
                f.write(json.dumps(pc.to_sharegpt(row), ensure_ascii=False) + "\n")
        corpus.write_text(json.dumps({"tools": tools, "trajectories": trajectories}))
        lines = {label: Path(tmp) / f"{label}.jsonl" for label in times}
        for p in range(processes):
            loads.append(os.getloadavg()[0])
            for label in times:  # alternated: each side's process in turn, so both see the same moments
                dump = str(lines[label]) if p == 0 else ""
                if label == "reference":
                    if not reference:
                        continue
                    cmd = [reference, "-c", MAP_REFERENCE, str(corpus), dump or os.devnull]
                else:
                    outputs = str(finished) if label == "floor" else ""
                    cmd = [sys.executable, "-c", MAP_CHILD, MAP_CALLS[label], str(saved), dump, outputs]
                proc = subprocess.run(cmd, capture_output=True, text=True, check=True)
                times[label].append(json.loads(proc.stdout.strip().splitlines()[-1]))
        same = {}
        if reference:
            want = lines["reference"].read_text(encoding="utf-8").splitlines()
            for label in calls:
                got = lines[label].read_text(encoding="utf-8").splitlines()
                same[label] = sum(a == b for a, b in zip(got, want, strict=True))
    medians = {
        label: {k: statistics.median(r[k] for r in runs) for k in ("import", "convert")}
        for label, runs in times.items()
        if runs
    }
    return {"trajectories": n, "processes": processes, "times": times, "medians": medians, "same": same,
            "load_average": loads}  # fmt: skip


def markdown_map(result: dict) -> list[str]:
    """The ``--map`` figures as the lines of a Markdown table (``run.py``'s results.md)."""
    n, med = result["trajectories"], result["medians"]
    ref = med["reference"]
    lines = [
        f"{n} conversations with a tool set each (so no tools-prompt cache hit), `bench_sharegpt.py --map`: CPU "
        f"seconds, median of {result['processes']} fresh processes per side, alternated; load average (1 min) "
        "before each round: " + ", ".join(f"{x:.1f}" for x in result["load_average"]) + ". Our side: the call with "
        "its Arrow decoding and its cache file; the reference: convert and `json.dumps` a JSON line per conversation.",
        "",
        "| call | convert s | conversations/s | × reference | + import s | × reference with imports | identical |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, m in med.items():
        call = (
            "reference: `convert_to_trajectory_format` + a JSON line"
            if label == "reference"
            else f"`{MAP_CALLS[label]}`"
        )
        same = result["same"].get(label)
        lines.append(
            f"| {call} | {m['convert']:.3f} | {n / m['convert']:,.0f} | {ref['convert'] / m['convert']:.2f} | "
            f"{m['import']:.3f} | {(ref['import'] + ref['convert']) / (m['import'] + m['convert']):.2f} | "
            f"{'' if same is None else f'{same}/{n}'} |"
        )
    best = max((k for k in med if k not in ("reference", "floor")), key=lambda k: ref["convert"] / med[k]["convert"])
    ratio = ref["convert"] / med[best]["convert"]
    lines += ["", f"Best: `{MAP_CALLS[best]}`, **{ratio:.2f}×** the reference per conversation (target ≥ 2: "
              f"{'met' if ratio >= 2 else 'NOT met'})."]  # fmt: skip
    if "floor" in med:
        floor = med["floor"]["convert"]
        lines += ["", f"`floor` is no conversion: `datasets`' own part of a batched map into these outputs "
                  f"({floor:.3f} s, the same for any function). Of the reference's {ref['convert']:.3f} s, "
                  f"a call at 2× leaves {ref['convert'] / 2 - floor:.3f} s to the function; `{best}` spends "
                  f"{med[best]['convert'] - floor:.3f} s in it."]  # fmt: skip
    return lines


def print_map(result: dict) -> None:
    n, med = result["trajectories"], result["medians"]
    ref = med.get("reference")
    print(
        f"{n} conversations, each with its own tool set; CPU seconds, median of {result['processes']} fresh processes"
        f" per side (alternated); load average (1 min) before each round: "
        + ", ".join(f"{x:.1f}" for x in result["load_average"])
    )
    print(f"{'call':<14}{'convert s':>10}{'conv/s':>9}{'× ref':>7}{'import s':>10}{'both s':>8}{'× ref':>7}  identical")
    for label, m in med.items():
        both = m["import"] + m["convert"]
        x = f"{ref['convert'] / m['convert']:.2f}" if ref else "-"
        xb = f"{(ref['import'] + ref['convert']) / both:.2f}" if ref else "-"
        same = result["same"].get(label)
        print(
            f"{label:<14}{m['convert']:>10.3f}{n / m['convert']:>9.0f}{x:>7}{m['import']:>10.3f}{both:>8.3f}{xb:>7}"
            f"  {'' if same is None else f'{same}/{n}'}"
        )
    if ref and "floor" in med:
        calls = [k for k in med if k not in ("reference", "floor")]
        floor = med["floor"]["convert"]
        print(f"floor: datasets' own part {floor:.3f} s; at 2x the reference the function may take "
              f"{ref['convert'] / 2 - floor:.3f} s; it takes " + ", ".join(
                  f"{k} {med[k]['convert'] - floor:.3f} s" for k in calls))  # fmt: skip
    print("RESULT " + json.dumps(result))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trajectories", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--reference-python", help="interpreter with hermes-agent installed")
    parser.add_argument("--map", action="store_true", help="the README's ds.map call, fresh processes (see the docs)")
    parser.add_argument("--processes", type=int, default=5, help="--map: fresh processes per side")
    parser.add_argument("--calls", default="per-example,batched,arrow,floor", help="--map: " + ", ".join(MAP_CALLS))
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    if args.map:
        result = map_benchmark(args.trajectories, args.processes, args.reference_python, args.calls.split(","))
        print_map(result)
        if any(same != args.trajectories for same in result["same"].values()):
            sys.exit("outputs differ from the reference")
        return
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
