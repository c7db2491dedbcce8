"""The quarantine file: one JSON line per bad record left out under the skip policy (CLI and builder alike).

The file is an append-only log of runs. Each entry is one line, written whole with a single append, so an
entry is complete or absent: a run killed mid-write (or a full disk) can leave at most a partial last line,
which the next run removes before it appends (``repair``), and which ``read_quarantine`` never returns.
Every entry carries ``run``, the id of the command or ``load_dataset`` call that wrote it, so the entries of
one run can be told from an earlier one's:

``{"run", "file", "line", "pointer", "error", "error_type", "record"}``

>>> import tempfile, pathlib
>>> from pchronicle_datasets.errors import FormatError
>>> from pchronicle_datasets.formats.base import Record
>>> path = pathlib.Path(tempfile.mkdtemp()) / "bad.jsonl"
>>> q = Quarantine(path, run="r1")
>>> q.add("a.jsonl", Record(3, b"{not json", error=FormatError("not valid JSON", document_id="a.jsonl", line=3)))
>>> [(e["run"], e["file"], e["line"], e["record"]) for e in read_quarantine(path)]
[('r1', 'a.jsonl', 3, '{not json')]
"""

from __future__ import annotations

import datetime
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from .errors import PchronicleError
from .formats.base import Record

__all__ = [
    "MAX_EXAMPLES",
    "Quarantine",
    "QuarantineError",
    "check_writable",
    "new_run_id",
    "quarantine_entry",
    "read_quarantine",
    "repair",
]

MAX_EXAMPLES = 10  # bad records described one by one (per command, per file in the builder); then one summary
_lock = threading.Lock()


class QuarantineError(PchronicleError):
    """The quarantine file cannot be written (``document_id`` is its path; the message says the cause)."""


def new_run_id() -> str:
    """A sortable, unique run id: UTC time and a random suffix.

    >>> len(new_run_id().split("-")) == 2
    True
    """
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return f"{now}-{uuid.uuid4().hex[:8]}"


def _error(path: str | os.PathLike, action: str, exc: OSError) -> QuarantineError:
    cause = exc.strerror or str(exc)
    reason = f"cannot {action} the quarantine file: {cause} [{type(exc).__name__}]"
    return QuarantineError(reason, document_id=str(path))


def check_writable(path: str | os.PathLike) -> None:
    """Raise ``QuarantineError`` unless ``path`` can be appended to (or created), without creating it."""
    p = Path(path)
    target = p if p.exists() else next((q for q in p.parents if q.exists()), Path("."))
    if p.is_dir() or not os.access(target, os.W_OK):
        raise _error(path, "write", PermissionError(13, "not writable" if not p.is_dir() else "it is a folder"))


def repair(path: str | os.PathLike) -> int:
    """Remove a partial last line (one a crashed run left); returns the number of bytes removed.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "q.jsonl"
    >>> _ = path.write_bytes(b'{"run": "a"}\\n{"run": "b", "fi')
    >>> repair(path), path.read_bytes()
    (16, b'{"run": "a"}\\n')
    """
    try:
        with open(path, "r+b") as f:
            size = f.seek(0, os.SEEK_END)
            if size == 0:
                return 0
            # Look back for the last newline, a block at a time: entries can be long.
            end = pos = size
            while pos > 0:
                step = min(65536, pos)
                f.seek(pos - step)
                block = f.read(step)
                if pos == end and block.endswith(b"\n"):
                    return 0
                cut = block.rfind(b"\n")
                if cut >= 0:
                    keep = pos - step + cut + 1
                    break
                pos -= step
            else:
                keep = 0
            f.truncate(keep)
            return size - keep
    except FileNotFoundError:
        return 0
    except OSError as exc:
        raise _error(path, "repair", exc) from None


def read_quarantine(path: str | os.PathLike) -> Iterator[dict[str, Any]]:
    """The complete entries of a quarantine file, in order (a partial last line is not an entry)."""
    with open(path, "rb") as f:
        for line in f:
            if line.endswith(b"\n") and line.strip():
                yield json.loads(line)


def _append(path: str, data: bytes) -> None:
    # One O_APPEND write per entry: entries of parallel workers never interleave; a short write (full disk)
    # is finished or reported, never left for the next entry to append onto.
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def quarantine_entry(file: str, rec: Record, run: str | None = None) -> dict[str, Any]:
    """The one quarantine entry of a bad record: ``run`` (when given), ``file``, ``line``, ``pointer``, ``error``,
    ``error_type`` and the record's source text. The builder, the CLI and the Spark path all write this."""
    err = rec.error
    entry: dict[str, Any] = {"run": run} if run is not None else {}
    entry.update(
        {
            "file": file,
            "line": err.line if err is not None and err.line is not None else rec.line,
            "pointer": err.pointer if err is not None else "",
            "error": str(err),
            "error_type": type(err).__name__,
            "record": rec.raw.decode("utf-8", "replace") if rec.raw else None,
        }
    )
    return entry


class Quarantine:
    """The skip policy's record of one run: counts, a bounded log of examples, and the quarantine file.

    ``path``: the quarantine file or None; ``run``: the run id (a new one by default); ``log``: where the
    first ``examples`` bad records are described, one message each (the caller prints a summary with
    ``count``). ``write=False`` counts and logs without appending (a pass whose entries are already written).
    """

    def __init__(
        self,
        path: str | os.PathLike | None,
        *,
        run: str | None = None,
        log: Callable[[str], None] | None = None,
        examples: int = MAX_EXAMPLES,
        write: bool = True,
    ) -> None:
        self.path = str(path) if path else None
        self.run = run or new_run_id()
        self.log = log
        self.examples = examples
        self.write = write
        self.count = 0

    def add(self, file: str, rec: Record) -> None:
        """Count ``rec`` (a bad record of ``file``), describe it if among the first ones, and append its entry."""
        err = rec.error
        self.count += 1
        if self.log is not None and self.count <= self.examples:
            self.log(f"skipped a bad record: {err}")
        if not (self.path and self.write):
            return
        self._append(quarantine_entry(file, rec, self.run))

    def add_entry(self, entry: dict[str, Any]) -> None:
        """Count, describe and append a bad record already made an entry (``quarantine_entry`` without a run,
        as a Spark job's ``bad_records`` hold them): it is written with this run's id, as ``add`` writes it."""
        self.count += 1
        if self.log is not None and self.count <= self.examples:
            self.log(f"skipped a bad record: {entry.get('error')}")
        if self.path and self.write:
            self._append({"run": self.run, **{k: v for k, v in entry.items() if k != "run"}})

    def _append(self, entry: dict[str, Any]) -> None:
        data = (json.dumps(entry, ensure_ascii=False) + "\n").encode("utf-8", "replace")
        try:
            with _lock:
                _append(self.path, data)
        except OSError as exc:
            raise _error(self.path, "write", exc) from None

    def summary(self, where: str = "") -> str:
        """One line: how many records were skipped, how many were described, where the entries went."""
        shown = f", the first {self.examples} shown" if self.count > self.examples and self.log is not None else ""
        to = f"; quarantined to {self.path} (run {self.run})" if self.path and self.write else ""
        return f"skipped {self.count} bad record(s){where}{shown}{to}"
