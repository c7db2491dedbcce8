"""The Codex rollout ↔ Storyline tables (docs/formats/codex.md is their prose), held once for reader and writer.
The Responses items themselves are the shared message model's (``formats/messages/responses.py``).

>>> SESSION["cli_version"], HOSTED_FN["tool_search_call"]
(('agent', 'ver', 'str'), 'tool_search')
"""

from __future__ import annotations

NAME = "codex"
HINTS = "codex"  # /meta/codex: the line plan and counts of a document read from a rollout
AGENT_ID = "codex"

#: The ``type`` of a wrapper line (``{timestamp, type, payload}``); any other type is kept whole as residual.
WRAPPER_TYPES = ("session_meta", "turn_context", "response_item", "event_msg", "compacted")
#: The keys of the first line of a pre-wrapper rollout (``id``, ``timestamp`` and ``instructions`` required).
PRE_WRAPPER_HEADER = frozenset({"id", "timestamp", "instructions", "git"})

#: session_meta payload (or pre-wrapper header) key → (Storyline object, key, kind the value must have to be
#: mapped: ``nestr`` a non-empty string, ``time`` a Storyline time, ``str`` a string); else it stays residual.
SESSION = {
    "id": ("document", "session", "nestr"),
    "timestamp": ("document", "started_at", "time"),
    "cli_version": ("agent", "ver", "str"),
    "originator": ("agent", "name", "str"),
}
#: The content part type a plain-text message of a role is written with (documents of other formats).
TEXT_PART = {"assistant": "output_text"}  # every other role: input_text

#: Hosted tool calls the message model has no reader for: item type → the Storyline ``fn`` (and call kind).
HOSTED_FN = {"tool_search_call": "tool_search", "image_generation_call": "image_generation"}
#: The key of a hosted call's arguments, in the order looked for: Codex's ``ToolSearchCall`` writes
#: ``arguments`` (codex-rs/protocol ``ResponseItem::ToolSearchCall {id, call_id, status, execution, arguments}``);
#: ``action`` is kept for items that carry one.
HOSTED_ARGS = ("arguments", "action")
#: Hosted outputs: item type → (the key of the result's content, the call item it answers) (``ToolSearchOutput
#: {call_id, status, execution, tools}``: the tools the search loaded are what the model sees next).
HOSTED_OUTPUTS = {"tool_search_output": ("tools", "tool_search_call")}

#: token_count usage key → Storyline metrics key (ATIF's metric names); the rest go to metrics.extra
USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens", "cached_input_tokens": "cached_tokens"}
