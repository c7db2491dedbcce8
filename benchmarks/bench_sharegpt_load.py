"""`load_dataset("pchronicle", "sharegpt")` against `load_dataset("json")` on the same ShareGPT JSONL (issue 26).

    .venv/bin/python benchmarks/bench_sharegpt_load.py                    # ~51 MB in 4 files, median of 3
    .venv/bin/python benchmarks/bench_sharegpt_load.py --records 300 --files 2 --repeat 5

The corpus is the seed's own format, seeded: one record per line, ``{"conversations": [{"from", "value"}], …}``
with the generated function-calling system prompt, ``human`` turns, ``gpt`` turns with a ``<think>`` block and
one to three parallel ``<tool_call>`` blocks, and one ``tool`` turn of ``<tool_response>`` blocks (answered out
of order, some JSON contents) after each, plus the record keys the reference writes (timestamp, model,
completed, partial, api_calls, toolsets_used). Each run is a fresh child process with a fresh cache and the
imports (``datasets``, and ``pchronicle_datasets`` on our side) inside the clock: a user pays them once per
load. The two loaders' runs alternate (json, pchronicle, json, …) so a change in the machine's load falls on
both; the median of each is reported. Target: pchronicle (which parses the markup into validated Storyline
documents) no slower than json (which parses nothing but JSON).

A third side, ``floor``, makes the same imports and then only decodes each line with orjson, building nothing: the
least a reader written in Python spends (``json`` parses in C++ on every core, into Arrow directly).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import compile_package, load_in_child, text

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from pchronicle_datasets.render.sharegpt import system_prompt

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
SYSTEM = system_prompt(TOOLS)


def _call_block(name: str, args: dict) -> str:
    return "<tool_call>\n" + json.dumps({"name": name, "arguments": args}, ensure_ascii=False) + "\n</tool_call>\n"


def _response_block(cid: str, name: str, content: object) -> str:
    body = json.dumps({"tool_call_id": cid, "name": name, "content": content}, ensure_ascii=False)
    return "<tool_response>\n" + body + "\n</tool_response>"


def record(rng: random.Random, n: int) -> dict:
    conv = [{"from": "system", "value": SYSTEM}]
    call = 0
    for _ in range(rng.randint(2, 6)):
        conv.append({"from": "human", "value": text(rng, rng.randint(10, 60))})
        for _ in range(rng.randint(1, 5)):
            calls = []
            for _ in range(rng.choice((1, 1, 2, 3))):
                call += 1
                name = rng.choice(TOOLS)["function"]["name"]
                args = {"arg": text(rng, rng.randint(2, 12)), "n": rng.randint(0, 99)}
                calls.append((f"call_{n}_{call}", name, args))
            reason = text(rng, rng.randint(10, 80))
            value = f"<think>\n{reason}\n</think>\n{text(rng, rng.randint(5, 40))}\n"
            value += "".join(_call_block(name, args) for _, name, args in calls)
            conv.append({"from": "gpt", "value": value.rstrip()})  # the reference strips it
            responses = []
            for cid, name, _ in rng.sample(calls, len(calls)):  # answered out of order
                content = text(rng, rng.randint(20, 300))
                if rng.random() < 0.3:
                    content = {"output": content, "exit_code": rng.randint(0, 2)}
                responses.append(_response_block(cid, name, content))
            conv.append({"from": "tool", "value": "\n".join(responses)})
        conv.append({"from": "gpt", "value": f"<think>\n{text(rng, 20)}\n</think>\n{text(rng, rng.randint(10, 60))}"})
    return {
        "conversations": conv,
        "timestamp": f"2026-11-{1 + n % 28:02d}T10:00:00Z",
        "model": "gpt-4o",
        "completed": True,
        "partial": False,
        "api_calls": call,
        "toolsets_used": ["terminal", "file"],
    }


def make_corpus(records: int, seed: int) -> bytes:
    rng = random.Random(seed)
    lines = (json.dumps(record(rng, seed * 100000 + i), ensure_ascii=False) for i in range(records))
    return "".join(line + "\n" for line in lines).encode()


def run(mode: str, files: list[str], cache: str, pythonpath: str | None = None) -> dict:
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1"}
    if pythonpath:  # another checkout of the project, ahead of the installed one (--before)
        env["PYTHONPATH"] = pythonpath
    out = load_in_child(mode if mode in ("json", "decode") else "sharegpt", files, cache, env=env)
    out["seconds"] += out["import_s"]  # this benchmark clocks the imports with the load (issue 26)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=4)
    parser.add_argument("--records", type=int, default=375, help="records per file")
    parser.add_argument("--repeat", type=int, default=3, help="fresh processes per loader, alternated; median kept")
    parser.add_argument(
        "--before", metavar="DIR", help="a checkout of an earlier version: its loader runs as a third side, alternated"
    )
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = []
        for i in range(args.files):
            path = root / f"sharegpt-{i:03d}.jsonl"
            path.write_bytes(make_corpus(args.records, seed=1 + i))
            files.append(str(path))
        mb = sum(Path(f).stat().st_size for f in files) / 1e6
        sides = {"json": ("json", None), "pchronicle": ("pchronicle", None), "decode": ("decode", None)}
        labels = {
            "json": "load_dataset(json)",
            "pchronicle": "load_dataset(pchronicle, sharegpt)",
            "decode": "floor: imports + orjson per line",
        }
        if args.before:
            sides["before"] = ("pchronicle", args.before)
            labels["before"] = "the same, --before's checkout"
        runs: dict[str, list[dict]] = {side: [] for side in sides}
        for i in range(args.repeat):
            for side, (mode, path) in sides.items():
                runs[side].append(run(mode, files, str(root / f"cache-{side}-{i}"), path))
        print(f"corpus: {args.files} files, {mb:.1f} MB of JSON Lines, {args.files * args.records} records")
        print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'loader':<38}{'median s':>9}{'MB/s':>8}{'rows':>8}{'peak MB':>9}  runs")
        medians = {}
        for side, label in labels.items():
            secs = [r["seconds"] for r in runs[side]]
            medians[side] = median = statistics.median(secs)
            r = runs[side][-1]
            each = " ".join(f"{s:.2f}" for s in secs)
            print(f"{label:<38}{median:>9.2f}{mb / median:>8.1f}{r['rows']:>8}{r['peak_mb']:>9.0f}  {each}")
        if args.before:
            print(f"ratio --before/json: {medians['before'] / medians['json']:.2f}")
        print(
            f"floor/json: {medians['decode'] / medians['json']:.2f} (the same imports, then only orjson.loads of each "
            "line, nothing built: what any reader written in Python spends before its first row)"
        )
        ratio = medians["pchronicle"] / medians["json"]
        print(f"ratio pchronicle/json: {ratio:.2f} (target <= 1: {'met' if ratio <= 1 else 'NOT met'})")


if __name__ == "__main__":
    main()
