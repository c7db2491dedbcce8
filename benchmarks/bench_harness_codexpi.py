"""Coding agents' session logs: `load_dataset("pchronicle", "codex" | "pi")` against `load_dataset("json")` (the
path `datasets` 5.2 takes for these files: its json builder hands them to teich) on the same files.

    .venv/bin/python benchmarks/bench_harness_codexpi.py                   # the real files of tests/data, copied
    .venv/bin/python benchmarks/bench_harness_codexpi.py --copies 200      # more copies of them
    .venv/bin/python benchmarks/bench_harness_codexpi.py --codex DIR --pi DIR   # a folder of your own sessions

Each harness's files are copied `--copies` times into a folder (one file per session, as the harness writes
them); each loader reads the folder with a fresh cache in a child process of its own. Reported: seconds, MB/s,
rows and peak memory of each side, and the ratio. The json side gives one row per file with what teich keeps;
the pchronicle side one validated Storyline document per file with every call, result, usage and link.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import compile_package, load_in_child

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"


def _corpus(sources: list[Path], copies: int, out: Path) -> int:
    """``copies`` copies of every source file in ``out``; their total size in bytes."""
    out.mkdir(parents=True)
    size = 0
    for k in range(copies):
        for src in sources:
            dst = out / f"{k:05d}-{src.name}"
            shutil.copyfile(src, dst)
            size += dst.stat().st_size
    return size


def _run(mode: str, folder: Path, cache: Path) -> dict:
    return load_in_child(mode, [f"{folder}/*.jsonl"], cache)


def bench_harness(fmt: str, sources: list[Path], copies: int) -> dict:
    """MB/s of `load_dataset("pchronicle", fmt)` beside `load_dataset("json")` on the same copied files."""
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "files"
        size = _corpus(sources, copies, folder)
        result = {"format": fmt, "files": len(sources) * copies, "mb": size / 1e6}
        for mode in ("json", fmt):
            run = _run(mode, folder, Path(tmp) / f"cache-{mode}")
            run["mb_per_s"] = result["mb"] / run["seconds"]
            result["json" if mode == "json" else "pchronicle"] = run
        result["ratio"] = result["pchronicle"]["mb_per_s"] / result["json"]["mb_per_s"]
        return result


def bench_codex(copies: int, folder: Path | None = None) -> dict:
    """Codex rollouts: the real files of tests/data/codex (or every rollout of ``folder``)."""
    sources = sorted((folder or DATA / "codex").rglob("*.jsonl"))
    return bench_harness("codex", [p for p in sources if folder or ".written." not in p.name], copies)


def bench_pi(copies: int, folder: Path | None = None) -> dict:
    """Pi sessions: the real files of tests/data/pi (or every session of ``folder``)."""
    sources = sorted((folder or DATA / "pi").rglob("*.jsonl"))
    return bench_harness("pi", [p for p in sources if folder or ".written." not in p.name], copies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--copies", type=int, default=100, help="copies of each source file (default 100)")
    parser.add_argument("--codex", type=Path, help="a folder of Codex rollouts instead of tests/data/codex")
    parser.add_argument("--pi", type=Path, help="a folder of Pi sessions instead of tests/data/pi")
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    for result in (bench_codex(args.copies, args.codex), bench_pi(args.copies, args.pi)):
        j, p = result["json"], result["pchronicle"]
        print(
            f"{result['format']:<6} {result['files']:>6} files {result['mb']:8.1f} MB   "
            f"json (teich) {j['mb_per_s']:7.2f} MB/s {j['peak_mb']:6.0f} MB peak   "
            f"pchronicle {p['mb_per_s']:7.2f} MB/s {p['peak_mb']:6.0f} MB peak   ratio {result['ratio']:.2f}"
        )
        print(json.dumps(result))


if __name__ == "__main__":
    main()
