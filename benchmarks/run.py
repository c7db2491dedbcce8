"""Every speed and memory figure of the project in one command, written to `benchmarks/results.md` with a plot.

    .venv/bin/python benchmarks/run.py            # the full run (files of 100 MB, 1 GB and 3 GB; about 20 min)
    .venv/bin/python benchmarks/run.py --quick    # the same figures on small files, a few minutes

Each figure is a ratio measured in the same run, beside its anchor, with the command that reproduces it. Loads
are timed in fresh processes with the imports inside the clock (`from datasets import load_dataset`, and for ours
`import pchronicle_datasets`, timed apart too), the package byte-compiled first as `pip install` leaves it
(`common.compile_package`), and every ratio takes the same statistic on both sides: the median of the alternated
processes.

- `load_dataset("pchronicle", <format>)` beside `load_dataset("json")` on the same files, for every format of the
  registry, each written by this project's writer from the same documents (target: at most 1.0x json's time;
  openai-msg at most 0.5x);
- `load_dataset("pchronicle", "openai-msg")` beside `load_dataset("json")` on bigger captures (target: 0.5x);
- the README's `ds.map(pc.to_sharegpt, …)` call beside the reference converter on conversations with a tool set
  each (`bench_sharegpt.py --map`: fresh processes, alternated, medians; when the reference's interpreter is given:
  `--reference-python /tmp/hermes/bin/python`; target: 2x);
- in-memory read MB/s of five formats' readers beside raw `orjson.loads` of every line of the same bytes;
- peak memory (RSS of the loading process) against file size for one capture file and for many files, with and
  without streaming (target: flat, at most 1.5 GB at 3 GB);
- streaming: time to the first row;
- `num_proc` 1 vs 2 on one big file and on many files (target: at least 1.6x on one big file; the loads alone);
- decompression bombs: peak memory and time of a gzip of whitespace read to the default limit and stopped by a
  set limit, and of bzip2 files of one 2 GiB line (whitespace; a JSON string: refused at the 512 MiB record limit).

The captures are generated (seeded; never committed) in a temporary folder — `--workdir` to choose it — and
removed at the end. Sessions are interleaved as a gateway writes them: several sessions open at once.
"""

from __future__ import annotations

import argparse
import bz2
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

import orjson

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from bench_openai_msg import session_rows  # noqa: E402
from bench_sharegpt import markdown_map  # noqa: E402
from common import PEAK_MB, compile_package, load_in_child  # noqa: E402

BOMB_CHILD = (
    PEAK_MB
    + r"""
import json, sys, time
from pchronicle_datasets.formats import iter_records
path, limit = sys.argv[1], int(sys.argv[2])
start = time.perf_counter()
with open(path, "rb") as f:
    records = list(iter_records("auto", f, path.rsplit("/", 1)[-1], **({"max_size": limit} if limit else {})))
seconds = time.perf_counter() - start
docs = sum(r.story is not None for r in records)
err = str(records[-1].error) if records and records[-1].error else f"none ({docs} document(s))"
peak = peak_mb()  # its own high-water mark (common.PEAK_MB)
print(json.dumps({"seconds": seconds, "peak_mb": peak, "records": len(records), "error": err[:160]}))
"""
)


