"""What the benchmark scripts share: best-of-N timing and the word list their corpora are written with."""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from pathlib import Path

WORDS = (
    "the file build test error fix python import module function return value list path config run step "  # noqa: SIM905
    "agent tool result ok failed retry read write patch diff line column".split()
)


def text(rng: random.Random, n: int) -> str:
    """``n`` words of agent-log-like text."""
    return " ".join(rng.choice(WORDS) for _ in range(n))


def best_of(fn: Callable[[], object], repeat: int, clock: Callable[[], float] = time.perf_counter) -> float:
    """The fastest of ``repeat`` runs of ``fn``, in seconds (the least disturbed by the rest of the machine);
    ``clock=time.process_time`` counts this process's CPU seconds only, not the time it waited for a core."""
    best = float("inf")
    for _ in range(repeat):
        start = clock()
        fn()
        best = min(best, clock() - start)
    return best


def compile_package() -> None:
    """Byte-compile the package, as ``pip install`` does for an installed wheel: an editable checkout compiles
    its modules on first import instead, and on every import when ``PYTHONDONTWRITEBYTECODE`` is set (as on this
    project's machines), which put about 0.25 s of compiling, not a user's import, into every timed import."""
    import compileall

    import pchronicle_datasets

    compileall.compile_dir(str(Path(pchronicle_datasets.__file__).parent), quiet=1)


#: Python source of ``peak_mb()`` for the benchmarks' child processes: the child's own peak RSS in MB (``VmHWM``).
#: ``ru_maxrss`` would do on another system, but Linux carries it over from the parent across fork and exec, so a
#: child of a benchmark that holds a large corpus reported the parent's peak.
PEAK_MB = """
def peak_mb():
    try:
        with open("/proc/self/status") as f:
            return next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) / 1024
    except (OSError, StopIteration):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""


#: Python source of the fresh process every load benchmark times: ``side cache num_proc files…``, where ``side``
#: is ``json`` (``load_dataset("json")``), a format name (``load_dataset("pchronicle", <format>)``),
#: ``stream:<format>`` (streaming, read to the end) or ``decode`` (no loader: each line of a JSON Lines file
#: decoded by orjson, after the same imports: a floor for any reader written in Python). The imports a user's
#: script makes are timed apart (``import_s``); ``seconds`` is the load itself. One home, so every benchmark times
#: the same thing.
LOAD_CHILD = (
    PEAK_MB
    + r"""
import time
began = time.perf_counter()
import json, sys
side, cache, num_proc, *files = sys.argv[1:]
num_proc = int(num_proc) or None
from datasets import load_dataset
if side != "json":
    import pchronicle_datasets  # noqa: F401  (registers the "pchronicle" builder)
start = time.perf_counter()
first = None
if side == "json":
    ds = load_dataset("json", data_files=files, split="train", cache_dir=cache, num_proc=num_proc)
    n = ds.num_rows
elif side == "decode":  # no loader: every line decoded by orjson and dropped, the least any Python reader does
    import orjson
    n = 0
    for path in files:
        with open(path, "rb") as f:
            for line in f:
                orjson.loads(line)
                n += 1
elif side.startswith("stream:"):
    ds = load_dataset("pchronicle", side[len("stream:"):], data_files=files, split="train", streaming=True)
    n = 0
    for _ in ds:
        if first is None:
            first = time.perf_counter() - start
        n += 1
else:
    ds = load_dataset("pchronicle", side, data_files=files, split="train", cache_dir=cache, num_proc=num_proc)
    n = ds.num_rows
seconds = time.perf_counter() - start
import resource  # the workers num_proc forked (by default for big inputs: docs/builder.md), reaped by now: the
# largest one's peak, an upper bound (Linux counts a forked child's high-water mark from its parent's at the fork)
workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "import_s": start - began, "rows": n, "peak_mb": peak_mb(), "first_row": first,
                  "workers_peak_mb": workers}))
"""
)


def load_in_child(side: str, files: list, cache: str | Path, num_proc: int = 0, env: dict | None = None) -> dict:
    """``LOAD_CHILD`` in a fresh process: its figures, or the benchmark stops with the child's error."""
    import json
    import subprocess
    import sys

    cmd = [sys.executable, "-c", LOAD_CHILD, side, str(cache), str(num_proc), *map(str, files)]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        sys.exit(f"a benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])
