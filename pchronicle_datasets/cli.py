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
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import fsspec
import pyarrow as pa
import pyarrow.parquet as pq
from tqdm.auto import tqdm

from .atomic import TEMP_MARK, AtomicOutput, OutputError, discard_unfinished, is_dataset_file
from .compression import MAX_DECOMPRESSED_SIZE
from .errors import PchronicleError, StorylineError
from .features import compute_tool_stats, rows_to_table, story_to_row
from .formats import capability, format_names, formats, get_format, iter_records
from .formats.base import Record
from .formats.residual import residual_tools
from .formats.source import MAX_RECORD_SIZE
from .loading.policy import CommandBadRecords, no_conversation, no_conversation_note
from .losses import LossReport, collect_losses
from .paths import DOCUMENT_FILE_SUFFIX, document_file_names, safe_path
from .redact import Redactor
from .redact import cli as redaction
from .schema import iter_errors
from .sidecars import folder_files, groups, index_note, join_members, pair, read_sidecar
from .training.policy import FLAGS, TRAINABLE, flags

EPILOG = """examples:
  pchronicle-datasets validate run.storyline.json captures/*.jsonl.gz
  pchronicle-datasets inspect captures/*.jsonl
  pchronicle-datasets convert captures/*.jsonl --from openai-msg --to sharegpt -o out/train
      (writes out/train/trajectory_samples.jsonl and out/train/failed_trajectories.jsonl)
  pchronicle-datasets convert run.storyline.json --to parquet -o out/run.parquet
  pchronicle-datasets convert runs/*.json --to prompt-completion --trainable last --drop-flagged incomplete,failed \\
      -o out/train.jsonl
  pchronicle-datasets convert captures/*.jsonl --to storyline --per-document -o out/sessions
  pchronicle-datasets convert captures/*.jsonl --to storyline -o out/all.storyline.jsonl --on-bad-records skip \\
      --quarantine out/bad.jsonl
  pchronicle-datasets push captures/*.jsonl --repo org/agent-sft --to sharegpt
  pchronicle-datasets redact --check captures/*.jsonl --secrets-file .env
  pchronicle-datasets convert 'captures/*.jsonl' --to parquet -o out/rows --engine spark --master local[2]
"""
TABLE_OUTPUTS = ("parquet", "dataset")
#: ``convert``'s training outputs beside the formats: one JSON Lines file of ``to_messages`` (the dataset form,
#: ``pc.MESSAGES_FEATURES``) or ``to_prompt_completion`` outputs, one example per document.
TRAINING_OUTPUTS = ("messages", "prompt-completion")
#: The targets ``--trainable`` and ``--mask-tool-arguments`` apply to (the ShareGPT writer marks its elements).
POLICY_TARGETS = ("sharegpt", *TRAINING_OUTPUTS)
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


def _read_sidecar(path: str) -> bytes:
    try:
        with fsspec.open(path, "rb") as f:
            return f.read()
    except (OSError, ValueError, ImportError) as exc:
        raise _fail(f"cannot read {path}: {exc}") from None


def _records(
    paths: Sequence[str],
    fmt: str,
    desc: str,
    max_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
) -> Iterator[tuple[str, Record]]:
    """Every record of every input, each file read as a stream (memory: the records being made); a folder is
    its files (``sidecars.folder_files``), a sidecar given to its file's reader instead of read as a document."""
    paths = folder_files(paths)
    keep, side = pair(paths)
    if note := index_note(paths):
        print(note, file=sys.stderr)
    grouped = groups(paths)  # files that are one document (an OpenHands conversation folder): read as one
    for k in tqdm(keep, desc=desc, unit="file", disable=None, file=sys.stderr):
        path = paths[k]
        sidecar = _read_sidecar(paths[side[k]]) if k in side else read_sidecar(path)
        if k in grouped:
            path, data = grouped[k][0], join_members([_read_sidecar(paths[j]) for j in grouped[k][1]])
        else:
            data = _read(path)
        try:
            for rec in iter_records(
                fmt, data, path, max_size=max_size, sidecar=sidecar, max_record_size=max_record_size
            ):
                yield path, rec
        except OSError as exc:
            raise _fail(f"cannot read {path}: {exc}") from None
        finally:
            if hasattr(data, "close"):
                data.close()