def child(code: str, *args: str) -> dict:
    proc = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.exit(f"a benchmark child failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def write_capture(path: Path, size: int, seed: int, open_sessions: int = 8) -> int:
    """A gateway capture of about ``size`` bytes: sessions of 8–24 rows, ``open_sessions`` at a time, their rows
    interleaved. Returns the number of sessions."""
    rng = random.Random(seed)
    written = sessions = 0
    active: list[list[bytes]] = []
    with path.open("wb") as f:
        while written < size or active:
            while written < size and len(active) < open_sessions:
                rows = session_rows(rng, seed * 1_000_000 + sessions, rng.randint(8, 24))
                active.append([orjson.dumps(r) for r in rows])
                sessions += 1
            queue = rng.choice(active)
            line = queue.pop(0)
            f.write(line + b"\n")
            written += len(line) + 1
            if not queue:
                active.remove(queue)
    return sessions


def loads(mode: str, files: list[Path], work: Path, num_proc: int = 0) -> dict:
    cache = tempfile.mkdtemp(dir=work, prefix="cache-")
    try:
        # run.py's modes: "load" (openai-msg), "load:<format>", "stream" (openai-msg), "json"
        side = {"load": "openai-msg", "stream": "stream:openai-msg"}.get(mode, mode.removeprefix("load:"))
        return load_in_child(side, files, cache, num_proc)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def mb(files: list[Path]) -> float:
    return sum(f.stat().st_size for f in files) / 1e6


# ------------------------------------------------------------------------------------------ the figures


def reader_speeds(work: Path, size: int) -> list[dict]:
    """Each format's reader in memory on the same documents, beside orjson.loads per line of the same bytes
    (``format_loads`` has every format through ``load_dataset``)."""
    import pchronicle_datasets as pc

    src = work / "speed.jsonl"
    write_capture(src, size, seed=5)
    data = src.read_bytes()
    stories = pc.into_storyline("openai-msg", data, document_id="speed.jsonl")
    files = {"openai-msg": data}
    for fmt in ("storyline", "sharegpt", "chat", "atif"):
        files[fmt] = pc.from_storyline(fmt, stories).encode()
    out = []
    for fmt, blob in files.items():
        lines = blob.splitlines()
        raw = _best(lambda lines=lines: [orjson.loads(x) for x in lines])
        ours = _best(lambda fmt=fmt, blob=blob: pc.into_storyline(fmt, blob, document_id=f"f.{fmt}"))
        out.append({"format": fmt, "mb": len(blob) / 1e6, "orjson_s": raw, "reader_s": ours})
    src.unlink()
    return out


def _best(fn, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def json_ratio(work: Path, n_files: int, size: int, runs: int) -> dict:
    folder = work / "ratio"
    folder.mkdir()
    files = []
    for i in range(n_files):
        files.append(folder / f"capture-{i:03d}.jsonl")
        write_capture(files[-1], size, seed=100 + i)
    js, pcr = [], []
    for _ in range(runs):  # alternated: each pair shares the machine's state of the moment
        js.append(loads("json", files, work))
        pcr.append(loads("load", files, work))
    lines = [line for f in files for line in f.read_bytes().splitlines()]
    raw = _best(lambda: [orjson.loads(x) for x in lines])
    shutil.rmtree(folder)
    return {
        "files": n_files,
        "mb": sum(len(x) + 1 for x in lines) / 1e6,
        # one statistic on both sides: the median of the fresh processes, with and without their imports
        "json_s": statistics.median(r["seconds"] for r in js),
        "pchronicle_s": statistics.median(r["seconds"] for r in pcr),
        "json_total_s": statistics.median(r["seconds"] + r["import_s"] for r in js),
        "pchronicle_total_s": statistics.median(r["seconds"] + r["import_s"] for r in pcr),
        "pchronicle_workers_peak_mb": statistics.median(r.get("workers_peak_mb", 0) for r in pcr),
        "orjson_s": raw,
        "runs": runs,
    }


# The registry's formats, each written by this project's own writer from the same Storyline documents; the
# session-log formats one file per session, as their tools write them (``convert --per-document``).
FORMATS = ("openai-msg", "storyline", "sharegpt", "chat", "atif", "swe-agent", "mini-swe-agent", "openhands",
           "openhands-sdk", "role-text", "claude-code", "codex", "pi", "gemini-cli", "opencode", "copilot-cli",
           "cursor", "cline", "qwen-code", "goose", "kimi-cli", "kimi-code")  # fmt: skip
PER_DOCUMENT = {"claude-code", "codex", "pi", "gemini-cli", "opencode", "copilot-cli", "cursor", "cline", "qwen-code",
                "openhands-sdk", "goose", "kimi-cli", "kimi-code"}  # fmt: skip


def format_files(work: Path, size: int, copies: int, formats: tuple[str, ...] = FORMATS) -> dict[str, list[Path]]:
    """Every format's files holding the same documents: the sessions of a capture of ``size`` bytes, ``copies``
    times over under new session ids (the capture's own history is mostly repeated context, which the reader
    folds away: copies give each format's files a size where reading, not starting, is what is timed)."""
    import pchronicle_datasets as pc

    src = work / "formats.jsonl"
    write_capture(src, size, seed=11)
    stories = pc.into_storyline("openai-msg", src.read_bytes(), document_id="formats.jsonl")
    src.unlink()
    many = []
    for k in range(copies):
        for story in stories:
            many.append({**story, "session": f"{story['session']}-{k}"})
    base = work / "formats" / "all.storyline.jsonl"
    base.parent.mkdir()
    base.write_text(pc.from_storyline("storyline", many), encoding="utf-8")
    out = {}
    cli = Path(sys.executable).with_name("pchronicle-datasets")
    for fmt in formats:
        folder = work / "formats" / fmt
        cmd = [str(cli), "convert", str(base), "--to", fmt, "-o", str(folder)]
        if fmt in PER_DOCUMENT:
            cmd.append("--per-document")
        subprocess.run(cmd, capture_output=True, check=True)
        if fmt == "sharegpt":  # the folder writer's two files: the successful trajectories are the data
            files = [folder / "trajectory_samples.jsonl"]
        else:
            files = sorted(p for p in folder.rglob("*") if p.is_file()) if folder.is_dir() else [folder]
        out[fmt] = files
    return out


def format_loads(work: Path, size: int, copies: int, runs: int, formats: tuple[str, ...] = FORMATS) -> list[dict]:
    """``load_dataset("pchronicle", <format>)`` beside ``load_dataset("json")`` on the same files, for every format:
    a fresh process and cache each, the imports inside the clock (timed apart too), the sides alternated, the
    median of ``runs`` processes on each side; json's error when it cannot load the files."""
    out = []
    for fmt, files in format_files(work, size, copies, formats).items():
        ours, js, refused = [], [], ""
        for _ in range(runs):
            ours.append(loads(f"load:{fmt}", files, work))
            if refused:
                continue
            try:
                js.append(loads("json", files, work))
            except SystemExit as exc:  # the json loader refused the files: its last line says why
                refused = str(exc).strip().splitlines()[-1][:160]
        row = {"format": fmt, "files": len(files), "mb": mb(files), "rows": ours[0]["rows"], "runs": runs,
               "pchronicle_s": statistics.median(r["seconds"] for r in ours),
               "pchronicle_import_s": statistics.median(r["import_s"] for r in ours),
               "pchronicle_total_s": statistics.median(r["seconds"] + r["import_s"] for r in ours),
               "pchronicle_peak_mb": statistics.median(r["peak_mb"] for r in ours),
               "pchronicle_workers_peak_mb": statistics.median(r.get("workers_peak_mb", 0) for r in ours)}  # fmt: skip
        if refused:
            row["json_error"] = refused
        else:
            row.update(
                json_s=statistics.median(r["seconds"] for r in js),
                json_import_s=statistics.median(r["import_s"] for r in js),
                json_total_s=statistics.median(r["seconds"] + r["import_s"] for r in js),
                json_rows=js[0]["rows"],
            )
        out.append(row)
        print(f"  {fmt}: {row}", file=sys.stderr)
    shutil.rmtree(work / "formats")
    return out


# Fresh processes per side (bench_sharegpt.py --map alternates them: the heap layout of a process and the other
# jobs of the moment move a run by ±10%); each figure is the median over them.
SHAREGPT_PROCESSES = 5
# The same for the format table: a small file's load is mostly the imports (1 s, ±0.2 s from one process to the
# next here), so the median of 3 let one slow import decide a ratio near 1 (role-text: 0.89, then 1.08 with the
# same code, its loads alone at 0.73 both times).
FORMAT_PROCESSES = 5


def sharegpt_ratio(reference: str | None, trajectories: int) -> dict | None:
    """The README's ``ds.map`` call beside the reference converter, ``bench_sharegpt.py --map``."""
    if not reference:
        return None
    cmd = [sys.executable, str(HERE / "bench_sharegpt.py"), "--map", "--trajectories", str(trajectories)]
    cmd += ["--processes", str(SHAREGPT_PROCESSES), "--reference-python", reference]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        return {"error": proc.stderr[-500:]}
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT "):
            return json.loads(line[len("RESULT ") :])
    return {"error": proc.stdout[-500:]}


def memory_by_size(work: Path, sizes: list[int]) -> list[dict]:
    out = []
    for size in sizes:
        path = work / f"one-{size}.jsonl"
        sessions = write_capture(path, size, seed=7)
        stream = loads("stream", [path], work)
        # num_proc=1 and the default (no num_proc: every core for a big file, docs/builder.md) alternated twice,
        # the faster of each kept: the cores are shared with other jobs, whose load (os.getloadavg before each
        # pair) is reported beside.
        pairs, busy = [], []
        for _ in range(2):
            busy.append(os.getloadavg()[0])
            pairs.append((loads("load", [path], work, num_proc=1), loads("load", [path], work)))
        load = min((p[0] for p in pairs), key=lambda r: r["seconds"])  # the least disturbed run of each
        two = min((p[1] for p in pairs), key=lambda r: r["seconds"])
        out.append(
            {"mb": path.stat().st_size / 1e6, "sessions": sessions, "load": load, "stream": stream, "np2": two,
             "pairs": [(a["seconds"], b["seconds"]) for a, b in pairs], "load_average": busy}
        )  # fmt: skip
        path.unlink()
    return out


def many_files(work: Path, n: int, size: int) -> dict:
    folder = work / "many"
    folder.mkdir()
    files = []
    for i in range(n):
        files.append(folder / f"c-{i:04d}.jsonl")
        write_capture(files[-1], size, seed=1000 + i, open_sessions=2)
    res = {
        "files": n,
        "mb": mb(files),
        "load": loads("load", files, work, num_proc=1),
        "stream": loads("stream", files, work),
        "np2": loads("load", files, work),  # the default: every core (docs/builder.md)
    }
    shutil.rmtree(folder)
    return res


def bombs(work: Path, size: int, line: int) -> list[dict]:
    """A gzip of ``size`` bytes of whitespace before one document, read to the default limit and stopped by a
    set one; and bzip2 files of one line of ``line`` bytes (no newline anywhere), of whitespace (skipped without
    being held) and of one JSON string (refused at the default maximum record size, 512 MiB)."""
    path = work / "bomb.jsonl.gz"
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    piece = b" " * (1 << 20)
    with path.open("wb") as f:
        for _ in range(size >> 20):
            f.write(z.compress(piece))
        doc = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}
        f.write(z.compress(orjson.dumps(doc) + b"\n") + z.flush())
    out = []
    for limit in (0, 64 << 20):
        res = child(BOMB_CHILD, str(path), str(limit))
        out.append(
            {"kind": "gzip, whitespace, then one document", "compressed_kb": path.stat().st_size / 1024,
             "decompressed_mb": size / 2**20, "limit": limit, **res}
        )  # fmt: skip
    path.unlink()
    for kind, head, fill in (
        ("bzip2, one line of whitespace", b"", b" "),
        ("bzip2, one line: a JSON string", b'{"x": "', b"a"),
    ):
        path = work / "line.jsonl.bz2"
        z2 = bz2.BZ2Compressor(9)
        with path.open("wb") as f:
            f.write(z2.compress(head))
            piece = fill * (1 << 20)
            for _ in range(line >> 20):
                f.write(z2.compress(piece))
            f.write(z2.flush())
        res = child(BOMB_CHILD, str(path), "0")
        out.append(
            {"kind": kind, "compressed_kb": path.stat().st_size / 1024, "decompressed_mb": line / 2**20, "limit": 0,
             **res}
        )  # fmt: skip
        path.unlink()
    return out


# ------------------------------------------------------------------------------------------ the report


def plot(results: dict, path: Path) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return False
    fig, (a, b) = plt.subplots(1, 2, figsize=(11, 4))
    mem = results["memory"]
    xs = [m["mb"] for m in mem]
    a.plot(xs, [m["load"]["peak_mb"] for m in mem], "o-", label="load_dataset, num_proc=1")
    a.plot(xs, [m["stream"]["peak_mb"] for m in mem], "s-", label="streaming=True")
    a.plot(xs, [m["mb"] for m in mem], ":", color="gray", label="file size")
    a.axhline(1500, color="red", lw=0.8, ls="--", label="target at 3 GB (1.5 GB)")
    a.set_xscale("log")
    a.set_xlabel("one capture file (MB)")
    a.set_ylabel("peak RSS (MB)")
    a.set_title("peak memory against file size")
    a.legend(fontsize=8)
    speeds = results["readers"]
    names = [s["format"] for s in speeds]
    width = 0.38
    pos = range(len(names))
    b.bar([p - width / 2 for p in pos], [s["mb"] / s["reader_s"] for s in speeds], width, label="reader")
    b.bar([p + width / 2 for p in pos], [s["mb"] / s["orjson_s"] for s in speeds], width, label="orjson.loads per line")
    r = results["json_ratio"]
    b.axhline(r["mb"] / r["json_s"], color="green", ls="--", lw=0.8, label='load_dataset("json")')
    b.axhline(r["mb"] / r["pchronicle_s"], color="purple", ls="--", lw=0.8, label='load_dataset("pchronicle")')
    b.set_xticks(list(pos), names)
    b.set_ylabel("MB/s")
    b.set_title("read speed")
    b.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return True


def _peaks(f: dict) -> str:
    workers = f.get("pchronicle_workers_peak_mb", 0)
    return f"{f.get('pchronicle_peak_mb', 0):.0f}" + (f" ({workers:.0f})" if workers else "")


def format_table(rows: list[dict]) -> list[str]:
    """The every-format table's lines (``format_loads``' rows)."""
    lines = [
        "| format | files | MB | rows (ours / json) | json s (load) | ours s (load) | ours import s | × json "
        "with imports | × json, loads alone | target | ours peak MB (workers') |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for f in rows:
        goal = 0.5 if f["format"] == "openai-msg" else 1.0
        if "json_error" in f:
            lines.append(
                f"| {f['format']} | {f['files']} | {f['mb']:.1f} | {f['rows']} / — | fails: {f['json_error']} | "
                f"{f['pchronicle_total_s']:.2f} ({f['pchronicle_s']:.2f}) | {f['pchronicle_import_s']:.2f} | — | — | "
                f"— (json cannot read it) | {_peaks(f)} |"
            )
            continue
        with_imports = f["pchronicle_total_s"] / f["json_total_s"]
        lines.append(
            f"| {f['format']} | {f['files']} | {f['mb']:.1f} | {f['rows']} / {f['json_rows']} | "
            f"{f['json_total_s']:.2f} ({f['json_s']:.2f}) | {f['pchronicle_total_s']:.2f} ({f['pchronicle_s']:.2f}) | "
            f"{f['pchronicle_import_s']:.2f} | **{with_imports:.2f}** | {f['pchronicle_s'] / f['json_s']:.2f} | "
            f"≤ {goal}: {'met' if with_imports <= goal else 'NOT met'} | {_peaks(f)} |"
        )
    return lines


def report(results: dict, command: str, picture: bool) -> str:
    r = results["json_ratio"]
    ratio = r["pchronicle_s"] / r["json_s"]
    total = r["pchronicle_total_s"] / r["json_total_s"]
    lines = [
        "# Benchmark results",
        "",
        f"`{command}` — {results['when']}, {results['machine']}. Every ratio below is measured in this run.",
        "",
    ]
    if picture:
        lines += ["![peak memory and read speed](results.png)", ""]
    lines += [
        '## Loading: `load_dataset("pchronicle", "openai-msg")` beside `load_dataset("json")`',
        "",
        f"{r['files']} capture files, {r['mb']:.1f} MB; fresh process and cache each, median of {r['runs']} "
        "alternated runs.",
        "",
        "| loader | seconds with imports | seconds, load alone | MB/s (load alone) |",
        "|---|---|---|---|",
        f"| load_dataset(json) | {r['json_total_s']:.2f} | {r['json_s']:.2f} | {r['mb'] / r['json_s']:.1f} |",
        f"| load_dataset(pchronicle, openai-msg) | {r['pchronicle_total_s']:.2f} | {r['pchronicle_s']:.2f} | "
        f"{r['mb'] / r['pchronicle_s']:.1f} |",
        f"| orjson.loads of every line (floor) | — | {r['orjson_s']:.2f} | {r['mb'] / r['orjson_s']:.1f} |",
        "",
        f"ratio pchronicle / json, imports inside the clock (`import datasets`; ours also `import "
        f"pchronicle_datasets`): **{total:.2f}** (target ≤ 0.5: {'met' if total <= 0.5 else 'NOT met'}); the "
        f"loads alone (imports before the clock): {ratio:.2f}; pchronicle / orjson floor: "
        f"**{r['pchronicle_s'] / r['orjson_s']:.1f}×** (aim: 3×). Both loads as a user calls them, no `num_proc`: "
        "json parses with pyarrow's threads on every core, ours with a worker per core for inputs of 16 MiB or 256 "
        f"files or more (docs/builder.md; its workers' peak: {r.get('pchronicle_workers_peak_mb', 0):.0f} MB).",
        "",
        '## Every format: `load_dataset("pchronicle", <format>)` beside `load_dataset("json")` on the same files',
        "",
        "The same documents written by this project's writer for each format (session-log formats one file per "
        "session); each side in a fresh process with a fresh cache, the sides alternated, the median of "
        f"{results['formats'][0]['runs'] if results['formats'] else 0} processes each. Seconds with the imports "
        "inside the clock (`from datasets import load_dataset`, and for ours `import pchronicle_datasets`), and the "
        "load alone. Target (issue 26): ours ≤ 1.0× json with imports (openai-msg ≤ 0.5×). No `num_proc` on either "
        "side: ours reads inputs of 16 MiB or 256 files or more with a worker per core (docs/builder.md), whose peak "
        "memory is given beside the loading process's.",
        "",
    ]
    lines += format_table(results["formats"])
    lines += [
        "",
        "## Readers in memory: MB/s beside raw orjson on the same bytes",
        "",
        "The same documents in each format: `into_storyline` in memory, beside `orjson.loads` of every line.",
        "",
        "| format | MB | reader MB/s | orjson.loads per line MB/s | reader / orjson time |",
        "|---|---|---|---|---|",
    ]
    for s in results["readers"]:
        lines.append(
            f"| {s['format']} | {s['mb']:.1f} | {s['mb'] / s['reader_s']:.1f} | {s['mb'] / s['orjson_s']:.1f} | "
            f"{s['reader_s'] / s['orjson_s']:.1f}× |"
        )
    sg = results.get("sharegpt")
    lines += ["", "## `to_sharegpt` through `ds.map` beside the reference converter (hermes-agent 0.19.0)", ""]
    if not sg or "medians" not in sg:
        lines.append("not run (pass `--reference-python` with hermes-agent installed)" + (f": {sg}" if sg else ""))
    else:
        lines += markdown_map(sg)
    lines += [
        "",
        "## Peak memory against file size (one capture file), streaming, num_proc",
        "",
        "| file MB | sessions | num_proc=1 s | its peak MB | streaming s | streaming peak MB | first row s "
        "| default s (a worker per core) | its peak MB (workers') | speed-up | pairs (np1 s, default s) | load "
        "average before |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for m in results["memory"]:
        lo, st, two = m["load"], m["stream"], m["np2"]
        pairs = ", ".join(f"({a:.1f}, {b:.1f})" for a, b in m["pairs"])
        lines.append(
            f"| {m['mb']:.0f} | {m['sessions']} | {lo['seconds']:.1f} | {lo['peak_mb']:.0f} | {st['seconds']:.1f} | "
            f"{st['peak_mb']:.0f} | {st['first_row']:.1f} | {two['seconds']:.1f} | {two['peak_mb']:.0f} "
            f"({two.get('workers_peak_mb', 0):.0f}) | "
            f"{lo['seconds'] / two['seconds']:.2f}× | {pairs} | {', '.join(f'{x:.1f}' for x in m['load_average'])} |"
        )
    many = results["many"]
    lines += [
        "",
        f"Many files: {many['files']} files, {many['mb']:.0f} MB — load {many['load']['seconds']:.1f} s "
        f"with num_proc=1 (peak {many['load']['peak_mb']:.0f} MB), streaming {many['stream']['seconds']:.1f} s (peak "
        f"{many['stream']['peak_mb']:.0f} MB, first row after {many['stream']['first_row']:.2f} s), the default (a "
        f"worker per core) {many['np2']['seconds']:.1f} s ({many['load']['seconds'] / many['np2']['seconds']:.2f}×; "
        f"workers' peak {many['np2'].get('workers_peak_mb', 0):.0f} MB).",
        "",
        "Peak memory is the loading process's own maximum RSS (`VmHWM`; `ru_maxrss` would carry over the benchmark's "
        "own, as Linux keeps it across fork and exec): the interpreter, pyarrow and datasets "
        "are about 200 MB of it. The default's workers (for a file big enough to be cut in byte ranges, 32 MiB or "
        "more) are separate processes: their peak is the largest one's `ru_maxrss` (an upper bound: Linux starts "
        "a forked child's from its parent's at the fork). "
        "The first row's time counts from the `load_dataset(..., streaming=True)` call (about 1.4 s of it is "
        "datasets resolving the files). The load average (1 minute) before each pair counts this run's own previous "
        "loads and other jobs on the shared cores: when other jobs hold a core, the workers have none to gain.",
        "",
        "## Decompression bombs",
        "",
        "| bomb | compressed KB | decompresses to MB | limit | seconds | peak MB | records | last error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for b in results["bombs"]:
        limit = "default (64 GiB)" if not b["limit"] else f"{b['limit']:,} bytes"
        lines.append(
            f"| {b['kind']} | {b['compressed_kb']:.1f} | {b['decompressed_mb']:.0f} | {limit} | {b['seconds']:.1f} | "
            f"{b['peak_mb']:.0f} | {b['records']} | {b['error'] or '—'} |"
        )
    lines += ["", "Raw figures: `benchmarks/results.json`.", ""]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small files: the whole run under two minutes")
    parser.add_argument("--workdir", help="where the generated files go (default: a temporary folder)")
    parser.add_argument("--reference-python", help="an interpreter with hermes-agent 0.19.0 (to_sharegpt figure)")
    parser.add_argument("--output", default=str(HERE / "results.md"))
    parser.add_argument(
        "--formats", help="only the every-format table, for these formats (comma-separated), printed: no results.md"
    )
    args = parser.parse_args()
    compile_package()  # timed imports as a pip-installed package has them (common.compile_package)
    work = Path(tempfile.mkdtemp(prefix="pchronicle-bench-", dir=args.workdir))
    quick = args.quick
    if args.formats:
        try:
            rows = format_loads(
                work,
                (4 if quick else 30) << 20,
                2 if quick else 8,
                2 if quick else FORMAT_PROCESSES,
                tuple(args.formats.split(",")),
            )
        finally:
            shutil.rmtree(work, ignore_errors=True)
        print("\n".join(format_table(rows)))
        return
    start = time.perf_counter()
    try:
        results = {
            "when": time.strftime("%Y-%m-%d"),
            "machine": f"{os.cpu_count()} cores, Python {platform.python_version()}",
            "readers": reader_speeds(work, (4 if quick else 30) << 20),
            "json_ratio": json_ratio(work, 8, (1 if quick else 25) << 20, 3),
            "formats": format_loads(
                work, (4 if quick else 30) << 20, 2 if quick else 8, 2 if quick else FORMAT_PROCESSES
            ),
            "sharegpt": sharegpt_ratio(args.reference_python, 500 if quick else 2000),
            "memory": memory_by_size(work, [20 << 20, 150 << 20] if quick else [100 << 20, 1 << 30, 3 << 30]),
            "many": many_files(work, 40 if quick else 400, (1 << 19) if quick else (1 << 20)),
            "bombs": bombs(work, (256 if quick else 4096) << 20, (600 if quick else 2048) << 20),
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)
    command = "python benchmarks/run.py" + (" --quick" if quick else "")
    if args.reference_python:
        command += f" --reference-python {args.reference_python}"
    out = Path(args.output)
    out.parent.mkdir(parents=True, exist_ok=True)
    picture = plot(results, out.with_suffix(".png"))
    out.write_text(report(results, command, picture), encoding="utf-8")
    out.with_suffix(".json").write_text(json.dumps(results, indent=1, default=str), encoding="utf-8")
    print(out.read_text(encoding="utf-8"))
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
