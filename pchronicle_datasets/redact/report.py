"""What a redaction run found, counted per rule, per file and per field, with pointers: never a value.

A field is the JSON Pointer of the value with array indices as ``*`` (``/turns/*/tool_calls/*/args``);
each (file, rule, field) keeps the first few concrete pointers so a user can look at the place.

>>> r = RedactionReport()
>>> r.add("a.jsonl", "email", "/turns/3/msg")
>>> r.add("a.jsonl", "email", "/turns/5/msg")
>>> r.total, r.by_rule()
(2, {'email': 2})
>>> r.lines()[1]
'  email: 2'
"""

from __future__ import annotations

import collections
import re
from typing import Any

__all__ = ["NO_FILE", "RedactionReport", "field_of"]

NO_FILE = "(rows)"  # values redacted in dataset rows, not read from a file
MAX_POINTERS = 3
_INDEX = re.compile(r"(?<=/)\d+(?=/|$)")


def field_of(pointer: str) -> str:
    """The field of a pointer: array indices as ``*``.

    >>> field_of("/turns/12/tool_calls/0/args")
    '/turns/*/tool_calls/*/args'
    """
    return _INDEX.sub("*", pointer) or "(root)"


class RedactionReport:
    """Counts of redacted values; ``documents`` and ``strings`` count what was scanned."""

    def __init__(self) -> None:
        self.counts: collections.Counter = collections.Counter()  # (file, rule, field) -> n
        self.pointers: dict[tuple[str, str, str], list[str]] = {}
        self.documents = 0
        self.strings = 0

    def add(self, file: str | None, rule: str, pointer: str, n: int = 1) -> None:
        key = (file or NO_FILE, rule, field_of(pointer))
        self.counts[key] += n
        seen = self.pointers.setdefault(key, [])
        if len(seen) < MAX_POINTERS and pointer not in seen:
            seen.append(pointer)

    def merge(self, other: RedactionReport) -> None:
        for key, n in other.counts.items():
            self.counts[key] += n
            seen = self.pointers.setdefault(key, [])
            for p in other.pointers.get(key, []):
                if len(seen) < MAX_POINTERS and p not in seen:
                    seen.append(p)
        self.documents += other.documents
        self.strings += other.strings

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def __bool__(self) -> bool:
        return self.total > 0

    def _by(self, index: int) -> dict[str, int]:
        out: collections.Counter = collections.Counter()
        for key, n in self.counts.items():
            out[key[index]] += n
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def by_rule(self) -> dict[str, int]:
        return self._by(1)

    def by_file(self) -> dict[str, int]:
        return self._by(0)

    def by_field(self) -> dict[str, int]:
        return self._by(2)

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data (``redact --check --json``)."""
        return {
            "redacted": self.total,
            "documents": self.documents,
            "strings": self.strings,
            "by_rule": self.by_rule(),
            "by_file": self.by_file(),
            "by_field": self.by_field(),
            "entries": [
                {"file": f, "rule": r, "field": fld, "count": n, "pointers": self.pointers.get((f, r, fld), [])}
                for (f, r, fld), n in sorted(self.counts.items())
            ],
        }

    def lines(self) -> list[str]:
        """The report as text lines: totals by rule, then by file, then each file's fields with pointers."""
        if not self.counts:
            return [f"redaction: nothing to redact in {self.documents} document(s)"]
        out = [f"redaction: {self.total} value(s) redacted in {self.documents} document(s), by rule:"]
        out += [f"  {rule}: {n}" for rule, n in self.by_rule().items()]
        per_file: dict[str, list[tuple[str, str, int]]] = collections.defaultdict(list)
        for (f, r, fld), n in self.counts.items():
            per_file[f].append((fld, r, n))
        out.append("by file and field (rule: count, first pointers):")
        for f, n in self.by_file().items():
            out.append(f"  {f}: {n}")
            for fld, r, k in sorted(per_file[f]):
                where = ", ".join(self.pointers.get((f, r, fld), []))
                out.append(f"    {fld}  {r}: {k}  ({where})")
        return out

    def card_lines(self) -> list[str]:
        """What the dataset card says: that redaction ran, with the count per rule (no value, no pointer)."""
        if not self.counts:
            return ["- **Redaction:** ran before upload (pchronicle-datasets rules); nothing was redacted"]
        rules = ", ".join(f"{r}: {n}" for r, n in self.by_rule().items())
        return [
            f"- **Redaction:** ran before upload (pchronicle-datasets rules); {self.total} value(s) replaced by "
            f"`<REDACTED:kind:hmac>` placeholders ({rules})"
        ]
