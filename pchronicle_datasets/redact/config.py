"""What a redaction run is told: the key of its placeholders, allowlists, denylists and the optional scans.

A config file (YAML or JSON, ``--redact-config FILE``) has the same keys as ``RedactionConfig``; options
given on the command line add to its lists (docs/redaction.md has an example):

.. code-block:: yaml

    key: a-long-random-string      # stable placeholders across runs (default: a random key per run)
    allow: [sk_test_4eC39HqLyjWDarjtT1zdp7dc]   # exact values never redacted
    allow_regex: ['^AKIA.*TESTING$']            # values matching one of these are never redacted
    allow_email: [acme.com, bot@]   # a domain (and its subdomains), or a local part ending in @
    secrets: [hunter2-prod]         # exact values always redacted, whatever their shape
    secrets_files: [.env]           # every value of KEY=VALUE lines
    disable: [email]                # rule ids not to run
    strip_opaque: true              # opaque reasoning payloads (signatures, encrypted content)
    pii: false                      # Presidio's recognisers (the `pii` extra)
    second_scan: false              # trufflehog / betterleaks on the redacted output before a push

>>> cfg = RedactionConfig.from_mapping({"allow_email": ["acme.com"], "secrets": ["hunter2-prod"]})
>>> cfg.allow_email, cfg.secrets
(('acme.com',), ('hunter2-prod',))
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import PchronicleError
from .rules import RULES

__all__ = ["DEFAULT_ALLOW_EMAIL", "MIN_SECRET_LENGTH", "RedactionConfig", "RedactionError", "read_secrets_file"]

# Reserved domains (RFC 2606 / RFC 6761) and addresses that reach no one.
DEFAULT_ALLOW_EMAIL = (
    "example.com",
    "example.org",
    "example.net",
    "example",
    "test",
    "invalid",
    "localhost",
    "users.noreply.github.com",
    "noreply@",
    "no-reply@",
    "donotreply@",
    "git@",
)
# A denylisted value shorter than this would redact ordinary text (a port, a word): it is refused.
MIN_SECRET_LENGTH = 6


class RedactionError(PchronicleError):
    """Redaction could not run, or found what blocks an upload; nothing was uploaded. Never holds a value."""


@dataclasses.dataclass(frozen=True)
class RedactionConfig:
    key: str | None = None
    allow: tuple[str, ...] = ()
    allow_regex: tuple[str, ...] = ()
    allow_email: tuple[str, ...] = ()
    secrets: tuple[str, ...] = ()
    secrets_files: tuple[str, ...] = ()
    disable: tuple[str, ...] = ()
    strip_opaque: bool = True
    pii: bool = False
    second_scan: bool = False

    def __post_init__(self) -> None:
        ids = {r.id for r in RULES}
        unknown = [d for d in self.disable if d not in ids]
        if unknown:
            raise RedactionError(f"unknown rule id(s) to disable: {', '.join(unknown)}; the rules are {', '.join(ids)}")
        for pattern in self.allow_regex:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise RedactionError(f"allow_regex {pattern!r} is not a regular expression: {exc}") from None

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str = "the redaction config") -> RedactionConfig:
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - set(fields))
        if unknown:
            raise RedactionError(f"unknown key(s) {', '.join(unknown)} in {source}; known: {', '.join(fields)}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            kind = fields[name].type
            if "tuple" in str(kind):
                if isinstance(value, str):
                    value = [value]
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise RedactionError(f"{name} in {source} must be a list of strings")
                values[name] = tuple(value)
            elif "bool" in str(kind):
                if not isinstance(value, bool):
                    raise RedactionError(f"{name} in {source} must be true or false")
                values[name] = value
            else:
                if value is not None and not isinstance(value, str):
                    raise RedactionError(f"{name} in {source} must be a string")
                values[name] = value
        return cls(**values)

    @classmethod
    def from_file(cls, path: str | Path) -> RedactionConfig:
        """A config file: YAML (JSON is YAML too)."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except OSError as exc:
            raise RedactionError(f"cannot read the redaction config {path}: {exc.strerror}") from None
        try:
            data = yaml.safe_load(text) if text.strip() else {}
        except yaml.YAMLError:
            try:
                data = json.loads(text)
            except ValueError:
                raise RedactionError(f"the redaction config {path} is neither YAML nor JSON") from None
        if not isinstance(data, dict):
            raise RedactionError(f"the redaction config {path} must be a mapping of keys to values")
        return cls.from_mapping(data, source=str(path))

    def merged(self, **more: Any) -> RedactionConfig:
        """This config with list options appended and scalar options replaced (those given, not None)."""
        values: dict[str, Any] = {}
        for name, value in more.items():
            if value is None:
                continue
            current = getattr(self, name)
            values[name] = (*current, *value) if isinstance(current, tuple) else value
        return dataclasses.replace(self, **values)

    def all_secrets(self) -> list[str]:
        """The denylist: ``secrets`` and every value of the ``secrets_files``."""
        out = list(self.secrets)
        for path in self.secrets_files:
            out += read_secrets_file(path)
        short = [s for s in out if len(s) < MIN_SECRET_LENGTH]
        if any(s in self.secrets for s in short):
            raise RedactionError(
                f"a --secret value is shorter than {MIN_SECRET_LENGTH} characters: it would redact ordinary text"
            )
        return sorted({s for s in out if len(s) >= MIN_SECRET_LENGTH}, key=lambda s: (-len(s), s))


_ENV_LINE = re.compile(r"^\s*(?:export\s+)?[A-Za-z_][A-Za-z0-9_.-]*\s*[=:]\s*(?P<v>.*?)\s*$")


def read_secrets_file(path: str | Path) -> list[str]:
    """The values of a ``.env`` file's ``KEY=VALUE`` lines (quotes removed, ``#`` comments skipped);
    values shorter than ``MIN_SECRET_LENGTH``, numbers and booleans are left out (they are not secrets,
    and would redact ordinary text).

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".env", delete=False) as f:
    ...     _ = f.write('# db\\nexport DB_PASSWORD="s3cr3t-Pass"\\nPORT=5432\\nDEBUG=true\\n')
    >>> read_secrets_file(f.name)
    ['s3cr3t-Pass']
    >>> os.unlink(f.name)
    """
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RedactionError(f"cannot read the secrets file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise RedactionError(f"the secrets file {path} is not UTF-8 text") from None
    out = []
    for line in lines:
        if line.lstrip().startswith("#"):
            continue
        m = _ENV_LINE.match(line)
        if not m:
            continue
        value = m.group("v")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        if len(value) < MIN_SECRET_LENGTH or re.fullmatch(r"[\d.]+|true|false|yes|no|on|off", value, re.I):
            continue
        out.append(value)
    return out
