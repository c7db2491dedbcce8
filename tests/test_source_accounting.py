"""Source accounting over every file (issue #23): nothing is lost silently between a user's file and the
training example.

For every input file in ``tests/data/`` and every shipped sample, read as a user reads it (the format detected
from its content), two accountings, computed from the source and the outputs without asking the readers:

1. **Source → document.** Every string of the source — message text, reasoning, call arguments (inside their
   JSON), result content, tool definitions, metadata — is found among the strings of the documents read from the
   file: a mapped field or the residual (``unknown_fields``). Strings are compared as decoded values; a string
   that holds JSON is compared by its leaves; text around the training markup the ShareGPT seed writes
   (``<think>``, ``<tool_call>``, ``<tool_response>``) is compared piece by piece. Short single tokens (roles,
   part types, ``"function"``) are structure, not content, and are not counted.
2. **Document → training text.** Every message text, call (name and arguments) and result content of each
   document is found in what ``to_messages`` and ``to_sharegpt`` write for it, or the map reports a loss; a
   harness's notice no model saw (``notices.is_notice``) is left out of every training text by rule.

A new format's test files are covered as soon as they are in ``tests/data/``; a SQLite database (OpenCode's, Goose's) is
accounted for from the rows of the tables that name its format's databases (``DATABASE_TABLES``).
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import database_format, detect, iter_records
from pchronicle_datasets.formats.database import is_database, opened, table_names, table_sets
from pchronicle_datasets.losses import collect_losses
from pchronicle_datasets.notices import is_notice
from pchronicle_datasets.render.sharegpt import system_prompt
from pchronicle_datasets.sidecars import groups, join_members

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    p
    for base in (ROOT / "tests" / "data", ROOT / "pchronicle_datasets" / "samples")
    for p in base.rglob("*")
    if p.is_file() and p.suffix in (".json", ".jsonl", ".traj", ".db") and ".expected." not in p.name
)
# The files of a folder that are one document (an OpenHands conversation folder, sidecars.groups) are read as the
# loaders read them: together, under their first file; the others are no file of their own.
_GROUPS = {FILES[first]: [FILES[i] for i in members] for first, (_, members) in groups(list(map(str, FILES))).items()}
FILES = [p for p in FILES if p in _GROUPS or not any(p in members for members in _GROUPS.values())]
# The training markup the ShareGPT seed writes, and any other tag a harness wraps text in (Cursor's <user_query>,
# the [REDACTED] it ends an assistant's text with): the text between tags is what is compared.
MARKUP = re.compile(r"</?[A-Za-z_][\w-]*>|\[REDACTED\]\Z")
TRAINING_MARKUP = re.compile(r"</?(?:think|tool_call|tool_response)>")  # what the outputs wrap their JSON in
WORD = re.compile(r"\S+")


def _strings(value: Any) -> Iterator[str]:
    """Every string leaf of a JSON value, keys aside, JSON held in strings opened up."""
    if isinstance(value, str):
        yield value
        if value[:1] in "[{":
            try:
                inner = json.loads(value)
            except ValueError:
                return
            yield from _strings(inner)
    elif isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)


def _content(s: str) -> bool:
    """A string that is content, not structure: more than one word, or one long token (an event type such as
    ``tool.execution_complete`` or an id is structure)."""
    s = s.strip()
    return len(s) >= 32 or (len(WORD.findall(s)) > 1 and len(s) >= 6)


def _pieces(s: str) -> Iterator[str]:
    """The content of a source string: its JSON leaves, or its text between training markup, stripped."""
    if s[:1] in "[{":
        try:
            inner = json.loads(s)
        except ValueError:
            inner = None
        if isinstance(inner, (dict, list)):
            for leaf in _strings(inner):
                yield from _pieces(leaf)
            return
    for piece in MARKUP.split(s):
        piece = piece.strip()
        if not _content(piece):
            continue
        if piece[:1] in "[{":  # a <tool_call> or <tool_response> body: its JSON leaves
            try:
                inner = json.loads(piece)
            except ValueError:
                inner = None
            if isinstance(inner, (dict, list)):
                yield from (leaf.strip() for leaf in _strings(inner) if _content(leaf))
                continue
        yield piece


_SQLITE_TIME = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


def _sqlite_time(value: Any) -> Any:
    """A SQLite ``datetime`` text (``2026-08-05 21:19:21``, UTC) in the RFC 3339 form a database's reader gives it
    (Goose's: as its serde writes the session's times), so a converted time counts as found."""
    if isinstance(value, str) and _SQLITE_TIME.fullmatch(value):
        return value.replace(" ", "T") + "Z"
    return value


def _source_values(path: Path, alone: bool = False) -> Iterator[Any]:
    if is_database(path.read_bytes()[:16]):  # the rows of the tables naming its format's databases (JSON text in them)
        with opened(path.read_bytes(), path.name) as con:
            tables = table_names(con)
            named = table_sets(database_format("auto", tables).DATABASE_TABLES)
            for table in sorted(set().union(*(one for one in named if tables >= one))):
                cursor = con.execute(f"select * from {table}")
                names = [d[0] for d in cursor.description]
                yield from ({k: _sqlite_time(v) for k, v in zip(names, row, strict=True)} for row in cursor)
        return
    if path in _GROUPS and not alone:
        for member in _GROUPS[path]:
            yield from _source_values(member, alone=True)
        return
    text = path.read_text(encoding="utf-8")
    try:
        yield json.loads(text)
    except ValueError:
        for line in text.splitlines():
            if line.strip():
                try:
                    yield json.loads(line)
                except ValueError:
                    continue


def _documents(path: Path) -> tuple[str, list[dict]]:
    """The detected format of a file and the documents read from it (none when no format reads it)."""
    data = join_members([p.read_bytes() for p in _GROUPS[path]]) if path in _GROUPS else path.read_bytes()
    try:
        fmt = detect(data, document_id=path.name)
    except pc.PchronicleError:
        return "", []
    return fmt.NAME, [rec.story for rec in iter_records(fmt.NAME, data, path.name) if rec.error is None]


def _opened(values: Any) -> Iterator[str]:
    """The strings of an output and of the JSON inside its training markup (a ``<tool_response>`` body)."""
    for s in _strings(values):
        yield s.strip()
        for piece in TRAINING_MARKUP.split(s):
            piece = piece.strip()
            if piece[:1] in "[{":
                with contextlib.suppress(ValueError):
                    yield from (leaf.strip() for leaf in _strings(json.loads(piece)))
            yield piece


def _blob(values: Any) -> str:
    return "\x00".join(_opened(values))


# The ShareGPT seed's system prompt is generated from the tool definitions: its reader derives /agent/tools from
# it, and its template text is the writer's, not the source's.
_TEMPLATE = [p.strip() for p in re.split(r"<tools>.*?</tools>", system_prompt([]), flags=re.S)]


def _generated(piece: str) -> bool:
    return any(piece in part for part in _TEMPLATE) or all(
        any(seg.strip() in part for part in _TEMPLATE) for seg in re.split(r"<tools>.*?</tools>", piece, flags=re.S)
    )


SWEPT = {p: _documents(p) for p in FILES}
READ = [(p, docs) for p, (_, docs) in SWEPT.items() if docs]


def test_the_sweep_covers_every_reader() -> None:
    """Every registered format has at least one file in the sweep."""
    from pchronicle_datasets.formats import formats

    swept = {fmt for fmt, docs in SWEPT.values() if docs}
    assert {f.NAME for f in formats()} <= swept, sorted({f.NAME for f in formats()} - swept)


@pytest.mark.parametrize("path", [p for p, _ in READ], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_source_string_is_in_the_document(path: Path) -> None:
    docs = dict(READ)[path]
    blob = _blob(docs)
    missing = sorted(
        {
            piece
            for value in _source_values(path)
            for s in _strings(value)
            for piece in _pieces(s)
            if piece not in blob and not _generated(piece)
        }
    )
    assert not missing, f"{len(missing)} source strings in no field nor residual, e.g. {missing[:3]}"


def _items(story: dict) -> Iterator[tuple[str, str]]:
    """``(pointer, text)`` of each message text, call and result of a document that training text should show."""
    for t, turn in enumerate(story["turns"]):
        if turn.get("copied") or is_notice(turn):  # a notice no model saw is in no training text (notices.py)
            continue
        for s in _strings(turn.get("msg")):
            for piece in MARKUP.split(s):
                if _content(piece):
                    yield f"/turns/{t}/msg", piece.strip()
        for c, call in enumerate(turn.get("tool_calls") or ()):
            yield f"/turns/{t}/tool_calls/{c}/fn", call["fn"]
            for s in _strings(call.get("args")):
                if _content(s):
                    yield f"/turns/{t}/tool_calls/{c}/args", s.strip()
            for s in _strings(call.get("result")):
                for piece in _pieces(s):
                    yield f"/turns/{t}/tool_calls/{c}/result", piece
        results = (
            (turn.get("observation") or {}).get("results") or [] if isinstance(turn.get("observation"), dict) else []
        )
        for k, res in enumerate(results):
            for s in _strings(res.get("content") if isinstance(res, dict) else None):
                for piece in _pieces(s):
                    yield f"/turns/{t}/observation/results/{k}", piece


@pytest.mark.parametrize("target", ["to_messages", "to_sharegpt"])
@pytest.mark.parametrize("path", [p for p, _ in READ], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_message_call_and_result_reaches_the_training_text(path: Path, target: str) -> None:
    fn = getattr(pc, target)
    for story in dict(READ)[path]:
        with collect_losses(propagate=False) as report:
            out = fn(story)
        blob = _blob(out)
        missing = [(p, text) for p, text in _items(story) if text not in blob]
        assert not missing or report, f"{story['session']}: {len(missing)} not in {target} and no loss: {missing[:3]}"


@pytest.mark.parametrize("path", [p for p, _ in READ], ids=lambda p: str(p.relative_to(ROOT)))
def test_tool_stats_count_the_results_training_text_shows(path: Path) -> None:
    """One linking rule: ``tool_stats`` counts a result for every tool message ``to_messages`` writes for a call."""
    for story in dict(READ)[path]:
        with collect_losses(propagate=False):
            messages = pc.to_messages(story)["messages"]
        called = {c["fn"] for t in story["turns"] for c in t.get("tool_calls") or ()}
        shown = sum(1 for m in messages if m["role"] == "tool" and m.get("name") in called - {"unknown"})
        counted = sum(e["success"] + e["failure"] for e in pc.compute_tool_stats(story) if e["tool"] != "unknown")
        assert counted == shown, story["session"]
