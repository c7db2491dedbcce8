"""The OpenHands agent SDK (V1) events ↔ Storyline tables (docs/formats/openhands-sdk.md is their prose), held once
for reader and writer.

>>> CALL_KINDS, RESULT_KINDS["AgentErrorEvent"]
(('ActionEvent',), 'error')
"""

from __future__ import annotations

import re
from typing import Any

NAME = "openhands-sdk"

#: The event classes of ``openhands-sdk/openhands/sdk/event/`` (pydantic models told apart by ``kind``): what
#: detection takes for an SDK event. A record whose ``kind`` is none of them is no SDK event for detection; inside
#: a stream the reader keeps such an event whole as residual (a class of a later SDK).
EVENT_KINDS = frozenset(
    {
        "SystemPromptEvent",
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "CondensationSummaryEvent",
        "Condensation",
        "CondensationRequest",
        "ConversationStateUpdateEvent",
        "ConversationErrorEvent",
        "PauseEvent",
        "InterruptEvent",
        "TokenEvent",
        "LLMCompletionLogEvent",
        "HookExecutionEvent",
        "StreamingDeltaEvent",
        "ACPToolCallEvent",
    }
)
SYSTEM = "SystemPromptEvent"
MESSAGE = "MessageEvent"
CALL_KINDS = ("ActionEvent",)
#: The events that answer a call (``ObservationBaseEvent``'s subclasses) → the result's ``response.status``
#: (``None``: the observation's own ``is_error``/``error`` says it).
RESULT_KINDS: dict[str, str | None] = {
    "ObservationEvent": None,
    "AgentErrorEvent": "error",
    "UserRejectObservation": "rejected",
}
#: ``UserRejectObservation.to_llm_message``: what the model is shown of a rejection (its reason after this).
REJECTED = "Action rejected: "
#: A tool call an ACP server ran (``ACPAgent``: Claude Code, Codex, Gemini CLI behind the Agent Client Protocol):
#: one early event when it starts and one when it ends, both with its ``tool_call_id`` (older SDKs: a frame per
#: progress update). Not shown to OpenHands' own LLM, but what the server's model called and was answered: a call
#: with its result (docs/formats/openhands-sdk.md).
ACP = "ACPToolCallEvent"
#: The statuses that end an ACP call (``acp_agent._TERMINAL_TOOL_CALL_STATUSES``); ``failed`` is an error.
ACP_DONE = frozenset({"completed", "failed"})
ACP_FAILED = "failed"
#: The keys of an ACP call's name, in the order they are looked for (the SDK's resume transcript names a call by its
#: ``title``, else its ``tool_kind``).
ACP_NAME = ("title", "tool_kind")
#: The key that names the sub-agent session an ACP event belongs to (SDKs with ``ACPAgent.acp_subagents``; absent or
#: ``null`` for the root session, the conversation's own).
ACP_SESSION = "acp_session_id"
SUMMARY = "CondensationSummaryEvent"
CONDENSATION = "Condensation"
STATE = "ConversationStateUpdateEvent"
#: The state keys whose value maps: ``stats`` (the conversation's accumulated metrics, the last one the final).
STATS = "stats"
INTERRUPT = "InterruptEvent"
#: The keys of an observation (``observation``: a tool's ``Observation`` model) that hold what the tool returned,
#: in the order they are looked for: ``content`` (text blocks since SDK 1.x; a string in ``ThinkObservation``),
#: ``output`` (the 2025 ``ExecuteBashObservation``, ``FileEditorObservation``, ``BrowserObservation``),
#: ``message`` (``FinishObservation``).
OBSERVATION_TEXT = ("content", "output", "message")
#: The keys of an observation that say the tool failed (a boolean).
OBSERVATION_ERROR = ("is_error", "error")
#: A Storyline turn's kind and extra for a condensation (the model's earlier events forgotten, a summary in their
#: place): a context turn, as codex and claude-code write their compactions.
CONTEXT = "context"
COMPACTION = "condensation"

#: How the same-source writer gives back a value the pointer map derived (``formats/layout.py``).
INVERSE: dict[str, Any] = {"rejected": lambda text: text.removeprefix(REJECTED)}

#: An evaluation record (OpenHands/benchmarks' ``output.jsonl``: one object per instance, the events in
#: ``history``): its keys that map (key → Storyline pointer, the value's type); every other key stays residual.
HISTORY = "history"
RECORD_KEYS = {"instance_id": ("/session", str), "metrics": ("/final_metrics", dict)}

#: A persisted conversation (``persistence_const.py``): ``<id>/base_state.json`` and ``<id>/events/event-<idx>-<event
#: id>.json``, one event per file.
EVENT_FILE = re.compile(r"(?:^|/)events/event-\d{5,}-[0-9a-fA-F\-]{8,}\.json$")
#: A member file of a conversation folder: the folder (the document's id) and the file's path in it.
MEMBER = re.compile(r"^(?:(?P<folder>.*)/)?(?:base_state\.json|events/event-\d{5,}-[0-9a-fA-F\-]{8,}\.json)$")
#: ``base_state.json`` keys that map (key → Storyline pointer, the value's type); ``agent.llm.model`` is copied
#: to ``/agent/model``; every other key stays residual.
STATE_KEYS = {"id": ("/session", str), "stats": ("/final_metrics", dict)}

#: What the writer writes of documents of other formats (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("turns",),
    "turn": ("id", "src", "msg", "tool_calls", "observation", "reason"),
    "call": ("tcid", "fn", "args"),
    "result": ("content", "source_call_id"),
}
