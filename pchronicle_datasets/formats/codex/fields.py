"""The Codex rollout ↔ Storyline tables (docs/formats/codex.md is their prose), held once for reader and writer.

>>> CALL_ITEMS["custom_tool_call"]
('call_id', 'input', 'custom')
>>> HOSTED_FN["web_search_call"]
'web_search'
"""

from __future__ import annotations

NAME = "codex"
HINTS = "codex"  # /meta/codex: the line plan and counts of a document read from a rollout
AGENT_ID = "codex"

#: The ``type`` of a wrapper line (``{timestamp, type, payload}``); any other type is kept whole as residual.
WRAPPER_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: The keys of the first line of a pre-wrapper rollout (``id``, ``timestamp`` and ``instructions`` required).
PRE_WRAPPER_HEADER = frozenset({"id", "timestamp", "instructions", "git"})

#: session_meta payload key → (Storyline place, kind the value must have to be mapped)
SESSION = {
    "id": ("session", "nestr"),
    "timestamp": ("started_at", "time"),
    "cli_version": ("agent.ver", "str"),
    "originator": ("agent.name", "str"),
}
#: Message roles read as turns of their own; ``assistant`` messages are the ``msg`` of an agent turn.
MESSAGE_ROLES = ("user", "developer", "system")
#: The content part type a plain-text message of a role is written with.
TEXT_PART = {"assistant": "output_text"}  # every other role: input_text

#: call item type → (key of its call id, key of its arguments, Storyline call kind or None)
CALL_ITEMS = {
    "function_call": ("call_id", "arguments", None),
    "custom_tool_call": ("call_id", "input", "custom"),
}
#: call items without a name: item type → the Storyline ``fn`` (their id is ``call_id`` or ``id``; args ``action``)
HOSTED_FN = {
    "local_shell_call": "local_shell",
    "web_search_call": "web_search",
    "tool_search_call": "tool_search",
    "image_generation_call": "image_generation",
}
#: output item type → the call item types it answers
OUTPUT_ITEMS = {
    "function_call_output": "function_call",
    "custom_tool_call_output": "custom_tool_call",
}
#: model-side items that make up an agent turn, in the order one turn takes them
AGENT_ITEMS = ("reasoning", "message", *CALL_ITEMS, *HOSTED_FN)

#: token_count usage key → Storyline metrics key (ATIF's metric names); the rest go to metrics.extra
USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens", "cached_input_tokens": "cached_tokens"}

FAILED_STATUSES = ("error", "failed", "incomplete")
