"""Turns no model saw: a harness's notices to its user, which training leaves out.

A harness writes lines in its log that it only shows the user: Gemini CLI's ``info``, ``warning`` and ``error``
messages ("Model switched to gemini-2.5-pro.", "[API Error: exceeded quota for the day]"; gemini-cli's
``convertSessionToClientHistory`` skips the three types when it builds the history it sends to the model) and
Codex's ``exec --json`` ``error`` items ("Skill descriptions were shortened…", printed by the CLI). Their readers
keep them as ``system`` turns whose ``kind`` names the notice (so a same-source writer gives the type back); a
trainer reading them as ``system`` messages would learn from text the model never read. This module is the one
place that says which turns those are; ``training/`` decides that no training output renders them (the renderers'
``drop_notices``), and the chat and ShareGPT writers, which convert rather than train, keep them.

>>> is_notice({"src": "system", "kind": "warning", "msg": "Model switched."})
True
>>> is_notice({"src": "system", "msg": "You are a helpful agent."}), is_notice({"src": "user", "kind": "info"})
(False, False)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["NOTICE_KINDS", "is_notice"]

#: The ``kind`` of a ``system`` turn that is a notice shown only to the user (none of RFC-0001's or RFC-0009's
#: turn kinds: those are ``context``, ``llm.request``, ``llm.response``, ``autonomous``).
NOTICE_KINDS = frozenset({"info", "warning", "error"})


def is_notice(turn: Mapping[str, Any]) -> bool:
    """Whether ``turn`` is a notice no model saw: a ``system`` turn whose ``kind`` is one of ``NOTICE_KINDS``."""
    return turn.get("src") == "system" and turn.get("kind") in NOTICE_KINDS