def _stories(args: argparse.Namespace, desc: str) -> list[dict[str, Any]]:
    return list(iter_stories(args, desc, CommandBadRecords(args.on_bad_records, args.quarantine, args.inputs)))


def iter_stories(
    args: argparse.Namespace, desc: str, bad: CommandBadRecords, redactor: Redactor | None = None
) -> Iterator[dict[str, Any]]:
    """The documents of a command's inputs (``args``: the reading options every command takes), bad records
    given to ``bad``, each document redacted first when a ``redactor`` is given: what ``convert``, ``push`` and
    ``redact --check`` read."""
    for path, rec in _records(args.inputs, args.source, desc, args.max_decompressed_size, args.max_record_size):
        if rec.error is not None:
            bad(path, rec)
        elif redactor is not None:  # redaction (redact/): a failure raises, so nothing is written or pushed
            yield redactor.story(rec.story, file=path)
        else:
            yield rec.story
    if bad.count:
        print(bad.log.summary(), file=sys.stderr)
    if note := no_conversation_note(bad.no_conversation):
        print(note, file=sys.stderr)


def _batches(stories: Iterator[dict[str, Any]], size: int = BATCH) -> Iterator[list[dict[str, Any]]]:
    while batch := list(itertools.islice(stories, size)):
        yield batch


def cmd_validate(args: argparse.Namespace) -> int:
    problems = documents = 0
    empty: list[tuple[str, str]] = []
    for path, rec in _records(args.inputs, args.source, "validating", args.max_decompressed_size, args.max_record_size):
        if rec.error is None:
            documents += 1
            continue
        if (why := no_conversation(rec.error)) is not None:  # not a problem of the file (loading.policy)
            empty.append((path, why))
            continue
        # Report every problem of a Storyline document, not only the first that refused it.
        storyline_doc = isinstance(rec.error, StorylineError) and isinstance(rec.value, dict)
        errors = list(iter_errors(rec.value, document_id=path)) if storyline_doc else []
        for err in errors or [rec.error]:
            problems += 1
            print(err.with_context(document_id=path, line=rec.line))
    if note := no_conversation_note(empty):
        print(note, file=sys.stderr)
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
        assert err is not None  # only bad records are added
        key = _reason_key(err)
        group = self.groups.get(key)
        if group is None:
            line = getattr(err, "line", None) if getattr(err, "line", None) is not None else rec.line
            # the first occurrence's own reason: its values as they are ("1.4"), where the group's reason says "…"
            first = {"file": path, "line": line, "pointer": getattr(err, "pointer", ""),
                     "reason": getattr(err, "reason", str(err))}  # fmt: skip
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
            # one record: its own reason, values as they are; several: the shared reason, then the first's own
            reason = first["reason"] if g["count"] == 1 else g["reason"]
            line = f"{g['count']:>6}  {g['pointer'] or '(root)'}: {reason}  (first: {where})"
            if g["count"] > 1 and first["reason"] != g["reason"]:
                line += f" — the first: {first['reason']}"
            out.append(line)
        return out


def _inventory_lines(target: str, report: LossReport) -> list[str]:
    """One target's inventory: a line for the target, then one per kind with its count and first pointer. The
    dataset rows (``storyline``) lose nothing: what the readers kept as residual is listed instead."""
    if not report:
        return [f"{target}: no loss" + (", no residual" if target == "storyline" else "")]
    head = f"{target}: no loss; kept as residual:" if target == "storyline" else f"{target}: {report.total()} lost"
    lines = [head]
    for kind, n in sorted(report.counts.items()):
        where = report.first.get(kind) or "(root)"
        doc = report.first_document.get(kind)
        lines.append(f"    {n:>6}  {kind}  (first at {where}{f' of {doc}' if doc else ''})")
    return lines


