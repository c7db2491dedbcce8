"""Redaction of what ``push_to_hub`` uploads: every split, before any file is written or any request made.

Storyline rows are redacted as documents (``Redactor.row``); any other rows (``to_sharegpt`` /
``to_messages`` output, or anything a user pushes) string by string. So a training set rendered from raw
documents is still redacted at push; the CLI redacts the documents as it reads them (so the report names
files and document fields) and this pass then finds nothing new: it is the fail-closed net.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any

from .config import RedactionError
from .engine import Redactor

__all__ = ["card_lines", "redact_splits", "resolve"]

NOT_REDACTED = "- **Redaction:** not run (the uploader turned it off with `--no-redact` / `redact=False`)"


def resolve(redact: bool | Redactor | None) -> Redactor | None:
    """``True``/``None``: a new redactor (random key); ``False``: none; a ``Redactor``: that one."""
    if redact is False:
        return None
    if isinstance(redact, Redactor):
        return redact
    if redact is True or redact is None:
        return Redactor()
    raise TypeError(f"redact must be True, False or a Redactor, got {type(redact).__name__}")


def redact_splits(splits: Mapping[str, Any], redactor: Redactor) -> dict[str, Any]:
    """Each split redacted (a new dataset; the given ones are not changed). Raises ``RedactionError``."""
    out = {}
    for name, ds in splits.items():
        try:
            out[name] = ds.map(
                redactor.row,
                features=ds.features,
                load_from_cache_file=False,
                new_fingerprint=f"pchronicle-redact-{secrets.token_hex(8)}",  # never hash the redactor's key
                desc=f"redacting {name}",
            )
        except RedactionError:
            raise
        except Exception as exc:  # a row redaction cannot write back: nothing is uploaded
            raise RedactionError(
                f"redaction of split {name!r} failed ({type(exc).__name__}); nothing was uploaded"
            ) from None
    return out


def card_lines(redactor: Redactor | None) -> list[str]:
    return [NOT_REDACTED] if redactor is None else redactor.report.card_lines()
