"""The redactor: finds values in one decoded string and replaces each by its stable placeholder.

A placeholder names the kind and ends with a keyed hash, ``<REDACTED:github-token:3f9a1c2b>``: the first 8
hex digits of HMAC-SHA256(key, value). The key is random per ``Redactor`` (per run) unless the user gives
one, so the same value gives the same placeholder everywhere in a dataset (a key written in a call and
echoed in its result still match) while nobody without the key can test a guess against a placeholder. Two
values whose 8 digits collide in one run get longer suffixes, so two values always give two placeholders.

Skipped, never scanned: placeholders already there, and base64 images (a ``data:image/…;base64,`` URL, or a
whole string whose base64 decodes to a PNG, JPEG, GIF, WebP or PDF header), whose random letters would
otherwise look like tokens.

>>> r = Redactor(key="demo")
>>> r.text("my key is ghp_" + "a1B2" * 9)  # doctest: +ELLIPSIS
'my key is <REDACTED:github-token:...>'
>>> r.text("ghp_" + "a1B2" * 9) == r.text("ghp_" + "a1B2" * 9) != r.text("ghp_" + "b1B2" * 9)
True
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Iterator, Mapping
from typing import Any

from .config import DEFAULT_ALLOW_EMAIL, RedactionConfig
from .report import RedactionReport
from .rules import RULES, Rule

__all__ = ["DENYLIST_RULE", "PLACEHOLDER", "Redactor", "is_image_base64"]

PLACEHOLDER = re.compile(r"<REDACTED:[a-z0-9-]+(?::[0-9a-f]{8,64})?>")
DENYLIST_RULE = "denylisted-secret"
SUFFIX = 8
_DATA_URL = re.compile(r"data:[\w.+-]+/[\w.+-]+(?:;[\w.+-]+=[\w.+-]+)*;base64,[A-Za-z0-9+/=\s]+")
# The base64 of the first bytes of the image/document types a trace carries inline.
_IMAGE_B64 = ("iVBORw0KGgo", "/9j/", "R0lGOD", "UklGR", "JVBERi")
_B64_STRING = re.compile(r"[A-Za-z0-9+/=\s]{64,}")


def is_image_base64(text: str) -> bool:
    """A whole string that is base64 of an image (or PDF): never scanned.

    >>> is_image_base64("iVBORw0KGgo" + "A" * 100), is_image_base64("hello")
    (True, False)
    """
    return text.startswith(_IMAGE_B64) and bool(_B64_STRING.fullmatch(text))


class Redactor:
    """Finds and replaces secrets in strings; keeps the report of one run.

    ``config`` (``RedactionConfig``) gives allowlists, denylists and options; ``key`` overrides its key.
    """

    def __init__(self, config: RedactionConfig | None = None, *, key: str | bytes | None = None) -> None:
        self.config = config or RedactionConfig()
        key = key if key is not None else self.config.key
        self.key_given = key is not None
        self._key = key.encode("utf-8") if isinstance(key, str) else key or secrets.token_bytes(32)
        disabled = set(self.config.disable)
        self.rules: tuple[Rule, ...] = tuple(r for r in RULES if r.id not in disabled)
        # One pass of one pattern finds which rules' keywords a string holds (gitleaks' prefilter, at C speed).
        # The prefilter (gitleaks'): a rule runs on a string only when one of its keywords is in it; ``in`` on
        # the lowered string is a C substring search, far faster than one alternation pattern.
        self._keywords = tuple(sorted({k for r in self.rules for k in r.keywords}))
        self._rules_of = {k: frozenset(i for i, r in enumerate(self.rules) if k in r.keywords) for k in self._keywords}
        self._always = frozenset(i for i, r in enumerate(self.rules) if not r.keywords)
        self._allow = frozenset(self.config.allow)
        self._allow_rx = [re.compile(p) for p in self.config.allow_regex]
        emails = (*DEFAULT_ALLOW_EMAIL, *self.config.allow_email)
        self._allow_locals = tuple(e.lower() for e in emails if e.endswith("@"))
        self._allow_domains = tuple(e.lower().lstrip("@.") for e in emails if not e.endswith("@"))
        self._deny = self.config.all_secrets()
        self._deny_first = {s[:1] for s in self._deny}
        self._suffix: dict[str, str] = {}  # full digest -> suffix used
        self._taken: dict[str, str] = {}  # suffix -> full digest
        self.report = RedactionReport()
        self.clean_keys: set[str] = set()  # object keys found to hold nothing (walk.py)
        self._pii: Any = None
        if self.config.pii:
            from .scanners import PiiScanner

            self._pii = PiiScanner()

    # ------------------------------------------------------------------------------ placeholders

    def placeholder(self, kind: str, value: str) -> str:
        digest = hmac.new(self._key, value.encode("utf-8", "surrogatepass"), hashlib.sha256).hexdigest()
        suffix = self._suffix.get(digest)
        if suffix is None:
            length = SUFFIX
            while (owner := self._taken.get(digest[:length])) is not None and owner != digest:
                length += 4
            suffix = self._suffix[digest] = digest[:length]
            self._taken[suffix] = digest
        return f"<REDACTED:{kind}:{suffix}>"

    # ------------------------------------------------------------------------------ allowlists

    def allowed(self, rule: Rule, value: str) -> bool:
        if value in self._allow or any(rx.search(value) for rx in self._allow_rx):
            return True
        if rule.id == "email":
            local, _, domain = value.lower().rpartition("@")
            if (local + "@").startswith(self._allow_locals):
                return True
            return any(domain == d or domain.endswith("." + d) for d in self._allow_domains)
        return False

    # ------------------------------------------------------------------------------ scanning

    def _segments(self, text: str) -> Iterator[tuple[int, int]]:
        """The spans of ``text`` to scan: all of it but placeholders and inline base64 images."""
        skips = [m.span() for m in PLACEHOLDER.finditer(text)] if "<REDACTED:" in text else []
        if "base64," in text:
            skips += [m.span() for m in _DATA_URL.finditer(text)]
        pos = 0
        for start, end in sorted(skips):
            if start > pos:
                yield pos, start
            pos = max(pos, end)
        if pos < len(text):
            yield pos, len(text)

    def find(self, text: str, only: frozenset[str] | None = None) -> list[tuple[int, int, str, str]]:
        """The values to redact in ``text``: (start, end, rule id, kind), not overlapping, in order;
        ``only``: these rule ids alone (no denylist, no PII)."""
        if len(text) < 6 or is_image_base64(text):
            return []
        found: list[tuple[int, int, int, str, str]] = []  # (priority, start, end, rule, kind)
        lower = text.lower()
        for start, end in self._segments(text):
            part = text[start:end]
            part_lower = lower[start:end] if (start, end) != (0, len(text)) else lower
            active = set(self._always)
            for k in self._keywords:
                if k in part_lower:
                    active |= self._rules_of[k]
            for priority in sorted(active):
                rule = self.rules[priority]
                if only is not None and rule.id not in only:
                    continue
                for m in rule.pattern.finditer(part):
                    group = next((g for g in ("s", "t") if g in m.re.groupindex and m.group(g) is not None), 0)
                    value = m.group(group)
                    if not value:
                        continue
                    s, e = m.span(group)
                    if rule.known_safe(value) or self.allowed(rule, value):
                        # Claimed as safe: no later rule redacts this span (the AWS documentation key
                        # is no generic secret either).
                        found.append((priority, start + s, start + e, "", ""))
                    elif rule.accepts(value):
                        found.append((priority, start + s, start + e, rule.id, rule.kind))
            if only is not None:
                continue
            if self._deny and self._deny_first & set(part):
                for secret in self._deny:
                    i = part.find(secret)
                    while i >= 0:
                        found.append((-1, start + i, start + i + len(secret), DENYLIST_RULE, "secret"))
                        i = part.find(secret, i + len(secret))
            if self._pii is not None:
                for s, e, entity in self._pii.find(part):
                    found.append((len(self.rules), start + s, start + e, f"pii-{entity}", entity))
        # An earlier rule (the denylist first) wins where two overlap; then a longer value.
        found.sort(key=lambda f: (f[0], -(f[2] - f[1]), f[1]))
        chosen: list[tuple[int, int, str, str]] = []
        for _, s, e, rule_id, kind in found:
            if all(e <= cs or s >= ce for cs, ce, _, _ in chosen):
                chosen.append((s, e, rule_id, kind))
        return sorted(c for c in chosen if c[2])

    def text(self, text: str, *, file: str | None = None, pointer: str = "", only: frozenset[str] | None = None) -> str:
        """``text`` with every value found replaced by its placeholder; each counted in the report."""
        self.report.strings += 1
        hits = self.find(text, only)
        if not hits:
            return text
        out = []
        pos = 0
        for s, e, rule_id, kind in hits:
            out.append(text[pos:s])
            out.append(self.placeholder(kind, text[s:e]))
            self.report.add(file, rule_id, pointer)
            pos = e
        out.append(text[pos:])
        return "".join(out)

    # ------------------------------------------------------------------------------ documents and rows

    def story(self, story: Mapping[str, Any], *, file: str | None = None) -> dict[str, Any]:
        """A redacted copy of a Storyline document (``walk.py`` says where it looks), validated."""
        from .walk import redact_story

        return redact_story(self, story, file=file)

    def row(self, row: Mapping[str, Any]) -> dict[str, Any]:
        """A redacted copy of a dataset row: a ``STORYLINE_FEATURES`` row as its document (derived columns
        made again), any other row (``to_sharegpt``/``to_messages`` output…) string by string."""
        from ..features import is_row, row_to_story, story_to_row
        from .walk import redact_value

        if is_row(row):
            return story_to_row(self.story(row_to_story(row)), check=False)
        return redact_value(self, dict(row))
