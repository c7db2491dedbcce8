"""Writing Storyline documents as openai-msg rows: same-source documents are recovered (``recover``), others
synthesized (``synthesize``)."""

from __future__ import annotations

import heapq
import logging
import uuid
from collections.abc import Callable, Iterable, Iterator
from operator import itemgetter
from pathlib import Path
from typing import Any

import orjson

from ...jsonio import dumps
from ...losses import report_loss
from ...pointer import join
from ...schema import validate
from ..residual import source_fields
from .hints import HINTS, check_hints, read_hints
from .recover import Recover
from .synthesize import synthesize
from .tables import NAME
from .unwritten import unwritten_losses

__all__ = ["RUN_BUDGET", "distinct_sessions", "encode", "encode_to"]

log = logging.getLogger("pchronicle_datasets.openai_msg")


def _try_recover(story: dict, source: dict, hints: Any) -> tuple[list, dict] | None:
    """Same-source rows, or None when the export hints are missing or do not fit the document (a document
    edited after it was read, or hints of another producer): the rows are then synthesized, with a warning,
    and the document's residual rides in the ``_storyline`` envelope, so nothing is dropped."""
    if hints is None:
        return None
    try:
        check_hints(hints["rows"])
        return Recover(story, source, hints).rows()
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
        log.warning(
            "session %r: export hints at /meta/%s do not fit the document (%r); rows are synthesized",
            story.get("session"),
            HINTS,
            exc,
        )
        return None


def distinct_sessions(sessions: list[str]) -> list[str]:
    """The ``session_id`` each document is written under, so that distinct documents stay distinct sessions:
    the first document of a session keeps its id, each later one gets ``{session}#{n}``, the smallest ``n`` from
    2 that no document of the output uses (readers group rows by ``session_id``, so two documents sharing one
    would read back as one session, or not at all).

    >>> distinct_sessions(["s", "t", "s", "s#2", "s"])
    ['s', 't', 's#3', 's#2', 's#4']
    """
    taken = set(sessions)
    seen: set[str] = set()
    out = []
    for sid in sessions:
        if sid in seen:
            n = 2
            while f"{sid}#{n}" in taken:
                n += 1
            sid = f"{sid}#{n}"
            taken.add(sid)
        seen.add(sid)
        out.append(sid)
    return out


#: The encoded rows ``encode_to`` sorts in memory before it writes them to disk as one sorted run.
RUN_BUDGET = 64 << 20
#: What one buffered row costs beyond its bytes (its key tuple, the pair, the bytes object's header).
_ROW_OVERHEAD = 200
#: The most runs merged at once (each an open file): past it, runs are merged into one first.
_MAX_RUNS = 64
#: The output is given to ``write`` in chunks of about this size.
_CHUNK = 1 << 20

# A row's place in the output: (0, file order, row index) for a recovered row — back in its source order across
# documents —, (1, document index, step) for a synthesized one, after every recovered row.
_Key = tuple[int, int, int]


def encode(stories: list[dict[str, Any]], **options: Any) -> str:
    """Rows for Storyline documents: JSON Lines, or an envelope when root fields must come back.

    Documents read from openai-msg are recovered from their residual and export hints (same source);
    others get synthesized rows (RFC-0009: ``job_id``, ``agent_id``, ``agent_model``), with their own
    formats' residual carried in a version-1 ``_storyline`` envelope on the session's first row. Each document
    is its own session (``distinct_sessions``; a renamed one is a ``session_renamed`` loss); a document no row
    can hold (no agent turn) is a ``no_agent_turn`` loss. ``encode_to`` writes the same bytes from a stream.
    """
    chunks: list[bytes] = []
    _Export(None, options).write(stories, chunks.append)
    return b"".join(chunks).decode("utf-8")


