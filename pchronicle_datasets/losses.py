"""The loss report: every lossy write (a value a target cannot hold exactly) is counted by kind, in one place.

Writers and the training map functions call ``report_loss(kind, pointer=…, detail=…)``. Inside
``collect_losses()`` the losses are counted in the ``LossReport`` it yields, for the caller to read, log once
or turn into an error (``raise_first``); outside one, each loss is logged as a warning, so no loss is ever
silent. ``map_losses`` groups the losses of a ``ds.map`` call into one summary.

>>> with collect_losses() as report:
...     report_loss("invalid_arguments", pointer="/turns/0/tool_calls/0/args", detail="'{not json'")
...     report_loss("invalid_arguments", pointer="/turns/2/tool_calls/0/args")
>>> report.counts["invalid_arguments"], report.first["invalid_arguments"]
(2, '/turns/0/tool_calls/0/args')
>>> report.summary()
'1 kind of loss: invalid_arguments 2 (first at /turns/0/tool_calls/0/args)'
"""

from __future__ import annotations

import logging
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

from .errors import FormatError

__all__ = [
    "KINDS",
    "ListedLosses",
    "LossReport",
    "active_report",
    "collect_losses",
    "collected",
    "describe",
    "for_document",
    "ignore_losses",
    "report_listed",
    "report_loss",
]

log = logging.getLogger("pchronicle_datasets.losses")
T = TypeVar("T")

#: What each kind of loss means, and what to do about it, for reports and docs (docs/training.md).
KINDS = {
    "invalid_arguments": "tool-call arguments that are not JSON, written as {} as the ShareGPT seed says "
    "(keep_invalid_args=True keeps the string)",
    "content_flattened": "a message that is not text (images, audio, other content parts, JSON values) "
    "written as text: text parts joined, other parts as their JSON",
    "source_renamed": "a turn whose src has no role in the target (a custom source), written as a system message",
    "result_without_content": "a result that answers no tool call and holds null, left out (nothing to show)",
    "reasoning_dropped": "reasoning the target has no place for (a reason on a turn that is not the agent's)",
    "tool_calls_dropped": "tool calls on a turn that is not the agent's, left out",
    "results_dropped": "tool results answering calls on a turn that is not the agent's, left out",
    "system_prompt_replaced": "the document's own system prompt, replaced by the one the ShareGPT seed generates "
    "from /agent/tools (keep_system_prompt=True keeps it, with the tools prompt only when it has none)",
    "tool_definition_dropped": "an /agent/tools entry that is not a function schema, left out of the tools",
    "residual_dropped": "an ATIF residual value of an edited document that fits no place in the trajectory",
    "not in sts": "a Storyline field the Session Trace Simple Format has no place for, left out",
    "not in chat": "a Storyline field a chat record has no key for, left out",
    "text in chat": "a Storyline value a chat record holds only as text",
    "not in codex": "a Storyline field a Codex rollout written from another format has no place for, left out",
    "text in codex": "a message part a Codex rollout written from another format holds only as text",
    "not in pi": "a Storyline field a Pi session written from another format has no place for, left out",
    "not in openai-msg": "a Storyline value no openai-msg row has a place for (or that its reader does not give "
    "back there), left out",
    "session_renamed": "a document whose session id an earlier document of the output has, written as {session}#{n}",
    "no_agent_turn": "a document with no agent turn, which no openai-msg row can hold (not written)",
    "no_turn": "a document with no turn, which an OpenHands SDK event stream cannot hold as a conversation (not "
    "written: its reader gives no document for a stream without a message)",
    "turns_after_last_output": "a turn (or a turn's results) after a document's last agent turn, in no openai-msg row",
    "completion_tail_dropped": "messages after the last trained one, which a prompt-completion example has no "
    "place for (to_prompt_completion: they are not trained), left out",
    "alternation_repaired": 'a change to_sharegpt(dialect="llamafactory") made so LLaMA-Factory\'s strict '
    "alternation (human/observation, then gpt/function_call) reads the conversation instead of skipping it: "
    "messages merged, a later system message or a result as human, an empty human first, or user messages and "
    'results after the last assistant message left out (docs/training.md, "LLaMA-Factory")',
    "root_fields_merged": "an envelope root field of a later source file (one root per output, for its first document)",
}
# A kind may name the field it is about after a colon (``not in chat: /turns/*/ts``): it is listed by its part
# before the colon.


def describe(kind: str) -> str:
    """What a kind of loss means (``KINDS``, by the part before a colon).

    >>> describe("not in chat: /turns/*/ts")
    'a Storyline field a chat record has no key for, left out (/turns/*/ts)'
    """
    base, _, field = kind.partition(":")
    what = KINDS.get(base) or _format_kind(base)
    if what is None:
        return kind
    return f"{what} ({field.strip()})" if field else what


