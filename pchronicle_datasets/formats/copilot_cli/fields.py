"""The Copilot CLI events ↔ Storyline tables (docs/formats/copilot-cli.md is their prose), held once for reader and
writer.

>>> sorted(EVENT_KEYS), COMPLETE
(['data', 'id', 'parentId', 'timestamp', 'type'], 'tool.execution_complete')
"""

from __future__ import annotations

NAME = "copilot-cli"

#: The keys of an event line; an event with any other key stays residual, whole.
EVENT_KEYS = frozenset({"type", "data", "id", "timestamp", "parentId"})
#: The event types the reader maps (every other event is residual at its pointer): the session, the three turn
#: events (``system.message`` holds the CLI's system prompt, written before the first user message), a call's
#: result, the session's model metrics.
START, SYSTEM, USER, ASSISTANT, COMPLETE, SHUTDOWN = (
    "session.start",
    "system.message",
    "user.message",
    "assistant.message",
    "tool.execution_complete",
    "session.shutdown",
)
#: The families an event type starts with (``session.start``: ``session``), for detection.
FAMILIES = ("session", "system", "user", "assistant", "tool", "subagent")
