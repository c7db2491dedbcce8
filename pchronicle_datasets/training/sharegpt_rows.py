"""``conversation`` of a dataset row read straight from its columns, for the common case.

``to_sharegpt`` runs once per example over whole corpora, and most rows are plain: text messages, calls with
JSON arguments, results that name the call they answer. For such a row, ``row_conversation`` gives the
elements ``conversation(training_view(row))`` gives, from the row's JSON text columns as they are: no document
is built (decoding a row into one cost as much as rendering it), and the elements are written in one loop.

The bytes are ``render.sharegpt``'s: the ``<think>``, ``<tool_call>`` and ``<tool_response>`` blocks of
``gpt_value`` and ``tool_value``, filled in the loop from the same templates (``markup_tags``) rather than by
calling those functions, because a call per turn and per result cost a tenth of the time
(``benchmarks/bench_sharegpt.py``). ``tests/formats/sharegpt/test_rows.py`` holds the
two equal over every test corpus and over generated documents: a change to one is a failing test until the
other follows.

Everything else is left to ``conversation``: the function gives None for a row with anything that needs a
rule this module does not hold — a loss to count (content parts, invalid arguments, reasoning on a non-agent
turn…), a result without a known call id (linked by position), a later system turn, a turn of another source,
a ``<REASONING_SCRATCHPAD>`` tag, calls renamed by a reader (``/meta/source_call_ids``) or a document read
from ShareGPT (its source is given back). The one loss it counts, a leading system prompt the generated one
replaces, it reports once the row is done, so a row it gives up on is rendered from the start by
``conversation`` with nothing counted twice.

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
>>> row_conversation(pc.story_to_row(story))[1:]
[{'from': 'human', 'value': 'hi'}, {'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}]
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import orjson

from ..formats import get_format
from ..linking import SOURCE_CALL_IDS
from ..losses import report_loss
from ..markup_tags import EMPTY_THINK, SCRATCHPAD_MARK, THINK, THINK_PARTS, TOOL_CALL_PARTS, TOOL_RESPONSE_PARTS
from ..render.sharegpt import JSON_CHUNKS, content_json, tools_prompt_of_json

__all__ = ["row_conversation"]

NAME = get_format("sharegpt").NAME  # a row read from ShareGPT gives back its source (training/maps.py)

_TURN_FIELD_NAMES = ("src", "msg", "reason", "tool_calls", "observation")
_TURN_FIELDS = operator.itemgetter(*_TURN_FIELD_NAMES)


def row_conversation(row: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """``conversation(training_view(row))`` with the default options, or None for a row outside the common case
    (see the module docs); raises ``ValueError``/``KeyError``/``TypeError``… on a malformed row, which the caller
    then validates."""
    session = row.get("session")
    if type(session) is not str or not session:
        return None  # a row RFC-0001 refuses (an empty or missing session): conversation says so, with its pointer
    if JSON_CHUNKS is None or (row.get("origin") or {}).get("format") == NAME:
        return None  # no C encoder for json; or read from ShareGPT, whose source conversations are given back
    meta = row.get("meta")
    if meta is not None and SOURCE_CALL_IDS in meta:
        return None  # renamed call ids: the ids shown are the source's
    prompt, dropped = tools_prompt_of_json(row["agent"].get("tools"))
    if dropped:
        return None  # a tool definition the prompt cannot hold: counted by conversation
    loads, esc, chunks = orjson.loads, encode_basestring, JSON_CHUNKS  # ids and names are short: esc is jdumps
    think, (think_open, think_close) = THINK[0], THINK_PARTS  # the blocks' parts as locals: one f-string each
    call_open, call_args, call_close = TOOL_CALL_PARTS
    resp_open, resp_name, resp_content, resp_close = TOOL_RESPONSE_PARTS
    out: list[Any] = [{"from": "system", "value": prompt}]
    owner: dict[str, tuple[list[str], str]] = {}  # tcid → (the <tool_response> blocks of its turn, its fn's JSON)
    tool_slots: list[int] = []  # where in out each turn with calls holds its blocks, joined at the end
    leading = True  # still in the leading system turns, which the generated prompt replaces
    replaced: list[int] = []  # the leading system turns with a prompt of their own: counted once the row is done
    blocks: list[str] | None = None
    for t, turn in enumerate(row["turns"]):
        try:
            src, msg, reason, calls, observation = _TURN_FIELDS(turn)  # one C call: a row from Arrow has them all
        except KeyError:  # a row from story_to_row holds only the fields the document has
            src, msg, reason, calls, observation = (turn["src"], *map(turn.get, _TURN_FIELD_NAMES[1:]))
        msg = loads(msg) if msg is not None else None
        if type(msg) is not str:
            return None  # content parts, JSON, no message: conversation writes them (and counts the loss)
        if src == "agent":
            leading = False
            if SCRATCHPAD_MARK in msg:
                return None  # rewritten to <think> by conversation
            value = f"{think_open}{reason}{think_close}" if reason is not None and reason.strip() else ""
            if calls:
                if msg.strip():
                    value += msg + "\n"
                blocks = []  # the turn's <tool_response> blocks, as its results are found
                for call in calls:
                    tcid, args = call["tcid"], call["args"]
                    args = loads(args) if args is not None else None
                    if tcid in owner or args is None or type(args) is str:
                        return None  # a reused id; no arguments, or not valid JSON at the source (conversation)
                    name = esc(call["fn"])
                    owner[tcid] = (blocks, name)
                    value += f"{call_open}{name}{call_args}{''.join(chunks(args, 0))}{call_close}"
                    if call.get("result") is not None:  # a result on the call itself (ATIF): before the observation's
                        content = content_json(loads(call["result"]))
                        blocks.append(f"{resp_open}{esc(tcid)}{resp_name}{name}{resp_content}{content}{resp_close}")
                if think not in value:
                    value = EMPTY_THINK + value
                out.append({"from": "gpt", "value": value.rstrip()})
                out.append(blocks)
                tool_slots.append(len(out) - 1)
            else:
                value += msg
                if think not in value:
                    value = EMPTY_THINK + value
                out.append({"from": "gpt", "value": value.strip()})
        else:
            if calls or reason:
                return None  # dropped: counted by conversation
            leading = leading and src == "system"
            if src == "user":
                out.append({"from": "human", "value": msg})
            elif not leading:
                return None  # a later system turn, a developer turn, another source
            elif msg:
                replaced.append(t)
        if observation is not None:
            results = loads(observation)
            results = results.get("results") if type(results) is dict else False
            if results is not None:
                if type(results) is not list:
                    return None
                own = blocks if src == "agent" and calls else None
                for res in results:
                    found = owner.get(res.get("source_call_id")) if type(res) is dict else None
                    if found is None:
                        return None  # no call with that id: placed by position, or loose (conversation)
                    if own is not None and found[0] is not own:
                        return None  # an earlier call's result on a turn with calls: linking.place_results
                    content = content_json(res.get("content", ""))
                    cid = esc(res["source_call_id"])
                    found[0].append(f"{resp_open}{cid}{resp_name}{found[1]}{resp_content}{content}{resp_close}")
    for t in replaced:
        report_loss("system_prompt_replaced", pointer=f"/turns/{t}/msg")
    for k in reversed(tool_slots):
        if out[k]:
            out[k] = {"from": "tool", "value": "\n".join(out[k])}
        else:
            del out[k]  # no result came back for the turn's calls
    return out