def _format_kind(base: str) -> str | None:
    """The meaning of a writer's own kind without an entry of its own: ``not in <format>`` (``layout``'s writers
    name every field their format has no place for this way) or ``text in <format>``.

    >>> describe("not in mini-swe-agent: /turns/*/ts")
    'a Storyline field a mini-swe-agent file has no place for, left out (/turns/*/ts)'
    """
    for prefix, meaning in (("not in ", "a Storyline field a {} file has no place for, left out"),
                            ("text in ", "a Storyline value a {} file holds only as text")):  # fmt: skip
        if base.startswith(prefix) and base[len(prefix) :].strip():
            return meaning.format(base[len(prefix) :].strip())
    return None


# This process's id, kept current in forked children (where a process can fork: elsewhere it never changes):
# os.getpid() is a system call, and the map functions ask for it on every example.
_PID = [os.getpid()]


def _reset_pid() -> None:
    _PID[0] = os.getpid()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_pid)


def _current_pid() -> int:
    return _PID[0]


@dataclass
class LossReport:
    """Counts of lossy writes by kind, with the pointer (and the document, when known) of the first of each.

    >>> report = LossReport()
    >>> report.add("content_flattened", "/turns/1/msg")
    >>> report.raise_first(document_id="run.jsonl#3")
    Traceback (most recent call last):
    ...
    pchronicle_datasets.errors.FormatError: /turns/1/msg: lossy write (content_flattened): ...
    """

    counts: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)
    first_document: dict[str, str] = field(default_factory=dict)
    #: the process that made the report: a worker forked by ``ds.map(num_proc=…)`` inherits the caller's
    #: collector, whose counts it could never send back, so there it is not the active one (``active_report``).
    pid: int = field(default_factory=_current_pid)

    def add(self, kind: str, pointer: str = "", document: str = "", count: int = 1) -> None:
        self.counts[kind] += count
        if kind not in self.first:
            self.first[kind] = pointer
            if document:
                self.first_document[kind] = document

    def update(self, other: LossReport, document: str = "") -> None:
        """Add ``other``'s counts; ``document`` names the document they came from when ``other`` does not."""
        for kind, n in other.counts.items():
            self.counts[kind] += n
            if kind not in self.first:
                self.first[kind] = other.first.get(kind, "")
                doc = other.first_document.get(kind) or document
                if doc:
                    self.first_document[kind] = doc

    def __bool__(self) -> bool:
        return bool(self.counts)

    def total(self) -> int:
        return sum(self.counts.values())

    def _where(self, kind: str) -> str:
        pointer, doc = self.first.get(kind), self.first_document.get(kind)
        if not pointer and not doc:
            return ""
        return " (first at " + (pointer or "(root)") + (f" of {doc}" if doc else "") + ")"

    def summary(self) -> str:
        """One line: each kind with its count and first pointer."""
        if not self.counts:
            return "no loss"
        parts = [f"{kind} {n}{self._where(kind)}" for kind, n in sorted(self.counts.items())]
        kinds = len(self.counts)
        return f"{kinds} kind{'s' if kinds > 1 else ''} of loss: " + ", ".join(parts)

    def explain(self) -> list[str]:
        """One line per kind: what it means and what to do (``KINDS``)."""
        return [f"{kind}: {describe(kind)}" for kind in sorted(self.counts)]

    def raise_first(self, document_id: str | None = None) -> None:
        """Raise ``FormatError`` with the pointer of the first loss (of the first kind reported), if any."""
        if not self.counts:
            return
        kind = next(iter(self.counts))
        raise FormatError(
            f"lossy write ({kind}): {describe(kind)}",
            pointer=self.first.get(kind, ""),
            document_id=self.first_document.get(kind) or document_id,
        )


_ACTIVE: ContextVar[LossReport | None] = ContextVar("pchronicle_losses", default=None)
_DOCUMENT: ContextVar[str] = ContextVar("pchronicle_loss_document", default="")


@contextmanager
def for_document(name: str) -> Iterator[None]:
    """Losses reported inside the block are of the document ``name`` (a writer names each document it writes).

    >>> with collect_losses() as report, for_document("run.jsonl#2"):
    ...     report_loss("content_flattened", pointer="/turns/1/msg")
    >>> report.first_document
    {'content_flattened': 'run.jsonl#2'}
    """
    token = _DOCUMENT.set(name)
    try:
        yield
    finally:
        _DOCUMENT.reset(token)


