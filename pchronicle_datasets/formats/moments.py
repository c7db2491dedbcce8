"""Times a harness writes as integer milliseconds since the epoch (Cline's ``ts``, Kimi Code's ``time``) as
Storyline's RFC 3339 UTC with milliseconds: one home for the rule, shared by the readers that need it."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

__all__ = ["time_of"]


def time_of(ts: Any) -> str | None:
    """RFC 3339 UTC with milliseconds of an integer ``ts`` (ms since the epoch), which gives the same integer back;
    None for any other value (a bool, a float, a year past 9999).

    >>> time_of(1777073173494), time_of(True), time_of(1.5)
    ('2026-04-24T23:26:13.494Z', None, None)
    """
    if type(ts) is not int or not 0 <= ts < 253402300800000:  # years 1970–9999
        return None
    moment = datetime.fromtimestamp(ts // 1000, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S") + f".{ts % 1000:03d}Z"
