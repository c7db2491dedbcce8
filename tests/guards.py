"""Guards for tests that run hostile input: a hard wall-clock limit that turns a hang into a failure (a bound,
never a timed assertion: the limit is many times what the code needs)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["hard_timeout"]


class _Hang(BaseException):
    """Raised by the alarm; a BaseException so that no ``except Exception`` in the library swallows it."""


@contextmanager
def hard_timeout(seconds: float, what: str) -> Iterator[None]:
    """Fail (instead of stalling) when the block runs longer than ``seconds`` of wall-clock time."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield  # no SIGALRM here (Windows, a worker thread): Hypothesis' deadline still reports slow examples
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise _Hang

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    except _Hang:
        raise AssertionError(f"hang: {what} ran for more than {seconds} s") from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