def active_report() -> LossReport | None:
    """The report of the innermost ``collect_losses()`` of this process, or None."""
    report = _ACTIVE.get()
    return report if report is not None and report.pid == _current_pid() else None


@contextmanager
def collect_losses(*, propagate: bool = True) -> Iterator[LossReport]:
    """Count the losses of the writes done inside the block (nested blocks also count into the outer one, unless
    ``propagate=False``: the caller then passes the report on itself)."""
    outer = active_report() if propagate else None
    report = LossReport()
    token = _ACTIVE.set(report)
    try:
        yield report
    finally:
        _ACTIVE.reset(token)
        if outer is not None:
            outer.update(report)


def collected(fn: Callable[..., T], *args: Any) -> tuple[T, LossReport]:
    """``fn(*args)`` and the losses it reported, which are not counted by an outer ``collect_losses()``: the
    caller passes them on (a map function calls this once per example, where a ``with`` block costs as much as
    converting a short example).

    >>> value, report = collected(report_loss, "content_flattened")
    >>> value, report.counts["content_flattened"]
    (None, 1)
    """
    report = LossReport()
    token = _ACTIVE.set(report)
    try:
        return fn(*args), report
    finally:
        _ACTIVE.reset(token)


@contextmanager
def ignore_losses() -> Iterator[None]:
    """Writes inside the block lose nothing although they call ``report_loss``: a same-source writer renders
    values that its residual then replaces with the exact source values."""
    token = _ACTIVE.set(LossReport())
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def report_loss(kind: str, *, pointer: str = "", detail: str = "", count: int = 1) -> None:
    """Record a lossy write: counted by the active ``collect_losses()``, else logged as a warning.

    ``count`` reports that many values of one kind at once (``pointer`` is the first): a writer that loses a
    field on every turn reports it once per file, so the log outside a collection stays readable.

    >>> with collect_losses() as report:
    ...     report_loss("not in chat: /turns/*/ts", pointer="/turns/1/ts", count=20)
    >>> report.counts["not in chat: /turns/*/ts"]
    20
    """
    report = active_report()
    document = _DOCUMENT.get()
    if report is not None:
        report.add(kind, pointer, document, count)
        return
    # A kind that names its field reads by itself ("not in chat: /turns/*/ts"); a plain one by its description.
    what = kind if ":" in kind else KINDS.get(kind, kind)
    times = f" ({count} values)" if count != 1 else ""
    where = (f" at {pointer}" if pointer else "") + (f" of {document}" if document else "")
    log.warning("lossy write: %s%s%s%s", what, times, where, f" ({detail})" if detail else "")


def report_listed(stories: Iterable[dict], listing: Callable[[dict], Iterable[tuple[str, str]]]) -> None:
    """Count the ``(kind, pointer)`` pairs ``listing(story)`` gives for each document (what a writer's target
    cannot hold of it): one ``report_loss`` per kind for all of them, so a file of many documents logs one line
    per kind outside ``collect_losses``, with the first pointer and the session it is in.

    >>> def listing(story):
    ...     return [("not in chat: /turns/*/ts", f"/turns/{t}/ts") for t, turn in enumerate(story["turns"])]
    >>> stories = [{"session": s, "turns": [{}, {}]} for s in ("a", "b")]
    >>> with collect_losses() as report:
    ...     report_listed(stories, listing)
    >>> report.summary()
    '1 kind of loss: not in chat: /turns/*/ts 4 (first at /turns/0/ts)'
    """
    listed = ListedLosses(listing)
    for story in stories:
        listed.add(story)
    listed.report()


class ListedLosses:
    """``report_listed`` one document at a time, for a writer that does not hold its documents: ``add(story)``
    counts what ``listing(story)`` gives (per kind: the first pointer and session, and how many), ``report()``
    reports the counts.

    >>> listed = ListedLosses(lambda story: [("not in chat: /turns/*/ts", "/turns/0/ts")])
    >>> for story in ({"session": "a"}, {"session": "b"}):
    ...     listed.add(story)
    >>> with collect_losses() as report:
    ...     listed.report()
    >>> report.summary()
    '1 kind of loss: not in chat: /turns/*/ts 2 (first at /turns/0/ts)'
    """

    def __init__(self, listing: Callable[[dict], Iterable[tuple[str, str]]]) -> None:
        self.listing = listing
        self.counts: dict[str, list] = {}  # kind → [first pointer, its session, count]: small, one entry per kind

    def add(self, story: dict) -> None:
        for kind, pointer in self.listing(story):
            self.counts.setdefault(kind, [pointer, story["session"], 0])[2] += 1

    def report(self) -> None:
        for kind, (first, session, n) in self.counts.items():
            report_loss(kind, pointer=first, count=n, detail=f"first in session {session!r}")
