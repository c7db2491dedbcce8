"""The Pi session ↔ Storyline tables (docs/formats/pi.md is their prose), held once for reader and writer.

>>> ROLES["hookMessage"]
'custom'
"""

from __future__ import annotations

NAME = "pi"
HINTS = "pi"  # /meta/pi: the line plan and counts of a document read from a Pi session
AGENT_ID = "pi"

#: message roles → how the reader takes them (v2's hookMessage is v3's custom)
ROLES = {
    "user": "user",
    "assistant": "assistant",
    "toolResult": "toolResult",
    "bashExecution": "bashExecution",
    "custom": "custom",
    "hookMessage": "custom",
}
#: entry types that give a context turn: entry type → the key of their text
SUMMARIES = {"compaction": "summary", "branch_summary": "summary"}

#: assistant usage key → Storyline metrics key; ``cost.total`` is ``cost_usd``; the rest go to metrics.extra
USAGE = {"input": "prompt_tokens", "output": "completion_tokens", "cacheRead": "cached_tokens"}
USAGE_EXTRA = {"cacheWrite": "cache_write_tokens", "totalTokens": "total_tokens"}
