"""The Qwen Code mapping table as data (docs/formats/qwen-code.md), read by the reader and both writers.

Source: QwenLM/qwen-code ``packages/core/src/services/chatRecordingService.ts`` (``ChatRecord``) and
``packages/core/src/utils/conversation-chain.ts`` (``buildOrderedUuidChain``).
"""

from __future__ import annotations

from typing import Any

NAME = "qwen-code"
AGENT_ID = "qwen-code"
AGENT_NAME = "Qwen Code"

#: Files Qwen Code keeps beside its sessions that hold none (``sidecars.index_files`` leaves them out of a
#: folder's documents): a project's ``meta.json`` (its creation and update times) and ``~/.qwen/usage_record.jsonl``
#: (one usage summary per finished session, no conversation).
INDEX_FILES = {
    "meta.json": "Qwen Code's record of when the project folder was created and updated",
    "usage_record.jsonl": "Qwen Code's usage summary of each finished session (no conversation)",
}

#: Record ``type`` → Storyline ``src`` for the records that make a turn; ``tool_result`` records answer calls,
#: ``system`` records are bookkeeping (residual, counted by ``subtype``).
TURN_TYPES = {"user": "user", "assistant": "agent"}
TOOL_RESULT = "tool_result"
SYSTEM = "system"
RECORD_TYPES = (*TURN_TYPES, TOOL_RESULT, SYSTEM)
#: Storyline ``src`` → record ``type`` and ``message.role``, for the writer of other documents.
TYPE_OF = {"user": ("user", "user"), "agent": ("assistant", "model")}

#: A ``user`` record that is not the user's words is a context turn (``copied``, ``kind`` ``context``), its reason in
#: ``extra.qwen_code.context``: a ``subtype`` (``notification``, ``cron``, ``background_task_completed``, …; not
#: ``mid_turn_user_message``, which the user typed), else a ``provenance`` other than ``real_user`` (``system``,
#: ``goal_control``, ``goal_runtime``).
USER_WORDS_SUBTYPES = frozenset({"mid_turn_user_message"})
USER_WORDS_PROVENANCE = "real_user"
CONTEXT_KIND = "context"
EXTRA_KEY = "qwen_code"


def context_of(record: dict[str, Any]) -> tuple[str, str] | None:
    """``(key, reason)`` of a user record that is context, or None when it holds the user's words.

    >>> context_of({"subtype": "notification", "provenance": "system"}), context_of({"provenance": "real_user"})
    (('subtype', 'notification'), None)
    """
    subtype, provenance = record.get("subtype"), record.get("provenance")
    if type(subtype) is str and subtype and subtype not in USER_WORDS_SUBTYPES:
        return "subtype", subtype
    if type(provenance) is str and provenance and provenance != USER_WORDS_PROVENANCE:
        return "provenance", provenance
    return None


#: The system record of a compression checkpoint: its ``systemPayload.compressedHistory`` is the history the model
#: sees from then on (qwen-code ``ChatCompressionRecordPayload``: "the new history contents that the model should see
#: after compression (summary turns + retained tail)"; ``ChatCompressionService`` writes the summary as its first,
#: ``user`` entry, then the model's "Got it. Thanks for the additional context!", then the kept tail, which the chain
#: already holds). The summary's text parts make a context turn, as Codex's ``compacted`` lines do: ``src`` ``system``,
#: ``kind`` ``context``, ``extra`` ``{"compaction": "chat_compression"}`` (the key ``pc.flags`` reads: ``compaction``).
COMPRESSION_SUBTYPE = "chat_compression"
COMPACTION_EXTRA = "compaction"

#: The system record that names the session a sub-session was spawned from (``create_sub_session``), its payload
#: key, and ``rel`` of the ``/parent`` it gives.
PARENT_SUBTYPE = "parent_session"
PARENT_KEY = "parentSessionId"
PARENT_REL = "sub_session"

#: Keys every record shares that map to one document value (the first record's; another value is residual).
SHARED = {"sessionId": "/session", "version": "/agent/ver", "cwd": "/task/env/state/cwd"}
GIT_BRANCH = ("gitBranch", "/task/env/state/gitBranch")

#: ``usageMetadata`` key → ``metrics`` key (ATIF's names); every other integer count goes to ``metrics.extra``.
USAGE = {
    "promptTokenCount": "prompt_tokens",
    "candidatesTokenCount": "completion_tokens",
    "cachedContentTokenCount": "cached_tokens",
}
METRIC_OF = {v: k for k, v in USAGE.items()}

#: The output of a result that is not an object, as Qwen Code wraps it (``{"output": …}``).
OUTPUT_KEY = "output"

#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("session", "turns", "started_at", "finished_at", "unknown_fields"),
    "agent": ("id", "name", "ver"),
    "task": ("/task/env/state",),
    "turn": ("id", "src", "msg", "ts", "model", "reason", "tool_calls", "metrics", "observation"),
    "call": ("tcid", "fn", "args", "result", "response"),
    "result": ("content", "source_call_id", "is_error"),  # each after its call (a loose one is counted apart)
}
