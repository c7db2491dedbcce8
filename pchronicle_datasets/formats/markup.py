"""Finding ``<tag>…</tag>`` blocks in text in linear time.

The obvious regular expressions (``<think>(.*?)</think>`` with DOTALL) take quadratic time on hostile
text — a value holding many opening tags and no closing one makes the engine rescan the rest of the text
from every opening tag — so the readers use these scanners instead. They find the same blocks as those
expressions: leftmost opening tag, nearest closing tag, no overlap.

>>> [inner for _, _, inner in blocks("a<think>x</think>b<think>y</think>", "<think>", "</think>")]
['x', 'y']
>>> without("a<think>x</think>b", blocks("a<think>x</think>b", "<think>", "</think>"))
'ab'
"""

from __future__ import annotations

import re

__all__ = ["blocks", "named_blocks", "without"]


_SPACE = re.compile(r"\s")  # what str.isspace calls whitespace (both use Unicode's White_Space property)


def blocks(text: str, open_tag: str, close_tag: str) -> list[tuple[int, int, str]]:
    """``(start, end, inner)`` of every ``open_tag … close_tag`` block, left to right."""
    out = []
    pos = 0
    while True:
        start = text.find(open_tag, pos)
        if start < 0:
            return out
        inner_start = start + len(open_tag)
        close = text.find(close_tag, inner_start)
        if close < 0:
            return out  # no closing tag anywhere after this one: no later block can close either
        end = close + len(close_tag)
        out.append((start, end, text[inner_start:close]))
        pos = end


def named_blocks(text: str, prefix: str, close_tag: str, *, close_optional: bool = False) -> list[tuple[str, str]]:
    """``(name, body)`` of every ``<prefix NAME>body close_tag`` block (``<function=ls>…</function>``):
    NAME is non-empty with no whitespace or ``>``; with ``close_optional`` a block may run to the end.

    Linear: the next ``>`` and the next whitespace after an opening are found once and reused for every
    opening before them (each opening used to rescan the rest of the text for them: quadratic on many
    openings that never close).

    >>> named_blocks("<function=ls>-a</function> <function=x y>z</function>", "<function=", "</function>")
    [('ls', '-a')]
    """
    out = []
    pos = 0
    gt = ws = -2  # the next ">" / whitespace at or after the current name's start (-1: none); -2: not looked for
    while True:
        start = text.find(prefix, pos)
        if start < 0:
            return out
        name_start = start + len(prefix)
        if gt != -1 and gt < name_start:
            gt = text.find(">", name_start)
        if gt < 0:
            return out  # no ">" after this opening: no later opening has a name either
        if ws != -1 and ws < name_start:
            found = _SPACE.search(text, name_start)
            ws = found.start() if found else -1
        if gt == name_start or (ws != -1 and ws < gt):  # an empty name, or one with whitespace
            pos = start + 1
            continue
        name = text[name_start:gt]
        close = text.find(close_tag, gt + 1)
        if close < 0:
            if not close_optional:
                return out
            out.append((name, text[gt + 1 :]))
            return out
        out.append((name, text[gt + 1 : close]))
        pos = close + len(close_tag)


def without(text: str, spans: list[tuple[int, int, str]]) -> str:
    """``text`` with the given ``(start, end, …)`` spans removed."""
    parts = []
    pos = 0
    for start, end, *_ in spans:
        parts.append(text[pos:start])
        pos = end
    parts.append(text[pos:])
    return "".join(parts)
