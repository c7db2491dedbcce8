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
#: The top-level key of a subagent's event (Copilot CLI 1.0.5x on: "Sub-agent instance identifier. Absent for events
#: from the root/main agent"), and the event that names the ``task`` call a subagent runs for (``data.toolCallId``).
AGENT_KEY = "agentId"
SUBAGENT_STARTED = "subagent.started"
#: A subagent's events, which stay whole in the main document's residual, also make a document of their own (read as
#: the main agent's events are): ``/session`` ``<main session>/<agent id>``, ``/parent`` ``{"psid": <main session>,
#: "rel": "subagent", "scid": <its task call>, "ptid": <the turn of that call>}``; the main document lists it in
#: ``/children``. A derived document: it keeps no residual (the main document holds every value) and its
#: ``/meta/copilot-cli`` names its agent and lines, no layout, so it is written back only as part of its main file.
SUBAGENT_REL = "subagent"


def agent_of(ev: dict) -> str | None:
    """The subagent an event belongs to (its ``agentId``, else its ``data.parentToolCallId``), None for the main
    agent's.

    >>> agent_of({"type": "user.message", "data": {}, "agentId": "a1"}), agent_of({"data": {"parentToolCallId": "c"}})
    ('a1', 'c')
    """
    agent = ev.get(AGENT_KEY)
    if type(agent) is str and agent:
        return agent
    data = ev.get("data")
    agent = data.get(SUBAGENT_DATA_KEY) if isinstance(data, dict) else None
    return agent if type(agent) is str and agent else None


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
