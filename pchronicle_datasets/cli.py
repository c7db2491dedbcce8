"""The ``pchronicle-datasets`` command line (also ``python -m pchronicle_datasets``).

Examples::

    pchronicle-datasets validate samples/*.storyline.json
    pchronicle-datasets convert run.storyline.json --from storyline --to parquet -o out/run.parquet
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import pyarrow.parquet as pq

from .errors import PchronicleError
from .features import rows_to_table, story_to_row
from .formats import format_names, get_format
from .storyline import iter_errors

EPILOG = """examples:
  pchronicle-datasets validate run.storyline.json more/*.jsonl
  pchronicle-datasets convert run.storyline.json --from storyline --to parquet -o out/run.parquet
  pchronicle-datasets convert a.jsonl b.jsonl --from storyline --to storyline -o out/all.storyline.jsonl
  pchronicle-datasets convert captures.jsonl --from openai-msg --to sharegpt -o out/train
      (writes out/train/trajectory_samples.jsonl and out/train/failed_trajectories.jsonl)
"""
TABLE_OUTPUTS = ("parquet",)


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SystemExit(f"pchronicle-datasets: cannot read {path}: {exc.strerror}") from None


def cmd_validate(args: argparse.Namespace) -> int:
    fmt = get_format(args.format)
    problems = documents = 0
    for path in args.inputs:
        for rec in fmt.iter_records(_read(path), path):
            if rec.error is None:
                documents += 1
                continue
            # Report every problem of a document, not only the first that refused it.
            errors = list(iter_errors(rec.value, document_id=path)) if isinstance(rec.value, dict) else []
            for err in errors or [rec.error]:
                problems += 1
                print(err.with_context(document_id=path, line=rec.line), file=sys.stdout)
    print(f"{documents} valid document(s), {problems} problem(s) in {len(args.inputs)} file(s)", file=sys.stderr)
    return 1 if problems else 0


def cmd_convert(args: argparse.Namespace) -> int:
    src = get_format(args.source)
    stories = []
    for path in args.inputs:
        stories.extend(src.decode(_read(path), path))
    out = Path(args.output)
    if args.target in TABLE_OUTPUTS:
        out.parent.mkdir(parents=True, exist_ok=True)
        table = rows_to_table(story_to_row(s, check=False) for s in stories)
        pq.write_table(table, out)
    elif get_format(args.target).NAME == "sharegpt":
        # The seed's file names: completed trajectories and the others, in the folder OUT.
        out.mkdir(parents=True, exist_ok=True)
        fmt = get_format("sharegpt")
        done = [s for s in stories if fmt.is_completed(s) is not False]
        failed = [s for s in stories if fmt.is_completed(s) is False]
        (out / "trajectory_samples.jsonl").write_text(fmt.encode(done), encoding="utf-8")
        (out / "failed_trajectories.jsonl").write_text(fmt.encode(failed), encoding="utf-8")
        print(
            f"wrote {len(done)} completed trajectories to {out / 'trajectory_samples.jsonl'} and "
            f"{len(failed)} others to {out / 'failed_trajectories.jsonl'}",
            file=sys.stderr,
        )
        return 0
    else:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(get_format(args.target).encode(stories), encoding="utf-8")
    print(f"wrote {len(stories)} document(s) to {out}", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="pchronicle-datasets",
        description="Convert, validate and inspect LLM-agent trajectories through Storyline (RFC-0001).",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True)
    names = format_names()
    v = sub.add_parser("validate", help="report every error of every input, with its file and pointer")
    v.add_argument("inputs", nargs="+", metavar="INPUT")
    v.add_argument("--format", default="storyline", choices=names)
    v.set_defaults(func=cmd_validate)
    c = sub.add_parser(
        "convert",
        help="convert inputs through Storyline",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    c.add_argument("inputs", nargs="+", metavar="INPUT")
    c.add_argument("--from", dest="source", default="storyline", choices=names)
    c.add_argument("--to", dest="target", required=True, choices=[*names, *TABLE_OUTPUTS])
    c.add_argument("-o", "--output", required=True, metavar="OUT")
    c.set_defaults(func=cmd_convert)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except PchronicleError as exc:
        print(f"pchronicle-datasets: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
