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

Everything else is left to ``conversation``: the function gives None for a row with anything that needs a rule
this module does not hold — a loss to count (content parts, invalid arguments, reasoning on a non-agent turn…), a
result without a known call id (linked by position), a later system turn, a notice no model saw (``notices.py``),
a turn of another source, a ``<REASONING_SCRATCHPAD>`` tag, calls renamed by a reader (``/meta/source_call_ids``),
a document read from ShareGPT (its source is given back) or JSON text that may hold an integer beyond 64 bits
(refused there with its pointer: orjson would read it as a float). The one loss it counts, a leading system prompt
the generated one replaces, it reports once the row is done, so a row it gives up on is rendered from the start by
``conversation`` with nothing counted twice.

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
>>> row_conversation(pc.story_to_row(story))[1:]
[{'from': 'human', 'value': 'hi'}, {'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}]
"""

from __future__ import annotations

import itertools
import operator
from collections.abc import Iterable, Mapping
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from typing import Any

import orjson
import pyarrow as pa
import pyarrow.compute as _pc

from ..formats import get_format
from ..jsonio import may_hold_big_int
from ..linking import SOURCE_CALL_IDS
from ..losses import report_loss
from ..markup_tags import EMPTY_THINK, SCRATCHPAD_MARK, THINK, THINK_PARTS, TOOL_CALL_PARTS, TOOL_RESPONSE_PARTS
from ..notices import NOTICE_KINDS
from ..render.sharegpt import (
    JSON_CHUNKS,
    MAYBE_JSON,
    ORJSON_STRING_LENGTH,
    content_json,
    json_string,
    tools_prompt_of_json,
    wrote_big_float,
)

__all__ = ["row_conversation", "row_elements", "table_elements"]

NAME = get_format("sharegpt").NAME  # a row read from ShareGPT gives back its source (training/maps.py)

_TURN_FIELD_NAMES = ("src", "msg", "reason", "tool_calls", "observation", "kind")
_TURN_FIELDS = operator.itemgetter(*_TURN_FIELD_NAMES)


def row_conversation(row: Mapping[str, Any]) -> list[dict[str, str]] | None:
    """``conversation(training_view(row))`` with the default options, or None for a row outside the common case
    (see the module docs); raises ``ValueError``/``KeyError``/``TypeError``… on a malformed row, which the caller
    then validates."""
    found = row_elements(row)
    if found is None:
        return None
    out, replaced = found
    for t in replaced:
        report_loss("system_prompt_replaced", pointer=f"/turns/{t}/msg")
    return out


def row_elements(row: Mapping[str, Any]) -> tuple[list[dict[str, str]], list[int]] | None:
    """``row_conversation`` without reporting: the elements and the indexes of the leading system turns whose
    prompt the generated one replaced (the caller counts them), or None."""
    session = row.get("session")
    meta = row.get("meta")
    if not _covered(session, (row.get("origin") or {}).get("format"), meta is not None and SOURCE_CALL_IDS in meta):
        return None
    return _elements(row["agent"].get("tools"), map(_turn_tuple, row["turns"]))


def _covered(session: Any, origin_format: Any, renamed: bool) -> bool:
    """Whether a row may be rendered here at all, from its session, ``/origin/format`` and whether its meta
    names renamed call ids."""
    if type(session) is not str or not session:
        return False  # a row RFC-0001 refuses (an empty or missing session): conversation says so, with its pointer
    if JSON_CHUNKS is None or origin_format == NAME:
        return False  # no C encoder for json; or read from ShareGPT, whose source conversations are given back
    return not renamed  # renamed call ids: the ids shown are the source's


def _turn_tuple(turn: Mapping[str, Any]) -> tuple:
    """``(src, msg, reason, calls, observation, kind)`` of a row's turn, ``calls`` as ``(tcid, fn, args, result)``
    tuples: the shape ``table_elements`` reads from Arrow columns."""
    try:
        src, msg, reason, calls, observation, kind = _TURN_FIELDS(turn)  # one C call: a row from Arrow has them all
    except KeyError:  # a row from story_to_row holds only the fields the document has
        src, msg, reason, calls, observation, kind = (turn["src"], *map(turn.get, _TURN_FIELD_NAMES[1:]))
    if calls:
        calls = [(c["tcid"], c["fn"], c["args"], c.get("result")) for c in calls]
    return src, msg, reason, calls, observation, kind


def table_elements(batch: pa.RecordBatch) -> list[tuple[list[dict[str, str]], list[int]] | None]:
    """``row_elements`` of every row of a record batch of ``STORYLINE_FEATURES``, read from its Arrow columns:
    each leaf column (``/turns/*/msg``, ``/turns/*/tool_calls/*/args``…) becomes Python strings in one call, and
    no row or turn dict is built (``ds.map`` building them for a batch cost as much as rendering it). A row
    that raises (malformed) is None too: the caller's general path names what is wrong.

    Raises ``KeyError`` for a batch without the Storyline columns.
    """
    n = batch.num_rows
    if n == 0:
        return []
    sessions = batch.column("session").to_pylist()
    origin = _fields(batch.column("origin"))
    formats = origin["format"].to_pylist() if "format" in origin else [None] * n
    meta = batch.column("meta")
    renamed = (
        _pc.match_substring(meta, SOURCE_CALL_IDS).to_pylist() if meta.null_count < n else [None] * n
    )  # the substring test row_elements makes on the JSON text, done by Arrow
    tools = _fields(batch.column("agent"))["tools"].to_pylist()
    row_offsets, turns, rows_valid = _list_values(batch.column("turns"))
    fields = _fields(turns)
    call_offsets, calls, calls_valid = _list_values(fields["tool_calls"])
    call_fields = _fields(calls)
    flat = list(
        zip(
            call_fields["tcid"].to_pylist(),
            call_fields["fn"].to_pylist(),
            call_fields["args"].to_pylist(),
            call_fields["result"].to_pylist(),
            strict=True,
        )
    )
    per_turn = [flat[a:b] if b > a else None for a, b in itertools.pairwise(call_offsets)]
    if calls_valid is not None:
        per_turn = [calls if valid else None for calls, valid in zip(per_turn, calls_valid, strict=True)]
    turn_tuples = list(
        zip(
            fields["src"].to_pylist(),
            fields["msg"].to_pylist(),
            fields["reason"].to_pylist(),
            per_turn,
            fields["observation"].to_pylist(),
            fields["kind"].to_pylist(),
            strict=True,
        )
    )
    out: list = []
    for i in range(n):
        if not _covered(sessions[i], formats[i], bool(renamed[i])) or (rows_valid is not None and not rows_valid[i]):
            out.append(None)
            continue
        try:
            out.append(_elements(tools[i], turn_tuples[row_offsets[i] : row_offsets[i + 1]]))
        except (ValueError, TypeError, KeyError, AttributeError, IndexError):
            out.append(None)
    return out


def _fields(array: pa.Array) -> dict[str, pa.Array]:
    """The child arrays of a struct array, by name, with its slice and its nulls applied."""
    return dict(zip((f.name for f in array.type), array.flatten(), strict=True))


def _list_values(array: pa.Array) -> tuple[list[int], pa.Array, list[bool] | None]:
    """``(offsets from 0, values, validity)`` of a list array; ``validity`` is None when no entry is null (Arrow
    lets a null list span values: those are not its items, so the caller reads a null entry as no list)."""
    offsets = array.offsets.to_pylist()
    start = offsets[0]
    values = array.values.slice(start, offsets[-1] - start)
    if start:
        offsets = [o - start for o in offsets]
    return offsets, values, (array.is_valid().to_pylist() if array.null_count else None)


def _elements(tools: str | None, turns: Iterable[tuple]) -> tuple[list[dict[str, str]], list[int]] | None:
    """The elements of a covered row from its tools' JSON text and its turns as ``_turn_tuple`` gives them."""
    prompt, dropped = tools_prompt_of_json(tools)
    if dropped:
        return None  # a tool definition the prompt cannot hold: counted by conversation
    # orjson reads the JSON text of the row here: a row whose text may hold an integer beyond 64 bits (what is
    # written of it tells: wrote_big_float) is left to conversation, whose decoding refuses it with its pointer.
    big = wrote_big_float
    if big(prompt) and may_hold_big_int(tools):  # type: ignore[arg-type]  (a prompt of no tools has none)
        return None
    loads, esc, chunks = orjson.loads, encode_basestring, JSON_CHUNKS  # ids and names are short: esc is jdumps
    think, (think_open, think_close) = THINK[0], THINK_PARTS  # the blocks' parts as locals: one f-string each
    call_open, call_args, call_close = TOOL_CALL_PARTS
    resp_open, resp_name, resp_content, resp_close = TOOL_RESPONSE_PARTS
    maybe_json, short = MAYBE_JSON, ORJSON_STRING_LENGTH
    out: list[Any] = [{"from": "system", "value": prompt}]
    owner: dict[str, tuple[list[str], str]] = {}  # tcid → (the <tool_response> blocks of its turn, its fn's JSON)
    tool_slots: list[int] = []  # where in out each turn with calls holds its blocks, joined at the end
    leading = True  # still in the leading system turns, which the generated prompt replaces
    replaced: list[int] = []  # the leading system turns with a prompt of their own: counted once the row is done
    blocks: list[str] | None = None
    for t, (src, msg, reason, calls, observation, kind) in enumerate(turns):
        msg = loads(msg) if msg is not None else None
        if type(msg) is not str:
            return None  # content parts, JSON, no message: conversation writes them (and counts the loss)
        after_own = False  # the turn holds a result of its own calls: linking.place_results keeps all its results
        if src == "agent":
            leading = False
            if SCRATCHPAD_MARK in msg:
                return None  # rewritten to <think> by conversation
            value = f"{think_open}{reason}{think_close}" if reason is not None and reason.strip() else ""
            if calls:
                if msg.strip():
                    value += msg + "\n"
                blocks = []  # the turn's <tool_response> blocks, as its results are found
                for tcid, fn, args_text, result in calls:
                    args = loads(args_text) if args_text is not None else None
                    if tcid in owner or args is None or type(args) is str:
                        return None  # a reused id; no arguments, or not valid JSON at the source (conversation)
                    name = esc(fn)
                    owner[tcid] = (blocks, name)
                    args = "".join(chunks(args, 0))
                    if big(args) and may_hold_big_int(args_text):
                        return None
                    value += f"{call_open}{name}{call_args}{args}{call_close}"
                    if result is not None:  # a result on the call itself (ATIF): before the observation's
                        after_own = True
                        content = content_json(loads(result))
                        if big(content) and may_hold_big_int(result):
                            return None
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
            if src == "system" and kind in NOTICE_KINDS:
                return None  # a notice no model saw, which conversation leaves out (notices.py)
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
                # linking.place_results' rule: on a turn with calls that holds a result of one of them, every
                # result stays with the turn (they came back after it); elsewhere a result follows its call (an
                # OpenAI-style capture puts the results of a turn's calls on the next turn, which makes calls too).
                own = blocks if src == "agent" and calls else None
                found_all = []
                for res in results:
                    found = owner.get(res.get("source_call_id")) if type(res) is dict else None
                    if found is None:
                        return None  # no call with that id: placed by position, or loose (conversation)
                    if found[0] is own:
                        after_own = True
                    found_all.append(found)
                for res, found in zip(results, found_all, strict=True):
                    content = res.get("content", "")
                    if type(content) is str and content[:1] not in maybe_json:  # text: content_json's first test
                        content = esc(content) if len(content) < short else json_string(content)
                    else:
                        content = content_json(content)
                        if big(content) and may_hold_big_int(observation):
                            return None
                    cid = esc(res["source_call_id"])
                    (own if after_own else found[0]).append(
                        f"{resp_open}{cid}{resp_name}{found[1]}{resp_content}{content}{resp_close}"
                    )
    for k in reversed(tool_slots):
        if out[k]:
            out[k] = {"from": "tool", "value": "\n".join(out[k])}
        else:
            del out[k]  # no result came back for the turn's calls
    return out, replaced
