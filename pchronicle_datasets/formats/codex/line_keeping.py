"""What a Codex reader keeps of the lines it does not map: a line whole, or an object's other keys, beside the line
plan (``/meta/codex/lines``) the writer follows to give the same JSON back. Shared by the rollout reader
(``reader``) and the ``codex exec --json`` reader (``exec_stream``)."""

from __future__ import annotations

from typing import Any

from ...pointer import join
from ..residual import Residual

__all__ = ["LineKeeping"]


class LineKeeping:
    """A reader that keeps residual in ``kept`` and plans its lines in ``plan``."""

    kept: Residual
    plan: list[list[Any]]

    def keep_line(self, i: int, value: Any) -> None:
        """Line ``i`` kept whole (its plan entry ``["k"]``)."""
        self.kept.keep(f"/{i}", value)
        self.plan.append(["k"])

    def keep_rest(self, base: str, obj: dict, used: tuple[str, ...]) -> None:
        """The keys of ``obj`` (at ``base``) that are not in ``used``."""
        for key, value in obj.items():
            if key not in used:
                self.kept.keep(join(base, key), value)
