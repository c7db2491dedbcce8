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
