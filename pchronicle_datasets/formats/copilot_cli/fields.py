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
#: A compaction's end: its ``summaryContent`` (what the model is given in place of the turns it summarizes) is a
#: context turn of the user (``extra.copilot_cli.context`` ``compaction``), as Claude Code's summary is.
COMPACTION, SUMMARY_KEY, COMPACTION_CONTEXT = "session.compaction_complete", "summaryContent", "compaction"
#: The families an event type starts with (``session.start``: ``session``), for detection.
FAMILIES = ("session", "system", "user", "assistant", "tool", "subagent")

#: The ``data`` key that marks an event as a subagent's (deprecated in the CLI's schema for a top-level ``agentId``,
#: which ``EVENT_KEYS`` already leaves out): such an event stays whole in the residual, out of the main conversation.
SUBAGENT_DATA_KEY = "parentToolCallId"

#: A ``user.message`` the user did not type is a context turn (``copied``, ``kind`` ``context``), its reason in
#: ``extra.copilot_cli.context``: a ``source`` with one of these prefixes (``skill-pdf``: a skill's hidden
#: instructions; ``agent-<id>``: another agent's prompt), or ``isAutopilotContinuation: true`` (reason ``autopilot``).
CONTEXT_SOURCE_PREFIXES = ("skill-", "agent-")
AUTOPILOT_KEY, AUTOPILOT = "isAutopilotContinuation", "autopilot"
CONTEXT_KIND = "context"
EXTRA_KEY = "copilot_cli"
#: A ``system.message`` whose text is the previous system turn's (the CLI writes its system prompt again for each
#: interaction, ``interactionId``): a copy (``copied``, ``kind`` ``context``, ``extra.copilot_cli.context`` this).
REPEATED_SYSTEM = "repeated"


def context_of(data: dict) -> str | None:
    """Why a ``user.message``'s data is context (its ``source``, or ``autopilot``), or None when the user typed it.

    >>> context_of({"source": "skill-pdf"}), context_of({"isAutopilotContinuation": True})
    ('skill-pdf', 'autopilot')
    >>> context_of({"source": "user"}), context_of({"source": "command-review"})
    (None, None)
    """
    source = data.get("source")
    if type(source) is str and source.startswith(CONTEXT_SOURCE_PREFIXES):
        return source
    return AUTOPILOT if data.get(AUTOPILOT_KEY) is True else None
