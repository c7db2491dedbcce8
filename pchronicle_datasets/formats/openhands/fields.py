"""The OpenHands event stream ↔ Storyline tables (docs/formats/openhands.md is their prose), held once for reader
and writer.

>>> CALL_METADATA["function_name"], MESSAGE
('fn', 'message')
"""

from __future__ import annotations

from typing import Any

NAME = "openhands"

#: How the same-source writer gives back a value the pointer map derived (``formats/layout.py``): none is derived,
#: every mapped value is the source's own.
INVERSE: dict[str, Any] = {}
#: The action that is a message (a turn without calls), and the one whose ``message`` holds the agent's last words.
MESSAGE = "message"
FINISH = "finish"
#: The action that holds the system prompt (``SystemMessageAction``, first event since OpenHands 0.3x): not a call.
#: Its ``args`` key → the Storyline pointer it maps to (``content`` is the turn's message).
SYSTEM = "system"
SYSTEM_ARGS = {"tools": "/agent/tools", "openhands_version": "/agent/ver"}
#: An evaluation record (``output.jsonl``: one object per instance, the event stream in ``history``): its keys that
#: map (key → Storyline pointer, the value's type); every other key stays residual.
HISTORY = "history"
RECORD_KEYS = {"instance_id": ("/session", str), "metrics": ("/final_metrics", dict)}
#: What the writer names the events of another document's calls and results.
CALL = "call"
RESULT = "result"
#: ``tool_call_metadata`` key → the key of the call it names.
CALL_METADATA = {"tool_call_id": "tcid", "function_name": "fn"}

#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("turns",),
    "turn": ("id", "src", "msg", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args"),
    "result": ("content", "source_call_id"),
}
