"""``pchronicle-datasets convert … --engine spark [--master URL]``: the convert command run on Spark.

Outputs are folders, as Spark writes them: ``--to parquet`` a folder of Parquet files, ``--to storyline``,
``openai-msg`` or ``sharegpt`` a folder of ``part-NNNNN`` files of that format, ``--to dataset`` a
``datasets`` directory (``save_to_disk``). With ``--on-bad-records skip``, ``--quarantine PATH`` is a folder
of JSON Lines files of the bad records.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile

from .read import read
from .session import local_session
from .write import write_format, write_parquet

__all__ = ["convert"]


# The error a task raised, as Spark reports it (at the end of the worker's traceback, inside a Java exception).
_TASK_ERROR = re.compile(r"pchronicle_datasets\.\w+(?:\.\w+)*\.\w+Error: (.+)")


def convert(args: argparse.Namespace) -> int:
    """Run ``convert`` with Spark; ``args`` are the CLI's (``inputs``, ``source``, ``target``, ``output``…). A
    bad record that fails the job (``--on-bad-records error``: a bad line, a decompression bomb past
    ``--max-decompressed-size``, a record past ``--max-record-size``) ends the command with the local engine's
    message, exit status 1."""
    try:
        return _convert(args)
    except Exception as exc:  # pyspark's PythonException / Py4JJavaError carry the task's error as text
        found = _TASK_ERROR.findall(str(exc))
        if not found:
            raise
        message = found[-1]
        raise SystemExit(f"pchronicle-datasets: {message.strip()}") from None


def _convert(args: argparse.Namespace) -> int:
    if args.per_document:
        raise SystemExit("pchronicle-datasets: --per-document is not available with --engine spark")
    spark = local_session(args.master or "local[*]", app_name="pchronicle-datasets convert")
    got = read(
        spark,
        args.inputs,
        args.source,
        on_bad_records=args.on_bad_records,
        max_decompressed_size=args.max_decompressed_size,
        max_record_size=args.max_record_size,
    ).cache()
    rows = got.rows
    if args.target == "parquet":
        write_parquet(rows, args.output, mode="overwrite")
    elif args.target == "dataset":
        from datasets import load_dataset

        from ..features import STORYLINE_FEATURES

        with tempfile.TemporaryDirectory() as tmp:
            write_parquet(rows, f"{tmp}/parquet")
            ds = load_dataset(
                "parquet",
                data_files=f"{tmp}/parquet/*.parquet",
                features=STORYLINE_FEATURES,
                split="train",
                cache_dir=f"{tmp}/cache",
            )
            ds.save_to_disk(args.output)
    else:
        write_format(rows, args.output, args.target)
    count = rows.count()
    if args.on_bad_records == "skip":
        skipped = got.write_quarantine(args.quarantine) if args.quarantine else got.bad_records.count()
        if skipped:
            where = f"; quarantined to {args.quarantine}" if args.quarantine else ""
            print(f"pchronicle-datasets: skipped {skipped} bad record(s){where}", file=sys.stderr)
    print(f"wrote {count} document(s) to {args.output}", file=sys.stderr)
    return 0