def cmd_inspect_losses(args: argparse.Namespace) -> int:
    """``inspect --losses``: per file and per target, what a conversion would leave out; nothing is written."""
    from .inventory import losses, targets

    names = targets()
    files: dict[str, dict[str, Any]] = {}
    for path, rec in _records(args.inputs, args.source, "inspecting", args.max_decompressed_size, args.max_record_size):
        entry = files.setdefault(path, {"documents": 0, "bad": 0, "reports": {t: LossReport() for t in names}})
        if (why := no_conversation(rec.error)) is not None:
            entry["no_conversation"] = why  # not bad: a read leaves the file out (loading.policy)
            continue
        if rec.error is not None:
            entry["bad"] += 1
            continue
        entry["documents"] += 1
        for target in names:
            entry["reports"][target].update(losses([rec.story], target=target))
    if args.json:
        out = {
            path: {
                "documents": e["documents"],
                "bad_records": e["bad"],
                **({"no_conversation": e["no_conversation"]} if "no_conversation" in e else {}),
                "targets": {
                    t: {
                        k: {"count": n, "first": r.first.get(k, ""), "document": r.first_document.get(k, "")}
                        for k, n in sorted(r.counts.items())
                    }
                    for t, r in e["reports"].items()
                },
            }
            for path, e in files.items()
        }
        print(json.dumps(out, indent=2, ensure_ascii=False))
    else:
        for path, e in files.items():
            empty = f"; no conversation: {e['no_conversation']}" if "no_conversation" in e else ""
            print(f"{path}: {e['documents']} document(s), {e['bad']} bad record(s){empty}")
            for target, report in e["reports"].items():
                for line in _inventory_lines(target, report):
                    print(f"  {line}")
    return 1 if any(e["bad"] for e in files.values()) else 0


def _notes(story: dict[str, Any]) -> list[str]:
    """The reading notes readers leave in their export hints (``/meta/<format>/note``: an ATIF
    ``schema_version`` without its prefix, read as ATIF)."""
    meta = story.get("meta")
    hints = meta.values() if isinstance(meta, dict) else ()
    return [h["note"] for h in hints if isinstance(h, dict) and isinstance(h.get("note"), str)]


