"""`load_dataset("pchronicle", "openai-msg")` against `load_dataset("json")` on the same gateway captures.

    .venv/bin/python benchmarks/bench_builder.py                   # ~50 MB in 8 files
    .venv/bin/python benchmarks/bench_builder.py --sessions 400 --files 16

Both loaders read the same realistic JSON Lines files (benchmarks/bench_openai_msg.py's generator: full
history per row, tool calls, reasoning, `meta_json` as a JSON string), each with a fresh cache, in a child
process of its own so that peak memory (its own VmHWM: common.PEAK_MB) belongs to one loader. Reported:
seconds, MB/s, the
ratio (target: pchronicle takes at most half json's time), peak memory, and the streaming peak memory of
`load_dataset("pchronicle", …, streaming=True)` iterated to the end, for growing corpora (more files of the
same size): it must stay flat as the corpus grows.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_openai_msg import make_corpus
from common import compile_package, load_in_child


def run(mode: str, files: list[str], cache: str) -> dict:
    side = {"json": "json", "pchronicle": "openai-msg"}.get(mode, "stream:openai-msg")
    return load_in_child(side, files, cache)


def write_files(folder: Path, n_files: int, sessions: int) -> list[str]:
    paths = []
    for i in range(n_files):
        path = folder / f"capture-{i:03d}.jsonl"
        path.write_bytes(make_corpus(sessions, seed=100 + i))
        paths.append(str(path))
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per file")
    parser.add_argument("--repeat", type=int, default=3, help="runs per loader, each with a fresh cache; best kept")
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = write_files(root / "data", args.files, args.sessions) if (root / "data").mkdir() is None else []
        mb = sum(Path(f).stat().st_size for f in files) / 1e6
        js = min(
            (run("json", files, str(root / f"cache-json-{i}")) for i in range(args.repeat)), key=lambda r: r["seconds"]
        )
        pcr = min(
            (run("pchronicle", files, str(root / f"cache-pc-{i}")) for i in range(args.repeat)),
            key=lambda r: r["seconds"],
        )
        print(f"corpus: {args.files} files, {mb:.1f} MB of JSON Lines")
        print(f"{'loader':<40}{'seconds':>9}{'MB/s':>8}{'rows':>8}{'peak MB':>9}")
        print(
            f"{'load_dataset(json)':<40}{js['seconds']:>9.2f}{mb / js['seconds']:>8.1f}{js['rows']:>8}"
            f"{js['peak_mb']:>9.0f}"
        )
        print(
            f"{'load_dataset(pchronicle, openai-msg)':<40}{pcr['seconds']:>9.2f}{mb / pcr['seconds']:>8.1f}"
            f"{pcr['rows']:>8}{pcr['peak_mb']:>9.0f}"
        )
        ratio = pcr["seconds"] / js["seconds"]
        print(f"ratio pchronicle/json: {ratio:.2f} (target <= 0.5: {'met' if ratio <= 0.5 else 'NOT met'})")
        print("\nstreaming peak memory as the corpus grows (files of the same size):")
        print(f"{'files':>6}{'MB':>8}{'sessions':>10}{'peak MB':>9}")
        for n in (max(1, args.files // 4), max(1, args.files // 2), args.files, args.files * 2):
            more = write_files(root / f"grow{n}", n, args.sessions) if (root / f"grow{n}").mkdir() is None else []
            size = sum(Path(f).stat().st_size for f in more) / 1e6
            st = run("stream", more, str(root / "cache-stream"))
            print(f"{n:>6}{size:>8.1f}{st['rows']:>10}{st['peak_mb']:>9.0f}")


if __name__ == "__main__":
    main()
