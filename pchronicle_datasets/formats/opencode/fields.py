"""The OpenCode export ↔ Storyline tables (docs/formats/opencode.md is their prose), held once for reader and writer.

>>> ROLES["assistant"], ROLE_OF["agent"]
('agent', 'assistant')
"""

from __future__ import annotations

NAME = "opencode"

#: message ``info.role`` → Storyline ``src`` (any other role: the message stays residual, whole); and back
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: Part types mapped into the turn; every other part type stays residual, whole, in its place.
MAPPED_PARTS = ("text", "reasoning", "tool")
#: The keys of a mapped part the turn holds (its other keys stay residual at their pointer).
TEXT_KEYS = ("type", "text")
TOOL_KEYS = ("type", "tool", "callID", "state")
#: ``tokens`` of a message → ``metrics``: exactly this shape, every count an integer; OpenCode 1.18 adds an integer
#: ``total`` (a real 1.18.13 database: every assistant message), kept in ``metrics.extra.total``.
TOKEN_KEYS = {"input", "output", "reasoning", "cache"}
TOTAL = "total"
CACHE_KEYS = {"read", "write"}
