"""The project's one error tree.

``PchronicleError`` is a ``ValueError`` so callers that already guard against bad values keep working.
Every error carries the RFC 6901 pointer of the offending value (``.pointer``; ``""`` is the root),
the document or file it came from (``.document_id``) and, for line-oriented sources, the 1-based
``.line``. The message says all of them, because users mostly see the ``str()`` of an error in a log.

``PchronicleError`` ─┬─ ``StorylineError`` (a document breaks RFC-0001)
                     └─ ``FormatError`` (a source file breaks its format's rules)
                          ├─ ``BadRecordError`` (a load refused a record; every engine raises it)
                          └─ ``NoConversationError`` (a harness's session file holds no conversation)
"""

from __future__ import annotations

from datasets.exceptions import DatasetGenerationError

__all__ = ["BadRecordError", "FormatError", "NoConversationError", "PchronicleError", "StorylineError"]


class PchronicleError(ValueError):
    """Base of every error this package raises on user data.

    >>> err = PchronicleError("expected a string", pointer="/session", document_id="logs/a.json")
    >>> str(err)
    '/session: expected a string in logs/a.json'
    """

    def __init__(
        self,
        reason: str,
        *,
        pointer: str = "",
        document_id: str | None = None,
        line: int | None = None,
    ) -> None:
        self.reason = reason
        self.pointer = pointer
        self.document_id = document_id
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        where = self.pointer if self.pointer else "(root)"
        text = f"{where}: {self.reason}"
        if self.document_id is not None:
            text += f" in {self.document_id}"
        if self.line is not None:
            text += f" line {self.line}" if self.document_id is not None else f" at line {self.line}"
        return text

    def with_context(self, *, document_id: str | None = None, line: int | None = None):
        """Return a copy that also names the file and/or line (values already set are kept)."""
        return type(self)(
            self.reason,
            pointer=self.pointer,
            document_id=self.document_id if self.document_id is not None else document_id,
            line=self.line if self.line is not None else line,
        )

    def __reduce__(self):
        # Keep the keyword-only context when errors cross process boundaries (datasets' num_proc).
        return (_rebuild, (type(self), self.reason, self.pointer, self.document_id, self.line))


def _rebuild(cls, reason, pointer, document_id, line):
    return cls(reason, pointer=pointer, document_id=document_id, line=line)


class StorylineError(PchronicleError):
    """A Storyline document breaks RFC-0001; ``.pointer`` points into the document."""


class FormatError(PchronicleError):
    """A source file breaks its format's rules; ``.pointer`` points into the source."""


class BadRecordError(FormatError, DatasetGenerationError):
    """A bad record stopped a load (``on_bad_records="error"``): ``load_dataset``, a Spark job.

    It is a ``FormatError`` (with the file, line and pointer of the cause; ``loading.policy.refusal`` makes it)
    and a ``DatasetGenerationError``, so ``load_dataset`` lets it through as it is instead of wrapping it in a
    bare "An error occurred while generating the dataset". Its message ends with what to do:

    >>> print(BadRecordError("not valid JSON: unexpected end of data", document_id="s.jsonl", line=12))
    ... # doctest: +NORMALIZE_WHITESPACE
    (root): not valid JSON: unexpected end of data in s.jsonl line 12 (a line that stops before its JSON ends: the
    last line of a log its program is still writing ends so; load again once it has finished). To load the rest,
    each bad record left out, counted and kept in quarantine_file when one is given, pass on_bad_records="skip"
    """

    def _render(self) -> str:
        text = super()._render()
        if "unexpected end of data" in self.reason:  # orjson's words for JSON cut short
            text += (
                " (a line that stops before its JSON ends: the last line of a log its program is still writing ends"
                " so; load again once it has finished)"
            )
        return text + (
            ". To load the rest, each bad record left out, counted and kept in quarantine_file when one is given, pass"
            ' on_bad_records="skip"'
        )


class NoConversationError(FormatError):
    """A harness's session file holds no conversation: only bookkeeping (a session header, Claude Code's title
    summaries or file snapshots, an empty message list). ``into_storyline`` raises it for that file; a read of
    many files (``load_dataset``, ``read_batches``, the CLI, Spark) leaves the file out under either
    ``on_bad_records`` and names it in one note (``loading.policy.BadRecords``, docs/builder.md): such files lie
    in every real session folder, and none is a bad record."""
