"""The bad-record policy of a load, the error that stops one, and the quarantine file's setup: the same for
``load_dataset``, the CLI and Spark.

``on_bad_records`` is ``"error"`` (stop at the first bad record, naming its file, line and pointer) or
``"skip"`` (leave out the smallest unit that keeps the rest correct — a JSON Lines line that is not JSON, a
session that breaks a rule, an invalid document — and set it aside: counted, logged, and appended with its
error to the quarantine file when there is one).

A file that holds no conversation (``errors.NoConversationError``: a session header, Claude Code's title summaries
or file snapshots only) is not a bad record: every read leaves it out under either policy and names it in one
note (``no_conversation_note``), since every real session folder holds such files.

``BadRecords`` applies the policy to one read (the builder's, with its own refusal); ``CommandBadRecords`` is the
``--on-bad-records``/``--quarantine`` policy of a command, one object for both engines of the command line
(``cli.py``, ``spark/cli.py``) and ``redact --check``.

>>> from pchronicle_datasets.errors import FormatError
>>> str(refusal(FormatError("not JSON", line=3), "cap.jsonl"))  # doctest: +ELLIPSIS
'(root): not JSON [FormatError] in cap.jsonl line 3. To load the rest, ... pass on_bad_records="skip"'
>>> check_policy("ignore")
Traceback (most recent call last):
...
ValueError: on_bad_records must be 'error' or 'skip', got 'ignore'
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Literal

from ..atomic import OutputError, check_not_input, is_inside, same_path
from ..errors import BadRecordError, NoConversationError, PchronicleError
from ..formats.base import Record
from ..quarantine import Quarantine, QuarantineError, check_writable, repair

__all__ = [
    "POLICIES",
    "BadRecords",
    "CommandBadRecords",
    "Policy",
    "check_policy",
    "check_quarantine_path",
    "no_conversation",
    "no_conversation_note",
    "prepare_quarantine",
    "refusal",
]

Policy = Literal["error", "skip"]
POLICIES: tuple[Policy, ...] = ("error", "skip")


def check_policy(policy: object) -> Policy:
    """``policy`` when it is one of ``POLICIES``; ``ValueError`` otherwise."""
    if policy not in POLICIES:
        raise ValueError(f"on_bad_records must be 'error' or 'skip', got {policy!r}")
    return policy  # type: ignore[return-value]


def refusal(err: PchronicleError, name: str) -> BadRecordError:
    """The error that stops a load at a bad record: its reason with the kind of error that refused it, and its
    file (``name`` when the error does not name one), line and pointer."""
    kind = type(err).__name__
    return BadRecordError(
        f"{err.reason} [{kind}]", pointer=err.pointer, document_id=err.document_id or name, line=err.line
    )


def prepare_quarantine(path: str | os.PathLike, inputs: Sequence[str] = ()) -> int:
    """Make the quarantine file ready before any input is read: not one of ``inputs`` (the files of the read:
    its entries would be appended to the data being read), its folder created, the file checked writable,
    and a partial last entry an interrupted run left removed (the number of bytes removed is returned, for
    the caller to say). Raises ``QuarantineError`` naming the path and the cause."""
    for given in inputs:
        if same_path(path, given):
            raise QuarantineError(
                f"it is the input {given}: its entries would be appended to the data being read; "
                "name another quarantine file",
                document_id=str(path),
            )
    parent = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(parent, exist_ok=True)
    except OSError as exc:
        raise QuarantineError(f"cannot create its folder: {exc.strerror}", document_id=str(path)) from None
    check_writable(path)
    return repair(path)


class BadRecords:
    """The policy applied to the bad records of one read: ``take(name, rec)`` raises ``refuse(rec.error,
    name)`` under ``"error"`` (``refusal`` by default), or, under ``"skip"``, adds the record to
    ``quarantine`` (its counts, log and file)."""

    def __init__(
        self,
        policy: Policy,
        quarantine: Quarantine,
        refuse: Callable[[PchronicleError, str], Exception] = refusal,
    ) -> None:
        self.policy = check_policy(policy)
        self.quarantine = quarantine
        self.refuse = refuse
        self.no_conversation: list[tuple[str, str]] = []  # (file, why): left out, named in one note

    @property
    def count(self) -> int:
        return self.quarantine.count

    def take(self, name: str, rec: Record) -> None:
        assert rec.error is not None
        if (why := no_conversation(rec.error)) is not None:
            self.no_conversation.append((name, why))
            return
        if self.policy == "error":
            raise self.refuse(rec.error, name)
        self.quarantine.add(name, rec)


def no_conversation(err: Exception | None) -> str | None:
    """Why the file holds no conversation when ``err`` says so (a ``NoConversationError``: no bad record, every
    read leaves the file out), else None: the one test every read and command makes."""
    return err.reason if isinstance(err, NoConversationError) else None


def no_conversation_note(files: Sequence[tuple[str, str]]) -> str | None:
    """What a read says of the files it left out as holding no conversation (``BadRecords.no_conversation``):
    how many, and the first with its reason.

    >>> no_conversation_note([("p/a.jsonl", "only its header"), ("p/b.jsonl", "only its header")])
    'left out 2 files that hold no conversation: p/a.jsonl (only its header) and 1 more'

    A file of many records (a JSON Lines file of trajectories) may give several; they are counted as records:

    >>> no_conversation_note([("out.jsonl", "an empty history"), ("out.jsonl", "an empty history")])
    'left out 2 records that hold no conversation, in 1 file: out.jsonl (an empty history)'
    """
    if not files:
        return None
    (first, why), n = files[0], len(files)
    named = len({name for name, _ in files})
    what = f" ({why})" if why else ""
    if named < n:
        more = f" and {named - 1} more" if named > 1 else ""
        in_files = f"in {named} file{'s' if named > 1 else ''}"
        return f"left out {n} records that hold no conversation, {in_files}: {first}{what}{more}"
    more = f" and {n - 1} more" if n > 1 else ""
    files_hold = "files that hold" if n > 1 else "file that holds"
    return f"left out {n} {files_hold} no conversation: {first}{what}{more}"


def check_quarantine_path(path: str | Path, inputs: Sequence[str], output: str | None = None) -> None:
    """Refuse a quarantine file that is one of the inputs or the output (both engines): its entries would be
    appended to the data being read, or replaced by the output (or dropped with the folder output holding it)."""
    check_not_input(path, inputs)
    if output is not None and (same_path(path, output) or is_inside(path, output)):
        raise OutputError(path, f"it is the output {output}, or inside it: name another quarantine file")


def _own_error(err: PchronicleError, path: str) -> PchronicleError:
    return err  # a command stops with the record's own error (printed as "pchronicle-datasets: <error>")


class CommandBadRecords(BadRecords):
    """The ``--on-bad-records`` policy of a command (the CLI's and Spark's ``convert``, ``push``, ``redact
    --check``): stop at the first bad record with its own error, or set it aside. The quarantine file is checked
    (not an input, not the output) and made ready before any input is read; what it says goes to stderr."""

    def __init__(
        self, policy: str, quarantine: str | None, inputs: Sequence[str] = (), output: str | None = None
    ) -> None:
        target = Path(quarantine) if quarantine and policy == "skip" else None
        if target:
            check_quarantine_path(target, inputs, output)
        if target and (removed := prepare_quarantine(target)):
            print(f"removed a partial last entry ({removed} bytes) from {target}", file=sys.stderr)
        log = Quarantine(target, log=lambda message: print(message, file=sys.stderr))
        super().__init__(check_policy(policy), log, _own_error)
        self.log = log

    def __call__(self, path: str, rec: Record) -> None:
        self.take(path, rec)