def cmd_inspect(args: argparse.Namespace) -> int:
    if args.losses:
        return cmd_inspect_losses(args)
    formats: collections.Counter = collections.Counter()
    bad = _BadByReason()
    tools: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    totals = collections.Counter()
    shapes: collections.Counter = collections.Counter()  # messages per provider shape (the reader's hints)
    notes: collections.Counter = collections.Counter()
    flagged: collections.Counter = collections.Counter({flag: 0 for flag in FLAGS})  # pc.flags, per flag
    empty: list[tuple[str, str]] = []
    for path, rec in _records(args.inputs, args.source, "inspecting", args.max_decompressed_size, args.max_record_size):
        if (why := no_conversation(rec.error)) is not None:  # not bad: a read leaves the file out (loading.policy)
            empty.append((path, why))
            continue
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
        flagged.update(flags(story))
        totals["turns"] += len(story["turns"])
        totals["tool calls"] += sum(len(t.get("tool_calls") or ()) for t in story["turns"])
        totals["with reasoning"] += any(
            isinstance(t.get("reason"), str) and t["reason"].strip() for t in story["turns"]
        )
        totals["residual tools"] += residual_tools(story)  # tool definitions beside /agent/tools (#11)
        for note in _notes(story):  # how a reader read what it accepted on a reading of its own (#21)
            notes[note] += 1
        for entry in compute_tool_stats(story):
            tools[entry["tool"]].update({k: entry[k] for k in ("count", "success", "failure")})
    report = {
        "files": len(args.inputs),
        "documents_per_format": dict(sorted(formats.items())),
        **{k: totals[k] for k in ("documents", "turns", "tool calls", "with reasoning")},
        "bad_records": totals["bad"],
        "bad_records_by_reason": bad.report(),
        "files_without_conversation": [path for path, _ in empty],
        "residual_tools": totals["residual tools"],
        "message_shapes": dict(sorted(shapes.items())),
        "notes": dict(notes),
        "flags": dict(flagged),  # documents per pc.flags flag (convert --drop-flagged leaves them out)
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
    print("documents flagged (pc.flags): " + ", ".join(f"{k} {v}" for k, v in report["flags"].items()))
    if shapes:
        print("messages per provider shape: " + ", ".join(f"{k} {v}" for k, v in report["message_shapes"].items()))
    if totals["residual tools"]:  # e.g. gateway rows whose tools differ from the session's /agent/tools
        print(f"tool definitions kept as residual (not in /agent/tools): {totals['residual tools']}")
    for note, count in notes.items():
        print(f"note: {count} document(s): {note}")
    if note := no_conversation_note(empty):
        print(note)
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


def _output(args: argparse.Namespace) -> AtomicOutput:
    """The output of ``convert``, created (as a temporary) before any input is read; ``atomic.check_output``
    refuses one that is an input, read-only, or a folder holding what this output does not write."""
    out = Path(args.output)
    replaceable = _replaceable(args)
    if replaceable is None:
        return AtomicOutput(out, inputs=args.inputs)
    return AtomicOutput(out, folder=True, replaceable=replaceable, inputs=args.inputs)


def _replaceable(args: argparse.Namespace) -> Callable[[str], bool] | None:
    """What a previous run of this folder output wrote (an existing folder holding only that is replaced
    whole), or None when the output is one file."""
    if args.target == "dataset":
        return is_dataset_file
    if args.target == "parquet" or _examples_target(args):
        return None
    fmt = get_format(args.target)  # an unknown target fails before reading anything
    if args.per_document:
        if not fmt.PER_DOCUMENT:
            per_doc = ", ".join(f.NAME for f in formats() if f.PER_DOCUMENT)
            raise _fail(f"--per-document writes one file per document, which only these formats do: {per_doc}")
        suffix = _document_suffix(fmt)
        return lambda n: n.endswith(suffix)
    if fmt.OUTPUT == "folder":
        return lambda n: n.endswith(fmt.EXTENSION)
    return None


def _document_suffix(fmt: Any) -> str:
    """The name ending of ``--per-document`` files: the format's own (``DOCUMENT_SUFFIX``: a Gemini CLI session is
    ``{session}.jsonl``), else RFC-0001's ``{session}.storyline.json``."""
    own = capability(fmt, "document_suffix")
    return own.DOCUMENT_SUFFIX if own is not None else DOCUMENT_FILE_SUFFIX


def cmd_convert(args: argparse.Namespace) -> int:
    if args.engine == "spark":  # the Spark engine (the `spark` extra): pchronicle_datasets/spark/cli.py
        if args.target not in TABLE_OUTPUTS:
            get_format(args.target)  # an unknown target fails before anything starts
        if args.redact:
            raise _fail("--redact runs with the local engine only (drop --engine spark)")
        if _examples_target(args) or args.trainable or args.mask_tool_arguments or args.drop_flagged:
            raise _fail(
                "--to messages/prompt-completion, --dialect, --trainable, --mask-tool-arguments and --drop-flagged "
                "run with the local engine only (drop --engine spark)"
            )
        from .spark.cli import convert as spark_convert

        return spark_convert(args)
    policy = _policy(args)  # options that do not fit the target are refused before anything is read
    drop = _DropFlagged(args.drop_flagged)
    redactor = redaction.redactor_from_args(args)
    output = _output(args)
    with output as tmp, collect_losses() as losses:  # one report, not a warning per lossy value
        bad = CommandBadRecords(args.on_bad_records, args.quarantine, args.inputs, args.output)
        stories = iter_stories(args, "converting", bad, redactor)
        message = _write(args, drop.filter(stories), tmp, Path(args.output), policy)
    print(message, file=sys.stderr)
    drop.print()
    redaction.print_report(redactor)
    _print_losses(losses)
    return 0


def _flag_list(text: str) -> tuple[str, ...]:
    """``--drop-flagged``'s comma-separated flag names, each one of ``pc.flags``' (``FLAGS``).

    >>> _flag_list("incomplete, failed")
    ('incomplete', 'failed')
    """
    names = tuple(n.strip() for n in text.split(",") if n.strip())
    unknown = [n for n in names if n not in FLAGS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown flag(s) {', '.join(unknown) or repr(text)}; the flags pc.flags gives are: {', '.join(FLAGS)}"
        )
    return names


class _DropFlagged:
    """``convert --drop-flagged``: documents whose ``pc.flags`` include a named flag are left out, and counted per
    flag (a document with two of the named flags counts under each), so the run says what it left out."""

    def __init__(self, names: Sequence[str] | None) -> None:
        self.names = tuple(names or ())
        self.dropped = 0
        self.per_flag: collections.Counter = collections.Counter()

    def filter(self, stories: Iterator[dict[str, Any]]) -> Iterator[dict[str, Any]]:
        if not self.names:
            yield from stories
            return
        for story in stories:
            hit = [f for f in flags(story) if f in self.names]
            if hit:
                self.dropped += 1
                self.per_flag.update(hit)
            else:
                yield story

    def print(self) -> None:
        if self.names:
            each = ", ".join(f"{n} {self.per_flag[n]}" for n in self.names)
            print(f"dropped {self.dropped} flagged document(s) (--drop-flagged): {each}", file=sys.stderr)


def _policy(args: argparse.Namespace) -> dict[str, Any]:
    """The training policy options of ``convert`` (``trainable``, ``mask_tool_arguments``) for the map function
    of its target; only the targets that can mark trained turns take them."""
    policy: dict[str, Any] = {}
    if args.trainable is not None:
        policy["trainable"] = args.trainable
    if args.mask_tool_arguments:
        policy["mask_tool_arguments"] = True
    if args.dialect != "reference" and args.target != "sharegpt":
        raise _fail(f"--dialect {args.dialect} is a ShareGPT dialect: use it with --to sharegpt")
    if policy and args.target not in POLICY_TARGETS:
        raise _fail(
            f"--trainable and --mask-tool-arguments mark the trained turns of a training output: use --to "
            f"{', '.join(POLICY_TARGETS)} (got --to {args.target})"
        )
    return policy


def _print_losses(losses: LossReport) -> None:
    """The loss report of a command (``losses.py``): what the target could not hold, by kind, with the first
    pointer of each and what it means; nothing when nothing was lost."""
    if losses:
        print(f"losses: {losses.summary()}", file=sys.stderr)
        for line in losses.explain():
            print(f"  {line}", file=sys.stderr)


def _write(
    args: argparse.Namespace, stories: Iterator[dict[str, Any]], tmp: Path, out: Path, policy: dict[str, Any]
) -> str:
    """Write ``stories`` to the temporary ``tmp`` (a file, or a fresh folder) as they come, a batch at a time
    (a writer that needs every document at once — ``ENCODE_IN_BATCHES`` false — streams them through its
    ``encode_to`` when it has one, else gets the list); the message
    names ``out``. ``policy``: ``--trainable`` / ``--mask-tool-arguments``, for a training output."""
    if args.target in TABLE_OUTPUTS:
        return f"wrote {_write_table(args.target, stories, tmp)} document(s) to {out}"
    if _examples_target(args):
        return f"wrote {_write_examples(args, stories, tmp, policy)} example(s) to {out}"
    fmt = get_format(args.target)
    options = {}
    if policy:  # the ShareGPT writer's elements get train marks (policy.sharegpt_marks, as to_sharegpt gives them)
        from .training.policy import copied_answers, sharegpt_marks

        trainable = policy.get("trainable", "all")
        mask = policy.get("mask_tool_arguments", False)
        options["train_marks"] = lambda conv, story: sharegpt_marks(
            conv, trainable, mask_tool_arguments=mask, copied=copied_answers(story)
        )
    count = 0
    if args.per_document:
        # RFC-0001's file convention, with names made safe: a session id never leaves OUT or clashes. The names
        # depend on every session id, so each document waits in a numbered file until all are known.
        sessions = []
        for story in stories:
            (tmp / f".part-{len(sessions)}").write_text(fmt.encode([story]), encoding="utf-8")
            sessions.append(story["session"])
        for i, name in enumerate(document_file_names(sessions, _document_suffix(fmt))):
            (tmp / f".part-{i}").replace(safe_path(tmp, name))
        return f"wrote {len(sessions)} document(s) to {out}"
    batched = capability(fmt, "batched_writer") is not None
    folder = capability(fmt, "folder_writer") if fmt.OUTPUT == "folder" else None  # register checked it is there
    if folder is not None:
        # The format's own layout (ShareGPT: the seed's completed and failed trajectories), in the folder OUT.
        lines: dict[str, int] = {}
        for batch in _batches(stories) if batched else [list(stories)]:
            for name, text in folder.encode_folder(batch, **options).items():
                _write_text(safe_path(tmp, name), text, append=name in lines)
                lines[name] = lines.get(name, 0) + text.count("\n")
        if not lines:  # no document: the folder still gets the format's (empty) files
            for name, text in folder.encode_folder([]).items():
                _write_text(safe_path(tmp, name), text, append=False)
                lines[name] = text.count("\n")
        return "wrote " + ", ".join(f"{n} record(s) to {out / name}" for name, n in lines.items())
    streaming = capability(fmt, "streaming_writer")
    if streaming is not None and not batched:
        # A writer that needs every document at once but spills them: memory holds about one document, not the
        # input. Its scratch folder sits beside the output (the same disk, whose room the output needs anyway, not
        # a /tmp that may be memory), named like the output's temporary, and is removed on every exit.
        with (
            tempfile.TemporaryDirectory(prefix=f".{out.name}{TEMP_MARK}", dir=tmp.parent) as work,
            tmp.open("wb") as f,
        ):
            count = streaming.encode_to(stories, f.write, Path(work), **options)
        return f"wrote {count} document(s) to {out}"
    for batch in _batches(stories) if batched else [list(stories)]:
        _write_text(tmp, fmt.encode(batch, **options), append=count > 0)
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


def _examples_target(args: argparse.Namespace) -> bool:
    """Whether ``convert`` writes one file of map-function outputs (``TRAINING_OUTPUTS``, or LLaMA-Factory's
    ShareGPT: one dataset file, where the seed's ShareGPT is its two-file folder)."""
    return args.target in TRAINING_OUTPUTS or (args.target == "sharegpt" and args.dialect == "llamafactory")


def _write_examples(
    args: argparse.Namespace, stories: Iterator[dict[str, Any]], tmp: Path, policy: dict[str, Any]
) -> int:
    """``to_messages`` (its dataset form), ``to_prompt_completion`` or ``to_sharegpt(dialect="llamafactory")``
    outputs, one JSON line per document."""
    from .training import to_messages, to_prompt_completion, to_sharegpt

    if args.target == "sharegpt":
        policy = {**policy, "dialect": "llamafactory"}
    fn = {"messages": to_messages, "prompt-completion": to_prompt_completion, "sharegpt": to_sharegpt}[args.target]
    count = 0
    with tmp.open("w", encoding="utf-8") as f:
        for story in stories:
            f.write(json.dumps(fn(story, **policy), ensure_ascii=False) + "\n")
            count += 1
    return count


def _write_arrow(stories: Iterator[dict[str, Any]], arrow: Path) -> int:
    """Rows as an Arrow stream file (``Dataset.from_file`` maps it), a batch at a time; the count."""
    batches = _batches(stories)
    first = next(batches, [])
    table = rows_to_table(story_to_row(s, check=False) for s in first)
    count = len(first)
    with pa.ipc.new_stream(arrow, table.schema) as writer:
        writer.write_table(table)
        for batch in batches:
            writer.write_table(rows_to_table(story_to_row(s, check=False) for s in batch))
            count += len(batch)
    return count


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

    # Redaction (on unless --no-redact) runs on each document as it is read, then push_to_hub scans the rows it
    # uploads again (the rendered training rows too); any failure raises before anything is uploaded.
    redactor = redaction.redactor_from_args(args)
    if redactor is None:  # --no-redact: said before anything is read, and again at the end
        redaction.print_report(None, pushed=True)
    bad = CommandBadRecords(args.on_bad_records, args.quarantine, args.inputs)
    # The rows go to an Arrow file a batch at a time and the dataset maps it from disk: memory holds a batch,
    # not every document and its table (a 1 GB capture pushed as sharegpt held 1.69 GB). The folder (and the
    # map's cache files in it) is removed on every exit path, as the push's staged folder is.
    with tempfile.TemporaryDirectory(prefix="pchronicle-push-rows-") as tmp:
        arrow = Path(tmp) / "rows.arrow"
        _write_arrow(iter_stories(args, "reading", bad, redactor), arrow)
        return _push(args, Dataset.from_file(str(arrow)), redactor)


def _push(args: argparse.Namespace, ds: Any, redactor: Redactor | None) -> int:
    from .hub import push_to_hub
    from .training import MESSAGES_FEATURES, SHAREGPT_FEATURES, to_messages, to_sharegpt

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
        # The card's "What the conversion left out": the map's losses (the STS writer adds its own as it writes).
        info = push_to_hub(
            ds,
            args.repo,
            conversion=conversion,
            token=args.token,
            private=args.private or None,
            layout=layout,
            losses=losses,
            redact=redactor if redactor is not None else False,
        )
    print(f"pushed {ds.num_rows} row(s) to {args.repo}: {getattr(info, 'commit_url', info)}", file=sys.stderr)
    redaction.print_report(redactor, pushed=True)
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
    p.add_argument(
        "--max-record-size",
        type=_size,
        default=MAX_RECORD_SIZE,
        metavar="BYTES",
        help="the most bytes one record may hold: a JSON Lines line, or a file that is one JSON value (default "
        "512M; suffixes K, M, G, T); a longer one is a bad record naming the file and line, never read into memory",
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
    i.add_argument(
        "--losses",
        action="store_true",
        help="per file and per target (storyline rows, to_messages, to_sharegpt, each writer): what a conversion "
        "would leave out, by kind, with counts and the first pointer; nothing is written",
    )
    i.set_defaults(func=cmd_inspect)
    c = _command(sub, "convert", "convert inputs through Storyline")
    _add_reading(c)
    c.add_argument(
        "--to",
        dest="target",
        required=True,
        choices=[*format_names(), *TABLE_OUTPUTS, *TRAINING_OUTPUTS],
        help="a format; parquet (one file); dataset (a datasets directory, save_to_disk); messages or "
        "prompt-completion (one JSON Lines file of pc.to_messages or pc.to_prompt_completion examples)",
    )
    c.add_argument(
        "--dialect",
        choices=("reference", "llamafactory"),
        default="reference",
        help="with --to sharegpt: the seed's ShareGPT folder (reference, default), or LLaMA-Factory's strict "
        "alternation as one JSON Lines file of conversations/system/tools records (llamafactory; every repair "
        "is counted in the loss report as alternation_repaired)",
    )
    c.add_argument(
        "--trainable",
        choices=TRAINABLE,
        help="with --to sharegpt, messages or prompt-completion: which assistant turns train (every element or "
        "message gets a boolean train; prompt-completion puts them in the completion, default last)",
    )
    c.add_argument(
        "--mask-tool-arguments",
        action="store_true",
        help="with --trainable's targets: also leave out of training the assistant turns whose only content is a call",
    )
    c.add_argument(
        "--drop-flagged",
        type=_flag_list,
        metavar="FLAG[,FLAG…]",
        help=f"leave out documents pc.flags flags with any of these ({', '.join(FLAGS)}); the count dropped per "
        "flag is printed",
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
    redaction.add_options(c, mode="convert")
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
    redaction.add_options(p, mode="push")
    p.set_defaults(func=cmd_push)
    r = _command(sub, "redact", "report what redaction would replace: counts per rule, file and field (exit 1 if any)")
    _add_reading(r, policy=False)
    r.add_argument("--check", action="store_true", help="report only (the one mode: convert --redact writes)")
    r.add_argument("--json", action="store_true", help="print the report as JSON")
    redaction.add_options(r, mode="check")
    r.set_defaults(func=redaction.cmd_redact)
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
        discard_unfinished()  # an output a signal stopped before its ``with`` block began
        for sig, handler in previous.items():
            signal.signal(sig, handler)


if __name__ == "__main__":
    sys.exit(main())
