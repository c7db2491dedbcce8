"""Times a harness writes as integer milliseconds since the epoch (Cline's ``ts``, Kimi Code's ``time``) as
Storyline's RFC 3339 UTC with milliseconds, and back: one home for the rule, shared by the readers and writers
that need it."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

__all__ = ["ms_of", "time_of"]


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


def ms_of(ts: Any) -> int | None:
    """The milliseconds since the epoch of a turn's ``ts``: an RFC 3339 string or epoch seconds; None for any
    other value (what a writer then counts as lost).

    >>> ms_of("2026-04-24T23:26:13.494Z"), ms_of(1777073173.494), ms_of("yesterday"), ms_of(True)
    (1777073173494, 1777073173494, None, None)
    """
    if isinstance(ts, str):
        try:
            moment = datetime.fromisoformat(ts.replace("Z", "+00:00").replace("z", "+00:00"))
        except ValueError:
            return None
        whole = int(moment.timestamp())
        return whole * 1000 + moment.microsecond // 1000
    if isinstance(ts, (int, float)) and not isinstance(ts, bool):
        return round(ts * 1000)
    return None
