"""What the default workers cost and save: ``load_dataset("pchronicle", …)`` with ``num_proc`` 1 and 2 (issue 26).

    .venv/bin/python benchmarks/bench_workers.py              # median of 5 fresh processes per figure

With no ``num_proc``, the builder reads inputs of ``builder.PARALLEL_MIN`` bytes or ``builder.PARALLEL_FILES``
files or more, in two shards or more, with a worker per core (docs/builder.md). This measures both sides of those
thresholds on the session files ``run.py`` writes (the same documents as every format's figure there): two session
files and 64 (below them: starting the workers is the cost), 256, and 1,024 opencode and Cursor sessions. Each
figure is ``common.load_in_child`` (a fresh process and cache, the imports timed apart), the settings alternated.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
from pathlib import Path

import run
from common import compile_package

from pchronicle_datasets import builder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    compile_package()
    work = Path(tempfile.mkdtemp(prefix="pchronicle-workers-"))
    try:
        formats = run.format_files(work, 30 << 20, 8)
        cases = {
            "claude-code, 2 files": ("claude-code", formats["claude-code"][:2]),
            "claude-code, 64 files": ("claude-code", formats["claude-code"][:64]),
            "claude-code, 256 files": ("claude-code", formats["claude-code"][:256]),
            "opencode, 1,024 files": ("opencode", formats["opencode"]),
            "cursor, 1,024 files": ("cursor", formats["cursor"]),
        }
        print(f"PARALLEL_MIN: {builder.PARALLEL_MIN / 2**20:.0f} MiB; median of {args.runs} fresh processes")
        print("| input | MB | num_proc=1 load s | num_proc=2 load s | × |")
        print("|---|---|---|---|---|")
        for label, (fmt, files) in cases.items():
            times: dict[int, list[float]] = {1: [], 2: []}
            for _ in range(args.runs):
                for n in (1, 2):
                    times[n].append(run.loads(f"load:{fmt}", files, work, num_proc=n)["seconds"])
            one, two = statistics.median(times[1]), statistics.median(times[2])
            print(f"| {label} | {run.mb(files):.1f} | {one:.2f} | {two:.2f} | {one / two:.2f} |", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
