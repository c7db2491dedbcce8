"""Coding agents' session logs: MB/s of ``load_dataset("pchronicle", <harness>)`` beside ``load_dataset("json")``
(datasets' own path, which reads them through ``teich`` when it is installed) on the same files. One function
per harness; each takes the files to read and returns its result row.

    python benchmarks/bench_harness.py claude-code [FILE_OR_FOLDER ...]   # default: the harness's tests/data

Small by design: the files of tests/data are a few KB, so give a folder of real sessions for a meaningful rate.
Each load gets a fresh cache, so every run reads and converts (nothing comes from datasets' cache).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def _files(args: list[str], default: Path, pattern: str) -> list[str]:
    out: list[str] = []
    for arg in args or [str(default)]:
        out += sorted(str(p) for p in Path(arg).rglob(pattern)) if os.path.isdir(arg) else [arg]
    return out


def _rate(fn: Any, size: int) -> dict[str, Any]:
    start = time.perf_counter()
    try:
        rows = fn()
    except Exception as exc:  # the json path refuses some real files (a line that is not JSON): say so
        return {"error": f"{type(exc).__name__}: {str(exc)[:120]}"}
    seconds = time.perf_counter() - start
    return {"rows": rows, "seconds": round(seconds, 3), "MB/s": round(size / 1e6 / seconds, 2)}


def claude_code(args: list[str]) -> dict[str, Any]:
    """Claude Code session files (``*.jsonl``; sidecars ride along with their files)."""
    from datasets import load_dataset

    import pchronicle_datasets  # noqa: F401  (registers the "pchronicle" builder)

    files = _files(args, ROOT / "tests" / "data" / "claude_code", "*.jsonl")
    size = sum(os.path.getsize(f) for f in files)

    def ours() -> int:
        return len(
            load_dataset(
                "pchronicle", "claude-code", data_files=files, split="train", cache_dir=tempfile.mkdtemp(),
                on_bad_records="skip",
            )
        )  # fmt: skip

    def json_path() -> int:
        return len(load_dataset("json", data_files=files, split="train", cache_dir=tempfile.mkdtemp()))

    return {"harness": "claude-code", "files": len(files), "MB": round(size / 1e6, 2), "pchronicle": _rate(ours, size),
            "json": _rate(json_path, size)}  # fmt: skip


HARNESSES = {"claude-code": claude_code}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in HARNESSES:
        print(f"usage: bench_harness.py {{{','.join(HARNESSES)}}} [FILE_OR_FOLDER ...]", file=sys.stderr)
        return 2
    print(json.dumps(HARNESSES[argv[0]](argv[1:]), indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
