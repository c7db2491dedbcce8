"""The Cursor transcript ↔ Storyline tables (docs/formats/cursor.md is their prose), held once for reader and writer.

>>> ROLE_OF["agent"], WRAPPED.match("<user_query>\\nls\\n</user_query>").group(2)
('assistant', 'ls')
>>> [REDACTED.match(t) and REDACTED.match(t).groups() for t in ("Done.\\n\\n[REDACTED]", "[REDACTED]", "a [REDACTED]")]
[('', 'Done.', '\\n\\n[REDACTED]'), ('', '', '[REDACTED]'), None]
"""

from __future__ import annotations

import re

NAME = "cursor"

#: line ``role`` → Storyline ``src`` (any other role: the line stays residual, whole); and back
ROLES = {"user": "user", "assistant": "agent"}
ROLE_OF = {v: k for k, v in ROLES.items()}
#: The wrapper Cursor puts around a user's query (with an optional leading timestamp line): unwrapped.
WRAPPED = re.compile(r"((?:<timestamp>[^<]*</timestamp>\n)?<user_query>\n)(.*)(\n</user_query>)\Z", re.DOTALL)
#: The marker Cursor ends an assistant's text with, ``\n\n[REDACTED]`` (the whole text when the line held only
#: thinking): the placeholder of the thinking it does not store, not the agent's words. Unwrapped the same way
#: (groups: head, text, tail), so the writer puts it back; seen on every assistant text of a real transcript.
REDACTED = re.compile(r"()((?:.*?)(?=\n\n\[REDACTED\]\Z)|)(\n\n\[REDACTED\]|\[REDACTED\])\Z", re.DOTALL)
#: The keys of a content part the turn holds, by part type (its other keys stay residual at their pointer).
TEXT_KEYS = ("type", "text")
TOOL_KEYS = ("type", "name", "input")
#: The id a call gets (transcripts hold none): its line's 0-based index among the non-blank lines and its part's
#: index in the content, so the same file always gives the same ids.
CALL_ID = "cursor-{index}-{part}"