def encode_to(
    stories: Iterable[dict[str, Any]],
    write: Callable[[bytes], object],
    workdir: Path,
    *,
    budget: int | None = None,
    **options: Any,
) -> int:
    """``encode(list(stories))`` as UTF-8 bytes given to ``write``, holding one document and ``budget`` bytes of
    rows at a time instead of every document (the ``streaming_writer`` capability); returns the number of
    documents.

    The output needs every document before its first byte (``distinct_sessions`` needs every session id, and
    rows are sorted back into source order across documents), so the documents are spilled to ``workdir`` as
    they come (``documents.jsonl``), read back one at a time to build their rows, and the rows sorted in runs of
    ``budget`` bytes (``RUN_BUDGET`` by default) on disk, merged into the output. ``workdir`` is the caller's (an
    empty folder it removes).

    >>> import io, tempfile
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...          "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
    >>> out = io.BytesIO()
    >>> with tempfile.TemporaryDirectory() as work:
    ...     encode_to(iter([story, story]), out.write, Path(work), budget=1)
    2
    >>> out.getvalue().decode("utf-8") == encode([story, story])
    True
    """
    return _Export(workdir, options, RUN_BUDGET if budget is None else budget).write(stories, write)


class _Export:
    """One run of the writer: ``workdir`` None holds everything in memory (``encode``), else documents and rows
    spill there (``encode_to``). Both go through the same passes, so their bytes are the same."""

    def __init__(self, workdir: Path | None, options: dict[str, Any], budget: int = RUN_BUDGET) -> None:
        if options:
            raise TypeError(f"the {NAME} writer takes no options, got {sorted(options)}")
        self.workdir = workdir
        self.budget = budget
        self.buffer: list[tuple[_Key, bytes]] = []
        self.buffered = 0
        self.runs: list[Path] = []
        self.written_runs = 0  # runs written so far, merged ones too: each file's name
        self.rows = 0
        self.lone_steps = False  # whether the first row has a `session_steps` key (it matters when it is alone)

    def write(self, stories: Iterable[dict[str, Any]], write: Callable[[bytes], object]) -> int:
        documents, sessions = self._validated(stories)
        root = self._rows(documents(), sessions)
        self._output(root, write)
        return len(sessions)

    # ---------------------------------------------------------------- pass 1: validate, keep the documents

    def _validated(self, stories: Iterable[dict[str, Any]]) -> tuple[Callable[[], Iterator[dict]], list[str]]:
        """Every document validated (before any row or loss, as a batch that fails writes nothing) and its
        session id; the documents come back from a callable, from memory or from the spill."""
        if self.workdir is None:
            held = list(stories)
            for story in held:
                validate(story)
            return lambda: iter(held), [s["session"] for s in held]
        spill = self.workdir / "documents.jsonl"
        sessions = []
        with spill.open("wb") as f:
            for story in stories:
                validate(story)
                f.write(dumps(story) + b"\n")  # orjson's JSON gives back the same values (floats to the digit)
                sessions.append(story["session"])

        def read_back() -> Iterator[dict]:
            with spill.open("rb") as f:
                for line in f:
                    yield orjson.loads(line)

        return read_back, sessions

    # ---------------------------------------------------------------- pass 2: each document's rows

    def _rows(self, stories: Iterator[dict[str, Any]], sessions: list[str]) -> dict[str, Any]:
        """Each document's rows into the sorted runs, its losses reported; the output's root fields."""
        files: dict[str, int] = {}
        roots: list[tuple[int, dict[str, Any]]] = []  # (file order, root fields): one document per envelope file
        unreported = unwritten_losses()  # what the synthesized rows cannot hold, reported after every document
        for index, (story, sid) in enumerate(zip(stories, distinct_sessions(sessions), strict=True)):
            written = story
            if sid != story["session"]:
                report_loss("session_renamed", pointer="/session", detail=f"{story['session']!r} written as {sid!r}")
                written = {**story, "session": sid}
            source = source_fields(written, NAME)
            recovered = _try_recover(written, source, read_hints(written)) if source is not None else None
            if recovered is not None:
                rows, story_root = recovered
                order = files.setdefault(source["source_document_id"], len(files))
                if story_root:
                    roots.append((order, story_root))
                for r, row in rows:
                    self._add((0, order, r), row)
            else:
                synthesized = synthesize(written)
                if not synthesized:
                    report_loss("no_agent_turn", pointer="/turns", detail=f"session {written['session']!r}")
                else:
                    unreported.add(story)  # documents not written from their own rows
                for s, row in enumerate(synthesized):
                    self._add((1, index, s), row)
        unreported.report()
        return _root(roots)

    def _add(self, key: _Key, row: dict[str, Any]) -> None:
        line = dumps(row)
        if not self.rows:
            self.lone_steps = "session_steps" in row
        self.rows += 1
        self.buffer.append((key, line))
        self.buffered += len(line) + _ROW_OVERHEAD
        if self.workdir is not None and self.buffered > self.budget:
            self._flush()

    def _flush(self) -> None:
        """The buffer sorted into a run on disk: one line per row, its key's three integers then its JSON (which
        orjson writes on one line)."""
        self.buffer.sort(key=itemgetter(0))  # stable: rows of equal keys stay in document order
        self.runs.append(self._run(self.buffer))
        self.buffer, self.buffered = [], 0
        if len(self.runs) >= _MAX_RUNS:  # a bounded number of open files when they are merged
            merged = self._run(self._merged())
            for old in self.runs:
                old.unlink()
            self.runs = [merged]

    def _run(self, rows: Iterable[tuple[_Key, bytes]]) -> Path:
        run = self.workdir / f"run-{self.written_runs}"
        self.written_runs += 1
        with run.open("wb") as f:
            f.writelines(b"%d %d %d %b\n" % (*key, line) for key, line in rows)
        return run

    def _merged(self) -> Iterator[tuple[_Key, bytes]]:
        """Every run's rows and the buffer's, in key order (earlier runs first among equal keys: document order)."""
        self.buffer.sort(key=itemgetter(0))
        tail, self.buffer = self.buffer, []
        return heapq.merge(*(_read_run(run) for run in self.runs), tail, key=itemgetter(0))

    # ---------------------------------------------------------------- pass 3: the output

    def _output(self, root: dict[str, Any], write: Callable[[bytes], object]) -> None:
        envelope = bool(root) or (self.rows == 1 and self.lone_steps)
        # Root fields need the envelope; so does a lone row with a `session_steps` key of its own, which would
        # otherwise read back as an envelope.
        prefix, suffix = _envelope(root) if envelope else (b"", b"")
        chunk = bytearray(prefix)
        for n, (_, line) in enumerate(self._merged()):
            if envelope:
                chunk += b"," + line if n else line
            else:
                chunk += line + b"\n"
            if len(chunk) >= _CHUNK:
                write(bytes(chunk))
                chunk.clear()
        chunk += suffix
        if chunk:
            write(bytes(chunk))


