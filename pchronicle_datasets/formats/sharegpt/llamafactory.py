"""LLaMA-Factory's ShareGPT dialect: ``function_call`` and ``observation`` elements, ``tools`` as a JSON string
and ``system`` as a record key (LLaMA-Factory's ``data/README.md``, "sharegpt" format).

A record is in this dialect when an element's ``from`` is ``function_call`` or ``observation``, or when it has
``tools`` or ``system`` as a string (the reference agent writes neither). It reads as:

- ``system`` (string) → the first turn, a ``system`` turn; ``tools`` (a JSON string of function schemas) →
  ``/agent/tools`` (the string's exact text comes back from the residual when it was not written as ``json.dumps``
  writes it);
- ``human`` → a user turn; ``gpt`` → an agent turn whose ``msg`` is the value as it is;
- ``function_call`` → an agent turn with ``tool_calls``: the value is ``{"name", "arguments"}`` or a list of
  them (parallel calls); a value that is not one is the turn's text (``from`` kept as residual);
- ``observation`` → the result of the next unanswered call of the ``function_call`` turn just before it; one
  with no call to answer is a turn of source ``tool`` (training outputs show it as the next user message).

``elements(story, column_system)`` writes a document's turns back as elements of this dialect (the same-source
writer, and the reader's exactness check).

>>> story = {"turns": [{"src": "user", "msg": "2+3?"},
...     {"src": "agent", "msg": "", "tool_calls": [{"tcid": "c", "fn": "add", "args": {"a": 2, "b": 3}}],
...      "observation": {"results": [{"source_call_id": "c", "content": "5"}]}}]}
>>> [e["from"] for e in elements(story, column_system=False)]
['human', 'function_call', 'observation']
"""

from __future__ import annotations

from typing import Any

from ...jsonio import try_loads
from ...render.sharegpt import jdumps, text_of

__all__ = ["DIALECT", "ROLES", "calls_of", "elements", "is_dialect", "result_text"]

DIALECT = "llamafactory"
ROLES = ("function_call", "observation")


def is_dialect(record: dict[str, Any], conv: list) -> bool:
    """Whether a record (or bare conversation, as ``{"conversations": …}``) is in LLaMA-Factory's dialect."""
    if isinstance(record.get("tools"), str) or isinstance(record.get("system"), str):
        return True
    return any(isinstance(e, dict) and e.get("from") in ROLES for e in conv)


def calls_of(value: Any) -> list[dict[str, Any]] | None:
    """The ``(name, arguments)`` of a ``function_call`` value, or None when it is not one (or a list of them).

    >>> calls_of('{"name": "ls", "arguments": {"p": "."}}')
    [{'name': 'ls', 'arguments': {'p': '.'}}]
    >>> calls_of("ls .") is None
    True
    """
    ok, parsed = try_loads(value) if isinstance(value, str) else (False, None)
    if not ok:
        return None
    items = parsed if isinstance(parsed, list) else [parsed]
    if not items or not all(isinstance(c, dict) and isinstance(c.get("name"), str) and c["name"] for c in items):
        return None
    return items


def result_text(content: Any) -> str:
    return content if isinstance(content, str) else jdumps(content)


def _call_value(calls: list[dict[str, Any]]) -> str:
    written = [{"name": c["fn"], "arguments": c.get("args", {})} for c in calls]
    return jdumps(written[0] if len(written) == 1 else written)


def elements(story: dict[str, Any], *, column_system: bool) -> list[dict[str, Any]]:
    """The dialect's elements of a document; ``column_system``: the first turn is the record's ``system`` key."""
    out: list[dict[str, Any]] = []
    for t, turn in enumerate(story["turns"]):
        src = turn["src"]
        if t == 0 and column_system and src == "system":
            continue
        if src == "agent" and turn.get("tool_calls"):
            out.append({"from": "function_call", "value": _call_value(turn["tool_calls"])})
            for result in (turn.get("observation") or {}).get("results") or []:
                out.append({"from": "observation", "value": result_text(result.get("content", ""))})
            continue
        role = {"user": "human", "agent": "gpt", "system": "system", "tool": "observation"}.get(src, "human")
        out.append({"from": role, "value": text_of(turn["msg"])})
    return out
