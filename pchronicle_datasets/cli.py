"""The ``pchronicle-datasets`` command line (also ``python -m pchronicle_datasets``).

Every command reads its inputs through fsspec (local paths, ``hf://``, ``s3://`` when installed),
decompresses gzip/zstd/bzip2/xz by content, and detects the format when ``--from auto`` (the default).

Outputs are complete or absent (``atomic.py``): ``convert`` creates its output under a temporary name next to
``OUT`` before it reads any input, and renames it into place when complete; SIGTERM and SIGHUP end a command
through its cleanup. Under ``--on-bad-records skip`` the first bad records are described one by one and one
summary gives the count; every one goes to the quarantine file (``quarantine.py``).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import json
import re
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from .atomic import AtomicOutput, OutputError
from .compression import MAX_DECOMPRESSED_SIZE
from .errors import PchronicleError, StorylineError
from .features import compute_tool_stats, rows_to_table, story_to_row
from .formats import format_names, formats, get_format, iter_records
from .formats.base import Record
from .formats.residual import residual_tools
from .losses import LossReport, collect_losses
from .paths import DOCUMENT_FILE_SUFFIX, document_file_names, safe_path
from .quarantine import Quarantine, QuarantineError, check_writable, repair
from .schema import iter_errors

EPILOG = """examples:
  pchronicle-datasets validate run.storyline.json captures/*.jsonl.gz
  pchronicle-datasets inspect captures/*.jsonl
  pchronicle-datasets convert captures/*.jsonl --from openai-msg --to sharegpt -o out/train
      (writes out/train/trajectory_samples.jsonl and out/train/failed_trajectories.jsonl)
  pchronicle-datasets convert run.storyline.json --to parquet -o out/run.parquet
  pchronicle-datasets convert captures/*.jsonl --to storyline --per-document -o out/sessions
  pchronicle-datasets convert captures/*.jsonl --to storyline -o out/all.storyline.jsonl --on-bad-records skip \\
      --quarantine out/bad.jsonl
  pchronicle-datasets push captures/*.jsonl --repo org/agent-sft --to sharegpt
  pchronicle-datasets convert 'captures/*.jsonl' --to parquet -o out/rows --engine spark --master local[2]
"""
TABLE_OUTPUTS = ("parquet", "dataset")
BATCH = 256  # documents encoded and written at a time by convert
PUSH_CONVERSIONS = ("rows", "sharegpt", "messages", "traces", "rows+traces")


def _fail(message: str) -> SystemExit:
    return SystemExit(f"pchronicle-datasets: {message}")


def _read(path: str) -> Any:
    """The input opened as a binary file (readers take it as a stream; ``_records`` closes it)."""
    try:
        return fsspec.open(path, "rb").open()
    except (OSError, ValueError, ImportError) as exc:
        raise _fail(f"cannot read {path}: {exc}") from None


def _records(
    paths: Sequence[str], fmt: str, desc: str, max_size: int = MAX_DECOMPRESSED_SIZE
) -> Iterator[tuple[str, Record]]:
    """Every record of every input, each file read as a stream (memory: the records being made)."""
    for path in tqdm(paths, desc=desc, unit="file", disable=None, file=sys.stderr):
        data = _read(path)
        try:
            for rec in iter_records(fmt, data, path, max_size=max_size):
                yield path, rec
        except OSError as exc:
            raise _fail(f"cannot read {path}: {exc}") from None
        finally:
            if hasattr(data, "close"):
                data.close()


class _BadRecords:
    """The ``--on-bad-records`` policy of a command: stop at the first bad record, or set it aside. The
    quarantine file is checked and repaired before any input is read."""

    def __init__(self, policy: str, quarantine: str | None) -> None:
        self.policy = policy
        self.quarantine = Path(quarantine) if quarantine and policy == "skip" else None
        if self.quarantine:
            try:
                self.quarantine.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise QuarantineError(f"cannot create its folder: {exc.strerror}", document_id=quarantine) from None
            check_writable(self.quarantine)
            if removed := repair(self.quarantine):
                print(f"removed a partial last entry ({removed} bytes) from {self.quarantine}", file=sys.stderr)
        self.log = Quarantine(self.quarantine, log=lambda message: print(message, file=sys.stderr))

    @property
    def count(self) -> int:
        return self.log.count

    def __call__(self, path: str, rec: Record) -> None:
        if self.policy == "error":
            raise rec.error  # type: ignore[misc]
        self.log.add(path, rec)


def _stories(args: argparse.Namespace, desc: str) -> list[dict[str, Any]]:
    return list(_iter_stories(args, desc, _BadRecords(args.on_bad_records, args.quarantine)))


def _iter_stories(args: argparse.Namespace, desc: str, bad: _BadRecords) -> Iterator[dict[str, Any]]:
    for path, rec in _records(args.inputs, args.source, desc, args.max_decompressed_size):
        if rec.error is not None:
            bad(path, rec)
        else:
            yield rec.story
    if bad.count:
        print(bad.log.summary(), file=sys.stderr)


def _batches(stories: Iterator[dict[str, Any]], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    while batch := list(itertools.islice(stories, size)):
        yield batch


def cmd_validate(args: argparse.Namespace) -> int:
    problems = documents = 0
    for path, rec in _records(args.inputs, args.source, "validating", args.max_decompressed_size):
        if rec.error is None:
            documents += 1
            continue
        # Report every problem of a Storyline document, not only the first that refused it.
        storyline_doc = isinstance(rec.error, StorylineError) and isinstance(rec.value, dict)
        errors = list(iter_errors(rec.value, document_id=path)) if storyline_doc else []
        for err in errors or [rec.error]:
            problems += 1
            print(err.with_context(document_id=path, line=rec.line))
    print(f"{documents} valid document(s), {problems} problem(s) in {len(args.inputs)} file(s)", file=sys.stderr)
    return 1 if problems else 0


_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_INDEX = re.compile(r"(?<=/)\d+(?=/|$)")


def _reason_key(error: Exception) -> tuple[str, str]:
    """What groups bad records: the error's pointer with array indices as ``*`` and its reason with quoted
    values as ``…`` (``/conversations/*``, ``the ShareGPT reader does not know the role "…"``)."""
    pointer = getattr(error, "pointer", "") or ""
    reason = getattr(error, "reason", str(error))
    return _INDEX.sub("*", pointer), _QUOTED.sub('"…"', reason)


class _BadByReason:
    """Bad records grouped by reason: a count and the first file, line and pointer of each reason."""

    def __init__(self) -> None:
        self.groups: dict[tuple[str, str], dict[str, Any]] = {}

    def add(self, path: str, rec: Record) -> None:
        err = rec.error
        key = _reason_key(err)  # type: ignore[arg-type]
        group = self.groups.get(key)
        if group is None:
            line = getattr(err, "line", None) if getattr(err, "line", None) is not None else rec.line
            first = {"file": path, "line": line, "pointer": getattr(err, "pointer", "")}
            group = self.groups[key] = {"reason": key[1], "pointer": key[0], "count": 0, "first": first}
        group["count"] += 1

    def report(self) -> list[dict[str, Any]]:
        return sorted(self.groups.values(), key=lambda g: -g["count"])

    def lines(self) -> list[str]:
        out = []
        for g in self.report():
            first = g["first"]
            where = first["file"] + (f" line {first['line']}" if first["line"] is not None else "")
            where += f" at {first['pointer'] or '(root)'}"
            out.append(f"{g['count']:>6}  {g['pointer'] or '(root)'}: {g['reason']}  (first: {where})")
        return out


def cmd_inspect(args: argparse.Namespace) -> int:
    formats: collections.Counter = collections.Counter()
    bad = _BadByReason()
    tools: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    shapes: collections.Counter = collections.Counter()  # messages per provider shape (the reader's hints)
    for path, rec in _records(args.inputs, args.source, "inspecting", args.max_decompressed_size):
        if rec.error is not None:
            totals["bad"] += 1
            bad.add(path, rec)
            continue
        story = rec.story
        fmt = (story.get("origin") or {}).get("format", "storyline")
        formats[fmt] += 1
        hints = (story.get("meta") or {}).get(fmt)
        if isinstance(hints, dict) and isinstance(hints.get("shapes"), dict):
            shapes.update(hints["shapes"])
        totals["documents"] += 1
        totals["turns"] += len(story["turns"])
        totals["tool calls"] += sum(len(t.get("tool_calls") or ()) for t in story["turns"])
        totals["with reasoning"] += any(
            isinstance(t.get("reason"), str) and t["reason"].strip() for t in story["turns"]
        )
        totals["residual tools"] += residual_tools(story)  # tool definitions beside /agent/tools (#11)
        for entry in compute_tool_stats(story):
            tools[entry["tool"]].update({k: entry[k] for k in ("count", "success", "failure")})
    report = {
        "files": len(args.inputs),
        "documents_per_format": dict(sorted(formats.items())),
        **{k: totals[k] for k in ("documents", "turns", "tool calls", "with reasoning")},
        "bad_records": totals["bad"],
        "bad_records_by_reason": bad.report(),
        "residual_tools": totals["residual tools"],
        "message_shapes": dict(sorted(shapes.items())),
        "tools": {name: dict(c) for name, c in sorted(tools.items(), key=lambda kv: -kv[1]["count"])},
    }
    # A call no result answers (a cut session, Pi's calls before a compaction): counted, never balanced away.
    report["tool_calls_without_result"] = sum(c["count"] - c["success"] - c["failure"] for c in tools.values())
    status = 1 if totals["bad"] else 0  # like validate: any bad record fails the command
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
        return status
    print(f"files: {report['files']}   documents: {totals['documents']}   bad records: {report['bad_records']}")
    print("documents per source format: " + ", ".join(f"{k} {v}" for k, v in report["documents_per_format"].items()))
    docs = max(1, totals["documents"])
    print(
        f"turns: {totals['turns']} ({totals['turns'] / docs:.1f} per document)   tool calls: {totals['tool calls']} "
        f"({totals['tool calls'] / docs:.1f} per document)   with reasoning: {totals['with reasoning']}"
    )
    if shapes:
        print("messages per provider shape: " + ", ".join(f"{k} {v}" for k, v in report["message_shapes"].items()))
    if totals["residual tools"]:  # e.g. gateway rows whose tools differ from the session's /agent/tools
        print(f"tool definitions kept as residual (not in /agent/tools): {totals['residual tools']}")
    if tools:
        print(f"tool calls without a result: {report['tool_calls_without_result']}")
        print(f"{'tool':<32}{'calls':>8}{'success':>9}{'failure':>9}{'no result':>11}")
        for name, c in report["tools"].items():
            none = c.get("count", 0) - c.get("success", 0) - c.get("failure", 0)
            print(f"{name:<32}{c.get('count', 0):>8}{c.get('success', 0):>9}{c.get('failure', 0):>9}{none:>11}")
    if totals["bad"]:
        print("bad records by reason (count, reason, first occurrence):")
        for line in bad.lines():
            print(line)
    return status


_DATASET_FILE = re.compile(r"(data-\d{5}-of-\d{5}\.arrow|dataset_info\.json|state\.json)")


def _output(args: argparse.Namespace) -> AtomicOutput:
    """The output of ``convert``, created (as a temporary) before any input is read."""
    out = Path(args.output)
    if args.target == "dataset":
        return AtomicOutput(out, folder=True, replaceable=lambda n: bool(_DATASET_FILE.fullmatch(n)))
    if args.target == "parquet":
        return AtomicOutput(out)
    fmt = get_format(args.target)  # an unknown target fails before reading anything
    if args.per_document:
        if not fmt.PER_DOCUMENT:
            per_doc = ", ".join(f.NAME for f in formats() if f.PER_DOCUMENT)
            raise _fail(f"--per-document writes one file per document, which only these formats do: {per_doc}")
        return AtomicOutput(out, folder=True, replaceable=lambda n: n.endswith(DOCUMENT_FILE_SUFFIX))
    if fmt.OUTPUT == "folder":
        return AtomicOutput(out, folder=True, replaceable=lambda n: n.endswith(fmt.EXTENSION))
    return AtomicOutput(out)


def cmd_convert(args: argparse.Namespace) -> int:
    if args.engine == "spark":  # the Spark engine (the `spark` extra): pchronicle_datasets/spark/cli.py
        if args.target not in TABLE_OUTPUTS:
            get_format(args.target)  # an unknown target fails before anything starts
        from .spark.cli import convert as spark_convert

        return spark_convert(args)
    output = _output(args)
    with output as tmp, collect_losses() as losses:  # one report, not a warning per lossy value
        stories = _iter_stories(args, "converting", _BadRecords(args.on_bad_records, args.quarantine))
        message = _write(args, stories, tmp, Path(args.output))
    print(message, file=sys.stderr)
    _print_losses(losses)
    return 0


def _print_losses(losses: LossReport) -> None:
    """The loss report of a command (``losses.py``): what the target could not hold, by kind, with the first
    pointer of each and what it means; nothing when nothing was lost."""
    if losses:
        print(f"losses: {losses.summary()}", file=sys.stderr)
        for line in losses.explain():
            print(f"  {line}", file=sys.stderr)


def _write(args: argparse.Namespace, stories: Iterator[dict[str, Any]], tmp: Path, out: Path) -> str:
    """Write ``stories`` to the temporary ``tmp`` (a file, or a fresh folder) as they come, a batch at a time
    (a writer that needs every document at once — ``ENCODE_IN_BATCHES`` false — gets the list); the message
    names ``out``."""
    if args.target in TABLE_OUTPUTS:
        return f"wrote {_write_table(args.target, stories, tmp)} document(s) to {out}"
    fmt = get_format(args.target)
    count = 0
    if args.per_document:
        # RFC-0001's file convention, with names made safe: a session id never leaves OUT or clashes. The names
        # depend on every session id, so each document waits in a numbered file until all are known.
        sessions = []
        for story in stories:
            (tmp / f".part-{len(sessions)}").write_text(fmt.encode([story]), encoding="utf-8")
            sessions.append(story["session"])
        for i, name in enumerate(document_file_names(sessions)):
            (tmp / f".part-{i}").replace(safe_path(tmp, name))
        return f"wrote {len(sessions)} document(s) to {out}"
    if fmt.OUTPUT == "folder":
        # The format's own layout (ShareGPT: the seed's completed and failed trajectories), in the folder OUT.
        lines: dict[str, int] = {}
        batched = getattr(fmt, "ENCODE_IN_BATCHES", False)
        for batch in _batches(stories) if batched else [list(stories)]:
            for name, text in fmt.encode_folder(batch).items():  # type: ignore[attr-defined]
                _write_text(safe_path(tmp, name), text, append=name in lines)
                lines[name] = lines.get(name, 0) + text.count("\n")
        if not lines:  # no document: the folder still gets the format's (empty) files
            for name, text in fmt.encode_folder([]).items():  # type: ignore[attr-defined]
                _write_text(safe_path(tmp, name), text, append=False)
                lines[name] = text.count("\n")
        return "wrote " + ", ".join(f"{n} record(s) to {out / name}" for name, n in lines.items())
    for batch in _batches(stories) if getattr(fmt, "ENCODE_IN_BATCHES", False) else [list(stories)]:
        _write_text(tmp, fmt.encode(batch), append=count > 0)
        count += len(batch)
    if not count:
        _write_text(tmp, fmt.encode([]), append=False)
    return f"wrote {count} document(s) to {out}"


def _write_text(path: Path, text: str, *, append: bool) -> None:
    if not append:
        path.write_text(text, encoding="utf-8")
        return
    with path.open("a", encoding="utf-8") as f:
        f.write(text)


def _write_table(target: str, stories: Iterator[dict[str, Any]], tmp: Path) -> int:
    """Rows as Parquet (one row group per batch) or as a datasets folder (an Arrow file first, memory-mapped)."""
    arrow = tmp.with_name(tmp.name + ".arrow") if target == "dataset" else None
    writer: Any = None
    try:
        batches = _batches(stories)
        first = next(batches, [])
        table = rows_to_table(story_to_row(s, check=False) for s in first)
        count = len(first)
        second = next(batches, None)
        if second is None and arrow is None:
            pq.write_table(table, tmp)  # one batch: one write
        else:
            writer = pq.ParquetWriter(tmp, table.schema) if arrow is None else pa.ipc.new_stream(arrow, table.schema)
            writer.write_table(table)
            for batch in itertools.chain([second] if second else [], batches):
                writer.write_table(rows_to_table(story_to_row(s, check=False) for s in batch))
                count += len(batch)
            writer.close()
            writer = None
        if arrow is not None:
            from datasets import Dataset

            Dataset.from_file(str(arrow)).save_to_disk(str(tmp))
    finally:
        if writer is not None:
            writer.close()
        if arrow is not None:
            arrow.unlink(missing_ok=True)
    return count


def cmd_push(args: argparse.Namespace) -> int:
    from datasets import Dataset

    from .hub import push_to_hub
    from .output_features import MESSAGES_FEATURES, SHAREGPT_FEATURES
    from .training import to_messages, to_sharegpt

    stories = _stories(args, "reading")
    ds = Dataset(rows_to_table(story_to_row(s, check=False) for s in stories))
    conversion = f"{args.source} → Storyline rows"
    layout = {"traces": "traces", "rows+traces": "both"}.get(args.to, "parquet")
    with collect_losses() as losses:
        if layout != "parquet":
            conversion = f"{args.source} → Storyline → agent traces (STS)"
        elif args.to != "rows":
            fn = to_sharegpt if args.to == "sharegpt" else to_messages
            features = SHAREGPT_FEATURES if args.to == "sharegpt" else MESSAGES_FEATURES
            ds = ds.map(fn, remove_columns=ds.column_names, features=features, desc=f"to_{args.to}")
            conversion = f"{args.source} → {fn.__name__}"
        info = push_to_hub(
            ds, args.repo, conversion=conversion, token=args.token, private=args.private or None, layout=layout
        )
    print(f"pushed {ds.num_rows} row(s) to {args.repo}: {getattr(info, 'commit_url', info)}", file=sys.stderr)
    _print_losses(losses)
    return 0


def _add_reading(p: argparse.ArgumentParser, *, policy: bool = True) -> None:
    p.add_argument("inputs", nargs="+", metavar="INPUT", help="files: local paths or fsspec URLs; may be compressed")
    p.add_argument(
        "--from",
        dest="source",
        default="auto",
        choices=["auto", *format_names()],
        help="the input format (default: detect it from each file's content)",
    )
    p.add_argument(
        "--max-decompressed-size",
        type=_size,
        default=MAX_DECOMPRESSED_SIZE,
        metavar="BYTES",
        help="the most bytes one compressed input may decompress to (default 64G; suffixes K, M, G, T): a "
        "decompression bomb stops there with an error naming the file and the limit",
    )
    if policy:
        p.add_argument(
            "--on-bad-records",
            choices=("error", "skip"),
            default="error",
            help="stop at the first bad record (default) or skip it",
        )
        p.add_argument("--quarantine", metavar="PATH", help="with skip: append each bad record and its error here")


def _size(text: str) -> int:
    """A byte count: digits with an optional K, M, G or T suffix (powers of 1024).

    >>> _size("64G"), _size("1000")
    (68719476736, 1000)
    """
    units = {"K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
    text = text.strip().upper().removesuffix("B")
    scale = units.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in units else text
    if not digits.isdigit() or int(digits) < 1:
        raise argparse.ArgumentTypeError(f"a positive size in bytes (optionally with K, M, G or T), got {text!r}")
    return int(digits) * scale


def _command(sub: Any, name: str, help: str) -> argparse.ArgumentParser:
    """A subcommand whose --help ends with the examples."""
    return sub.add_parser(name, help=help, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pchronicle-datasets",
        description="Convert, validate, inspect and publish LLM-agent trajectories through Storyline (RFC-0001).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    v = _command(sub, "validate", "report every error of every input, with its file, line and pointer")
    _add_reading(v, policy=False)
    v.set_defaults(func=cmd_validate)
    i = _command(
        sub, "inspect", "counts per format, turns, tool calls, tool usage and bad records by reason (exit 1 if any)"
    )
    _add_reading(i, policy=False)
    i.add_argument("--json", action="store_true", help="print the report as JSON")
    i.set_defaults(func=cmd_inspect)
    c = _command(sub, "convert", "convert inputs through Storyline")
    _add_reading(c)
    c.add_argument(
        "--to",
        dest="target",
        required=True,
        choices=[*format_names(), *TABLE_OUTPUTS],
        help="a format; parquet (one file); dataset (a datasets directory, save_to_disk)",
    )
    c.add_argument("-o", "--output", required=True, metavar="OUT")
    c.add_argument(
        "--per-document",
        action="store_true",
        help="with --to storyline: OUT is a folder of {session}.storyline.json files (safe names)",
    )
    # --- the Spark engine (pchronicle_datasets.spark; needs the `spark` extra)
    c.add_argument(
        "--engine",
        choices=("local", "spark"),
        default="local",
        help="local (default) or spark: read and write with Spark; outputs are folders (see docs/scaling.md)",
    )
    c.add_argument("--master", metavar="URL", help="with --engine spark: the Spark master (default local[*])")
    # ---
    c.set_defaults(func=cmd_convert)
    p = _command(sub, "push", "publish inputs to the Hugging Face Hub as Parquet with a dataset card")
    _add_reading(p)
    p.add_argument("--repo", required=True, metavar="ORG/NAME")
    p.add_argument(
        "--to",
        choices=PUSH_CONVERSIONS,
        default="rows",
        help="Storyline rows (default), training examples (sharegpt, messages), or agent traces the Hub's viewer "
        "shows: traces (instead of rows) or rows+traces (beside them)",
    )
    p.add_argument("--token", help="a Hub token (default: the saved login or HF_TOKEN)")
    p.add_argument("--private", action="store_true")
    p.set_defaults(func=cmd_push)
    return parser


def _terminate(signum: int, frame: Any) -> None:
    # SIGTERM / SIGHUP end the command as an exception does: temporary outputs and staged folders are removed.
    raise SystemExit(128 + signum)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    previous = {}
    try:
        for sig in (signal.SIGTERM, getattr(signal, "SIGHUP", None)):
            if sig is not None:
                previous[sig] = signal.signal(sig, _terminate)
    except ValueError:  # not the main thread: signals stay as they are
        pass
    try:
        return args.func(args)
    except OutputError as exc:
        print(f"pchronicle-datasets: {exc}", file=sys.stderr)
        return 1
    except PchronicleError as exc:
        print(f"pchronicle-datasets: {exc}", file=sys.stderr)
        return 1
    except ValueError as exc:  # e.g. an unknown format name
        print(f"pchronicle-datasets: {exc}", file=sys.stderr)
        return 2
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
