"""The Spark engine beside the local loader, on the same gateway captures.

- throughput: ``load_dataset("pchronicle", "openai-msg")`` (fresh cache) against
  ``pchronicle_datasets.spark.read(...)`` run to the end (Spark's ``noop`` sink) on ``local[1]`` and
  ``local[2]``, after one warm-up job (the JVM and the Python workers are started once per cluster);
- one big capture read whole (one task) and split into ranges (counting pass, rows, shuffle by session);
- what a partition costs: many one-session files against one file holding the same sessions;
- a big Storyline JSON Lines file through the Data Source (``spark.read.format("pchronicle")``): read whole
  (one task) and split into 2 and 8 parts read in place (its lines counted at planning), beside the local
  loader.

Run from the project root: ``.venv/bin/python benchmarks/bench_spark.py`` (needs the ``spark`` extra).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
import warnings
from pathlib import Path

import orjson
from datasets import load_dataset

import pchronicle_datasets  # noqa: F401  (registers the builder)
import pchronicle_datasets.spark as pcs

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_openai_msg import make_corpus
from common import best_of

warnings.simplefilter("ignore", FutureWarning)

SAMPLES = Path(__file__).resolve().parents[1] / "pchronicle_datasets" / "samples"


def local_load(files: list[str], tmp: str) -> int:
    cache = f"{tmp}/cache-{uuid.uuid4().hex}"
    return load_dataset("pchronicle", "openai-msg", data_files=files, split="train", cache_dir=cache).num_rows


def spark_run(spark, paths: list[str], **options) -> None:
    pcs.read(spark, paths, "openai-msg", **options).rows.write.format("noop").mode("overwrite").save()


def local_stories(path: str, tmp: str) -> int:
    cache = f"{tmp}/cache-{uuid.uuid4().hex}"
    return load_dataset("pchronicle", "storyline", data_files=[path], split="train", cache_dir=cache).num_rows


def source_run(spark, path: str, split_size: int) -> None:
    df = spark.read.format("pchronicle").option("format", "storyline").option("splitSize", split_size).load(path)
    df.write.format("noop").mode("overwrite").save()


def storyline_file(path: Path, mb: float) -> None:
    """The shipped Storyline documents, sessions renamed, repeated to about ``mb`` MB of JSON Lines."""
    sample = SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl"
    docs = [orjson.loads(line) for line in sample.read_bytes().splitlines() if line.strip()]
    with open(path, "wb") as f:
        written, k = 0, 0
        while written < mb * 1e6:
            doc = {**docs[k % len(docs)], "session": f"{docs[k % len(docs)]['session']}-{k}"}
            written += f.write(orjson.dumps(doc) + b"\n")
            k += 1


def storyline_figures(spark, stories: Path, tmp: str, mb: float, repeat: int) -> None:
    storyline_file(stories, mb)
    path, size = str(stories), stories.stat().st_size
    t = best_of(lambda: local_stories(path, tmp), repeat)
    print(f"{f'storyline file {size / 1e6:.0f} MB: load_dataset, num_proc=1':<44}{t:>9.2f}{size / 1e6 / t:>8.1f}")
    t = best_of(lambda: source_run(spark, path, 1 << 40), repeat)
    print(f"{'  Data Source local[2], whole (1 task)':<44}{t:>9.2f}{size / 1e6 / t:>8.1f}")
    for n in (2, 8):
        t = best_of(lambda n=n: source_run(spark, path, size // n + 1), repeat)
        print(f"{f'  Data Source local[2], {n} parts':<44}{t:>9.2f}{size / 1e6 / t:>8.1f}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--sessions", type=int, default=25, help="sessions per file")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--storyline-mb", type=float, default=40, help="size of the big Storyline file")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        corpus = root / "corpus"
        corpus.mkdir()
        files = []
        for i in range(args.files):
            path = corpus / f"capture-{i:02d}.jsonl"
            path.write_bytes(make_corpus(args.sessions, seed=100 + i))
            files.append(str(path))
        mb = sum(Path(f).stat().st_size for f in files) / 1e6
        big = root / "big.jsonl"
        # The same rows in one file, sessions renamed per source file (each file numbers its sessions from 0).
        big.write_bytes(b"".join(Path(f).read_bytes().replace(b"sess-", b"f%d-sess-" % i) for i, f in enumerate(files)))
        small = root / "small"
        small.mkdir()
        one = make_corpus(64, seed=5).splitlines(keepends=True)
        # 64 one-session files, and the same rows in one file (make_corpus writes each session's rows together).
        sessions: dict[str, list[bytes]] = {}
        for line in one:
            sessions.setdefault(orjson.loads(line)["session_id"], []).append(line)
        for s, lines in sessions.items():
            (small / f"{s}.jsonl").write_bytes(b"".join(lines))
        (root / "one.jsonl").write_bytes(b"".join(one))

        print(f"corpus: {args.files} files, {mb:.1f} MB of JSON Lines; best of {args.repeat}")
        print(f"{'engine':<44}{'seconds':>9}{'MB/s':>8}")
        t = best_of(lambda: local_load(files, tmp), args.repeat)
        print(f"{'load_dataset(pchronicle), num_proc=1':<44}{t:>9.2f}{mb / t:>8.1f}")
        for master in ("local[1]", "local[2]"):
            spark = pcs.local_session(master)
            spark.sparkContext.setLogLevel("ERROR")
            spark_run(spark, files)  # warm-up: workers started, modules imported
            t = best_of(lambda spark=spark: spark_run(spark, files), args.repeat)
            print(f"{'spark ' + master + ', one task per file':<44}{t:>9.2f}{mb / t:>8.1f}")
            if master == "local[2]":
                t = best_of(lambda spark=spark: spark_run(spark, [str(big)]), args.repeat)
                print(f"{'spark local[2], one big file, whole':<44}{t:>9.2f}{mb / t:>8.1f}")
                size = big.stat().st_size // 8 + 1
                t = best_of(lambda spark=spark, size=size: spark_run(spark, [str(big)], split_size=size), args.repeat)
                print(f"{'spark local[2], one big file, 8 ranges':<44}{t:>9.2f}{mb / t:>8.1f}")
                many = best_of(lambda spark=spark: spark_run(spark, [str(small)]), args.repeat)
                single = best_of(lambda spark=spark: spark_run(spark, [str(root / "one.jsonl")]), args.repeat)
                n = len(sessions)
                print(
                    f"partition cost: {n} one-session files {many:.2f} s, one file of the same {n} sessions "
                    f"{single:.2f} s: {(many - single) / (n - 1) * 1000:.0f} ms per extra partition"
                )
                storyline_figures(spark, root / "stories.jsonl", tmp, args.storyline_mb, args.repeat)
            spark.stop()


if __name__ == "__main__":
    start = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - start:.0f} s")
