"""The loss report: every lossy write (a value a target cannot hold exactly) is counted by kind, in one place.

Writers call ``report_loss(kind, pointer=…, detail=…)``. Inside ``collect_losses()`` the losses are counted in
the ``LossReport`` it yields, for the caller to read, log once or turn into an error; outside one, each loss is
logged as a warning, so no loss is ever silent.

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
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

__all__ = ["LossReport", "collect_losses", "report_loss"]

log = logging.getLogger("pchronicle_datasets.losses")

#: What each kind of loss means, for reports and docs.
KINDS = {
    "invalid_arguments": "tool-call arguments that are not JSON, written as {} (as the ShareGPT seed says)",
    "not in sts": "a Storyline field the Session Trace Simple Format has no place for, left out",
    "not in chat": "a Storyline field a chat record has no key for, left out",
    "text in chat": "a Storyline value a chat record holds only as text",
    "residual_without_place": "a residual value of the target's own format that fits nowhere in the edited document",
    "session_renamed": "a document whose session id an earlier document of the output has, written as {session}#{n}",
    "no_agent_turn": "a document with no agent turn, which no openai-msg row can hold (not written)",
    "turns_after_last_output": "a turn (or a turn's results) after a document's last agent turn, in no openai-msg row",
    "root_fields_merged": "an envelope root field of a later source file (one root per output, for its first document)",
}
# A kind may name the field it is about after a colon (``not in chat: /turns/*/ts``): it is listed by its part
# before the colon.


@dataclass
class LossReport:
    """Counts of lossy writes by kind, with the pointer of the first of each kind."""

    counts: Counter[str] = field(default_factory=Counter)
    first: dict[str, str] = field(default_factory=dict)

    def add(self, kind: str, pointer: str = "", count: int = 1) -> None:
        self.counts[kind] += count
        self.first.setdefault(kind, pointer)

    def update(self, other: LossReport) -> None:
        for kind, n in other.counts.items():
            self.counts[kind] += n
            self.first.setdefault(kind, other.first.get(kind, ""))

    def __bool__(self) -> bool:
        return bool(self.counts)

    def summary(self) -> str:
        """One line: each kind with its count and first pointer."""
        if not self.counts:
            return "no loss"
        parts = [
            f"{kind} {n}" + (f" (first at {self.first[kind]})" if self.first.get(kind) else "")
            for kind, n in sorted(self.counts.items())
        ]
        kinds = len(self.counts)
        return f"{kinds} kind{'s' if kinds > 1 else ''} of loss: " + ", ".join(parts)


_ACTIVE: ContextVar[LossReport | None] = ContextVar("pchronicle_losses", default=None)


@contextmanager
def collect_losses() -> Iterator[LossReport]:
    """Count the losses of the writes done inside the block (nested blocks also count into the outer one)."""
    outer = _ACTIVE.get()
    report = LossReport()
    token = _ACTIVE.set(report)
    try:
        yield report
    finally:
        _ACTIVE.reset(token)
        if outer is not None:
            outer.update(report)


def report_loss(kind: str, *, pointer: str = "", detail: str = "", count: int = 1) -> None:
    """Record a lossy write: counted by the active ``collect_losses()``, else logged as a warning.

    ``count`` reports that many values of one kind at once (``pointer`` is the first): a writer that loses a
    field on every turn reports it once per file, so the log outside a collection stays readable.

    >>> with collect_losses() as report:
    ...     report_loss("not in chat: /turns/*/ts", pointer="/turns/1/ts", count=20)
    >>> report.counts["not in chat: /turns/*/ts"]
    20
    """
    report = _ACTIVE.get()
    if report is not None:
        report.add(kind, pointer, count)
        return
    # A kind that names its field reads by itself ("not in chat: /turns/*/ts"); a plain one by its description.
    what = kind if ":" in kind else KINDS.get(kind, kind)
    times = f" ({count} values)" if count != 1 else ""
    log.warning(
        "lossy write: %s%s%s%s", what, times, f" at {pointer}" if pointer else "", f" ({detail})" if detail else ""
    )