def _read_run(run: Path) -> Iterator[tuple[_Key, bytes]]:
    with run.open("rb") as f:
        for record in f:
            a, b, c, line = record.split(b" ", 3)
            yield (int(a), int(b), int(c)), line[:-1]


def _envelope(root: dict[str, Any]) -> tuple[bytes, bytes]:
    """The bytes of ``{**root, "session_steps": [rows]}`` before and after the rows, exactly as ``dumps`` writes
    the whole value (a ``session_steps`` root field keeps its place), so the rows never have to be held together.

    >>> _envelope({"run": "r"})
    (b'{"run":"r","session_steps":[', b']}\\n')
    """
    while True:
        token = uuid.uuid4().hex  # a string no root field holds, split out of the whole value
        parts = dumps({**root, "session_steps": token}).split(dumps(token))
        if len(parts) == 2:
            return parts[0] + b"[", b"]" + parts[1] + b"\n"


def _root(roots: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """The output's envelope root fields, from the ``(file order, root fields)`` of the documents that have them.

    An output has one root, which its reader gives to the output's first document (the first session of the
    first file): only the first file's root comes back with its own document. Any other document's root fields
    are still written when the key is free, and are a ``root_fields_merged`` loss either way."""
    root: dict[str, Any] = {}
    for n, (order, fields) in enumerate(roots):
        for key, value in fields.items():
            if n > 0 or order != 0:
                report_loss("root_fields_merged", pointer=join("", key))
            root.setdefault(key, value)
    return root
