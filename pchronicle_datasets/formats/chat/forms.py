"""What the chat reader and writer agree on: the keys tried in a record, the roles, and how tool-call
``arguments`` strings are spelled (so that the same source is written back byte for byte).

>>> read_arguments('{"path": "."}')
({'path': '.'}, 's')
>>> read_arguments('{"path":"."}')
({'path': '.'}, 'c')
>>> write_arguments({"path": "."}, "c")
'{"path":"."}'
>>> read_arguments("ls -la")  # not JSON: kept as the string
('ls -la', 'r')
"""

from __future__ import annotations

from ..messages.openai_chat import read_arguments, write_arguments

__all__ = [
    "CONTENT_LIKE_KEYS",
    "ID_KEYS",
    "REASON_KEYS",
    "ROLE_SRC",
    "SRC_ROLE",
    "TOOLS_KEYS",
    "read_arguments",
    "write_arguments",
]

#: Record keys tried, in this order, for the session id (the first non-empty string wins).
ID_KEYS = ("id", "session_id", "conversation_id", "instance_id")
#: Record keys tried, in this order, for the tool definitions (the first present and not null wins).
TOOLS_KEYS = ("tools", "tool_definitions", "available_tools")
#: Message keys that hold what a message says under another name than ``content``: a message with no content,
#: no calls and no reasoning but one of these is refused (its text would otherwise be residual only).
CONTENT_LIKE_KEYS = ("text", "value", "parts", "contents", "message", "body", "output", "blocks", "content_parts")
#: Message keys tried, in this order, for the reasoning text (the first holding a string wins).
REASON_KEYS = ("reasoning_content", "reasoning", "thinking")
#: Message roles that become turns, and the turn ``src`` they get (developer is not folded into system).
ROLE_SRC = {"system": "system", "developer": "developer", "user": "user", "assistant": "agent"}
SRC_ROLE = {src: role for role, src in ROLE_SRC.items()}
