"""``pchronicle-datasets convert … --engine spark [--master URL]``: the convert command run on Spark.

Outputs are folders, as Spark writes them: ``--to parquet`` a folder of Parquet files, ``--to storyline``,
``openai-msg`` or ``sharegpt`` a folder of ``part-NNNNN`` files of that format, ``--to dataset`` a
``datasets`` directory (``save_to_disk``). With ``--on-bad-records skip``, ``--quarantine PATH`` is the local
engine's quarantine file: the driver appends each bad record to it (``quarantine.Quarantine``), so both engines
share one append-only log.

The local engine's output rules hold (``atomic.check_output``): a local output is written under a temporary
name next to ``OUT`` and renamed into place, so it holds exactly what this run wrote; an existing ``OUT`` is
replaced only when it holds nothing but a previous run's files of this output; an output that is one of the
inputs, or read-only, is refused. Another URL (``s3://``…) cannot be renamed into place: it must not exist yet,
or be an empty folder.
"""

from __future__ import annotations

import argparse
import contextlib
import re
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import fsspec

from ..atomic import AtomicOutput, OutputError, check_output, is_dataset_file
from ..formats import get_format
from ..loading.policy import CommandBadRecords, no_conversation_note
from .read import read
from .session import local_session
from .write import write_format, write_parquet

__all__ = ["convert", "replaceable"]

#: What Spark writes in a Parquet folder: part files, the ``_SUCCESS`` marker, and Hadoop's ``.crc`` checksums.
_PARQUET_FILE = re.compile(r"\.?(part-\d{5}-[\w.-]*\.parquet|_SUCCESS)(\.crc)?")


def replaceable(target: str) -> Callable[[str], bool]:
    """The names a previous run of ``convert --to TARGET --engine spark`` writes in its folder: an existing
    folder holding only those is replaced whole; anything else makes the run refuse (``atomic.check_output``)."""
    if target == "parquet":
        return lambda n: bool(_PARQUET_FILE.fullmatch(n))
    if target == "dataset":
        return is_dataset_file
    parts = re.compile(rf"part-\d{{5}}{re.escape(get_format(target).EXTENSION)}")
    return lambda n: bool(parts.fullmatch(n))


@contextlib.contextmanager
def _remote_output(url: str) -> Iterator[str]:
    """An output at a URL Spark writes but that cannot be renamed into place: refused when it holds anything
    (an earlier output's files would stay beside this one's), removed again when the run fails."""
    fs, root = fsspec.core.url_to_fs(url)
    if fs.exists(root) and (not fs.isdir(root) or fs.ls(root)):
        raise OutputError(url, "it exists and is not an empty folder: refusing to replace it (write to a new folder)")
    try:
        yield url
    except BaseException:
        with contextlib.suppress(OSError):
            if fs.exists(root):
                fs.rm(root, recursive=True)
        raise


def _output(args: argparse.Namespace) -> contextlib.AbstractContextManager[Path | str]:
    """The output folder, checked (and, when local, created as a temporary) before Spark starts."""
    url = args.output
    local = url[len("file://") :] if url.startswith("file://") else url
    if "://" in local:
        check_output(url, folder=True, inputs=args.inputs)  # an output among the inputs is refused here too
        return _remote_output(url)
    return AtomicOutput(local, folder=True, replaceable=replaceable(args.target), inputs=args.inputs)


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
    # Everything that can be refused is refused before Spark starts: the output, then the quarantine file.
    with _output(args) as tmp:
        bad = CommandBadRecords(args.on_bad_records, args.quarantine, args.inputs, args.output)
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
        folder = str(tmp)
        if args.target == "parquet":
            write_parquet(rows, folder, mode="overwrite")  # the fresh temporary folder (or an empty remote one)
            count = rows.count()
        elif args.target == "dataset":
            count = _write_dataset(rows, folder)
        else:
            count = sum(n for _, n in write_format(rows, folder, args.target))
        if args.on_bad_records == "skip":
            # The driver appends the bad records, a partition at a time, as the local engine does: the same
            # entries (with this run's id) in the same append-only file, never a folder in its place.
            for row in got.bad_records.toLocalIterator():
                bad.quarantine.add_entry(row.asDict(recursive=True))
            if bad.count:
                print(bad.quarantine.summary(), file=sys.stderr)
        if note := no_conversation_note([(row.file, "") for row in got.no_conversation.toLocalIterator()]):
            print(note, file=sys.stderr)
    print(f"wrote {count} document(s) to {args.output}", file=sys.stderr)
    return 0


def _write_dataset(rows, folder: str) -> int:
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
        ds.save_to_disk(folder)
        return ds.num_rows
