"""The state of one session being built, which the readers of its rows (``turns``, ``fields``) read and add to:
given to them by ``session.Session``, so neither imports the session (no import circle)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ...errors import FormatError
from ..residual import Residual
from .hints import RowHint
from .history import Held
from .tables import NAME, nonempty_str

__all__ = ["SessionState", "SourceRow"]


@dataclass
class SourceRow:
    """One source row with what the session learnt of it: its index ``r``, physical line, export hint and its
    ``meta_json`` / ``env_state`` decoded (None when absent or undecodable: then kept whole as residual)."""

    r: int
    row: dict[str, Any]
    line: int | None
    hint: RowHint
    meta: dict[str, Any] | None
    env_state: dict[str, Any] | None

    @property
    def base(self) -> str:
        return f"/session_steps/{self.r}"


class SessionState:
    """What the rows of one session share while its document is built: the session's identity, its residual,
    the call ids given so far, the latest agent turn, and what the session selected from all its rows (run,
    agent, task environment, tools)."""

    def __init__(self, sid: str, document_id: str | None, scan: bool = True) -> None:
        self.sid = sid
        self.scan = scan  # False: the file holds no integer beyond 64 bits, so no value in it needs the check
        self.document_id = document_id
        self.kept = Residual(NAME, document_id)
        self.used_tcids: set[str] = set()
        self.call_alias: dict[str, str] = {}  # a source call id → the tcid of its latest call
        self.source_ids: dict[str, str] = {}  # renamed call ids → the source's (/meta/source_call_ids)
        self.last_agent: dict[str, Any] | None = None  # the latest agent turn so far, in document order
        self.held = Held()  # every message the rows read so far held: echoes of them are copies
        self.task_env: dict[str, Any] = {}
        self.task_state: dict[str, Any] = {}
        self.tools: list | None = None  # /agent/tools: the first row's non-empty tools array, in step order
        self.run: str | None = None
        self.run_key: str | None = None
        self.agent_id = ""
        self.agent_source = ""  # where agent_id came from: agent_id, meta_json/source, model or default

    def error(self, pointer: str, reason: str, line: int | None = None) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=line)

    def keep(self, pointer: str, value: Any) -> None:
        self.kept.keep(pointer, value)

    def tcid(self, original: Any, fallback: str) -> str:
        """The source id when it is usable (non-empty, not yet used in the document), else a deterministic one."""
        if nonempty_str(original) and original not in self.used_tcids:
            tcid = original
        else:
            tcid = fallback
            n = 1
            while tcid in self.used_tcids:
                n += 1
                tcid = f"{fallback}-{n}"
        self.used_tcids.add(tcid)
        if nonempty_str(original):
            self.call_alias[original] = tcid
            if tcid != original:
                self.source_ids[tcid] = original  # a reused id: training outputs show the one the source wrote
        return tcid
