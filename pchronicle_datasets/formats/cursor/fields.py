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

#: A user line Cursor writes itself, not the user's words: its text (the text parts joined, leading blanks left out)
#: opens with one of these tags and holds no ``<user_query>``. The catalog of MCP tools the model may call
#: (``<dynamic_tools>``: "You have access to tools through dynamic namespaces…"), the subagent types and skills, the
#: files open in the editor; tools that read Cursor transcripts skip them as "not prompts" (entireio/cli's
#: ``TestPromptRewrittenMidTurnAfterACompactionIsHarnessInjected``, herdr's "user entries that are only … a tool
#: catalog are not prompts", a transcript harvester's ``_INJECTION_PREFIXES``). The model read it: a context turn
#: (``copied``, ``kind`` ``context``, ``extra.cursor.context`` the tag's name), as Claude Code's reminders and
#: Codex's ``<environment_context>`` are; not ``meta``, so ``pc.flags`` does not call it ``injected``.
CONTEXT_TAGS = ("<dynamic_tools>", "<available_subagent_types>", "<agent_skills>", "<open_and_recently_viewed_files>")
CONTEXT_KIND = "context"

#: The line that closes a turn, ``{"type": "turn_ended", "status": …, "error"?: …}`` (residual, whole). A turn the
#: user stopped ends ``status: "aborted"``, or ``status: "error"`` with ``error: "User aborted request"`` (Cursor's
#: ``ERROR_USER_ABORTED_REQUEST``, "User aborted request."): counted in ``/meta/cursor/interrupted``
#: (``formats.base.INTERRUPTED``; ``pc.flags``: ``interrupted``) when it closes a turn, not when it follows another
#: ``turn_ended`` (an abort logged after the turn had ended: herdr's "an abort logged after a successful end does not
#: make the turn an error").
TURN_ENDED = "turn_ended"
ABORTED_STATUS = "aborted"
ABORTED_ERROR = "User aborted request"
#: Any other ``turn_ended`` of ``status: "error"`` that closes a turn is one Cursor ended on its own, in its
#: provider's words (``"You've hit your usage limit Get Cursor Pro…"``: the model was not answered): counted in
#: ``/meta/cursor/counts`` under this key, which ``pc.flags`` reads as ``api_error`` (as Codex's ``task_complete``
#: errors, whose ``codex_error_info`` names usage limits and server errors alike).
ERROR_STATUS = "error"
API_ERROR_COUNT = "turn_ended/api_error"

#: A subagent's transcript lies in its parent's folder: ``agent-transcripts/<parent id>/subagents/<id>.jsonl``. Its
#: ``/parent`` is ``{"psid": <parent id>, "rel": "subagent"}``; the parent's ``/children`` come from the other files
#: of a load (``parent_of_path``, read by ``session_links``).
SUBAGENTS_DIR = "subagents"
SUBAGENT_REL = "subagent"
