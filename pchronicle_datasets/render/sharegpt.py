"""Rendering a Storyline document as ShareGPT ``conversations``, byte for byte as the reference converter does.

The writer (and ``to_sharegpt``) renders ``[{"from", "value"}]``: a system turn generated from ``/agent/tools``
with the function-calling template, ``human`` for user turns, ``gpt`` for agent turns (``<think>`` block,
content, ``<tool_call>`` blocks) and one ``tool`` turn of ``<tool_response>`` blocks after each gpt turn that
made calls.

>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "Say hello."}, {"id": 2, "src": "agent", "msg": "Hello!"}]}
>>> [(c["from"], c["value"][:40]) for c in conversation(story)][1:]
[('human', 'Say hello.'), ('gpt', '<think>\\n</think>\\nHello!')]
"""

from __future__ import annotations

import functools
import json
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from typing import Any

import orjson

from ..jsonio import may_hold_big_int, try_loads
from ..linking import place_results, shown_call_ids
from ..losses import report_loss
from ..markup_tags import (
    EMPTY_THINK,
    SCRATCHPAD,
    SCRATCHPAD_MARK,
    SYSTEM_TEMPLATE,
    THINK,
    think_block,
    tool_call_block,
    tool_response_block,
)
from ..notices import is_notice

__all__ = [
    "JSON_CHUNKS",
    "MAYBE_JSON",
    "ORJSON_STRING_LENGTH",
    "SYSTEM_TEMPLATE",
    "content_json",
    "conversation",
    "elements",
    "flattened",
    "gpt_value",
    "jdumps",
    "json_string",
    "message_text",
    "system_prompt",
    "text_of",
    "tool_schema",
    "tool_value",
    "tools_prompt_of_json",
    "written_arguments",
    "wrote_big_float",
]

TEXT_PART_TYPES = ("text", "input_text", "output_text")


_ENCODER = json.JSONEncoder(ensure_ascii=False)
#: ``"".join(JSON_CHUNKS(value, 0))`` is ``jdumps(value)`` for a value that is not a string (None where Python
#: has no C accelerator for ``json``). ``json.dumps`` (and ``JSONEncoder.encode``) build a C encoder per call,
#: which costs twice the encoding of a small value; this one is made once with the same settings
#: (ensure_ascii=False, ", " and ": ", NaN allowed, keys unsorted), minus the circular-reference check: every
#: value here is JSON from a document or a row.
JSON_CHUNKS = (
    c_make_encoder(None, _ENCODER.default, encode_basestring, None, ": ", ", ", False, False, True)
    if c_make_encoder is not None
    else None
)


def jdumps(value: Any) -> str:
    """JSON as the reference writes it: ``json.dumps(…, ensure_ascii=False)`` with default separators.

    >>> jdumps({"name": "ls", "arguments": {"path": "é", "n": 1.0, "big": 2**70}})
    '{"name": "ls", "arguments": {"path": "é", "n": 1.0, "big": 1180591620717411303424}}'
    """
    if type(value) is str:
        return json_string(value)
    if JSON_CHUNKS is None:
        return _ENCODER.encode(value)
    return "".join(JSON_CHUNKS(value, 0))


# Past this length orjson writes a JSON string faster than ``encode_basestring`` (which reads it a character
# at a time: 1.1 µs for a 350-character tool output, orjson 0.12 µs); below it the call costs more than it saves.
ORJSON_STRING_LENGTH = 48


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)``: orjson escapes exactly the same characters (``"``, ``\\`` and
    the controls below U+0020, with the same short forms and lowercase ``\\u00XX``) and writes everything else
    as it is; a lone surrogate, which orjson refuses, is written as ``json`` writes it.

    >>> text = 'a "quote", a tab\\t, a \\\\ and é, ' * 4  # long enough for orjson
    >>> json_string(text) == json.dumps(text, ensure_ascii=False), json_string(text)[:33]
    (True, '"a \\\\"quote\\\\", a tab\\\\t, a \\\\\\\\ and é')
    """
    if len(text) < ORJSON_STRING_LENGTH:
        return encode_basestring(text)
    try:
        return orjson.dumps(text).decode()
    except TypeError:  # orjson.JSONEncodeError, or the plain TypeError it raises for a lone surrogate
        return encode_basestring(text)


def text_of(value: Any) -> str:
    """A message as text: strings as they are, content parts joined, anything else as JSON.

    Every ShareGPT ``value`` is a string (the reference passes lists through, and ``datasets`` then turns
    strings like "42" in the same batch into numbers).
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    if isinstance(value, list) and all(isinstance(p, dict) for p in value):
        parts = []
        for part in value:
            if part.get("type") in TEXT_PART_TYPES and isinstance(part.get("text"), str):
                parts.append(part["text"])
            else:
                parts.append(jdumps(part))
        return "".join(parts)
    return jdumps(value)


def tool_schema(tool: Any) -> dict[str, Any] | None:
    """The function schema of a tool definition, in OpenAI ``{"type": "function", "function": …}`` form or bare."""
    if isinstance(tool, dict):
        fn = tool.get("function") if tool.get("type") == "function" else tool
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            return fn
    return None


def system_prompt(tools: Any) -> str:
    """The seed's function-calling system prompt for these tool definitions."""
    return _tools_prompt(tools)[0]


def _tools_prompt(tools: Any) -> tuple[str, tuple[int, ...]]:
    """``system_prompt(tools)`` and the indexes of the entries it leaves out (not function schemas)."""
    if not tools:
        return _cached_tools_prompt(b"[]")
    try:
        key = orjson.dumps(tools)
    except (TypeError, orjson.JSONEncodeError):
        return _build_tools_prompt(tools)
    return _cached_tools_prompt(key)


def tools_prompt_of_json(text: str | None) -> tuple[str, tuple[int, ...]]:
    """``_tools_prompt`` of tool definitions given as JSON text (a dataset row's ``/agent/tools``; None: absent),
    cached by the text itself: the rows of a corpus repeat a few tool sets, and hashing a row's (new) text costs
    more than comparing it with the last one seen.

    >>> tools_prompt_of_json('[{"name": "ls"}, 7]')[1]
    (1,)
    """
    global _LAST_TOOLS_JSON
    last_text, last_found = _LAST_TOOLS_JSON  # one tuple, read at once: safe under threads
    if text == last_text:
        return last_found
    found = _tools_prompt(None) if text is None else _cached_tools_prompt_of_json(text)
    _LAST_TOOLS_JSON = (text, found)
    return found


_LAST_TOOLS_JSON: tuple = (object(), None)  # (text, its prompt); the sentinel equals no text, nor None


@functools.lru_cache(maxsize=256)
def _cached_tools_prompt_of_json(text: str) -> tuple[str, tuple[int, ...]]:
    # Built from the value read, not through ``_tools_prompt``'s cache: its key (the value written again by orjson)
    # would cost a second write and read per row in a corpus whose rows each have their own tool set, and the
    # value read from JSON text is the value that key gives back.
    return _build_tools_prompt(orjson.loads(text))


@functools.lru_cache(maxsize=256)
def _cached_tools_prompt(tools_json: bytes) -> tuple[str, tuple[int, ...]]:
    # A corpus has few tool sets: the prompt is built once per set (a json.dumps of every schema).
    return _build_tools_prompt(orjson.loads(tools_json))


def _build_tools_prompt(tools: Any) -> tuple[str, tuple[int, ...]]:
    formatted, dropped = [], []
    for k, tool in enumerate(tools if isinstance(tools, list) else []):
        fn = tool_schema(tool)
        if fn is None:
            dropped.append(k)
            continue
        formatted.append(
            {
                "name": fn["name"],
                "description": fn.get("description", ""),
                "parameters": fn.get("parameters", {}),
                "required": None,
            }
        )
    return SYSTEM_TEMPLATE.format(tools=jdumps(formatted) if formatted else "[]"), tuple(dropped)


def _scratchpad_to_think(text: str) -> str:
    if SCRATCHPAD_MARK not in text:  # one search instead of two replaces: most texts have no tag
        return text
    return text.replace(SCRATCHPAD[0], THINK[0]).replace(SCRATCHPAD[1], THINK[1])


def reference_arguments(args: str) -> tuple[bool, Any]:
    """``(True, value)`` when a Storyline ``args`` string is JSON to the reference converter's parser but was not
    to the strict one readers use (an integer beyond 64 bits, ``NaN``, a lone surrogate): the reference parses
    ``arguments`` with Python's ``json.loads``, so it writes that value exactly. A string that strict JSON reads
    was a JSON string value at the source, and is not read again.

    >>> reference_arguments('{"n": 1180591620717411303424}'), reference_arguments('{"a": 1}'), reference_arguments("x")
    ((True, {'n': 1180591620717411303424}), (False, None), (False, None))
    """
    if try_loads(args)[0]:
        return False, None
    try:
        return True, json.loads(args)
    except (ValueError, RecursionError):
        return False, None


def written_arguments(args: Any, *, keep_invalid: bool, pointer: str = "") -> Any:
    """Tool-call arguments as a training output writes them: Storyline ``args`` are parsed already, so a
    string is a source that was not valid JSON; it is written as ``{}`` as the seed says (a counted loss,
    see ``losses``), unless ``keep_invalid`` or the reference's parser reads it (``reference_arguments``)."""
    if isinstance(args, str) and not keep_invalid:
        ok, value = reference_arguments(args)
        if ok:
            return value
        report_loss("invalid_arguments", pointer=pointer, detail=repr(args[:100]))
        return {}
    return args


def _turn_arguments(calls: list[dict[str, Any]], t: int, keep_invalid: bool) -> list[Any]:
    """``written_arguments`` of the calls of turn ``t``, each loss counted with its pointer (made only for a
    string: nothing else is rewritten)."""
    return [
        written_arguments(args, keep_invalid=keep_invalid, pointer=f"/turns/{t}/tool_calls/{c}/args")
        if isinstance(args := call.get("args"), str)
        else args
        for c, call in enumerate(calls)
    ]


def gpt_value(turn: dict[str, Any], *, empty_think: bool = True, keep_invalid_args: bool = False) -> str:
    """A gpt turn's value, byte for byte as the reference converter writes it.

    >>> gpt_value({"src": "agent", "msg": "ok", "reason": "why", "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}]})
    '<think>\\nwhy\\n</think>\\nok\\n<tool_call>\\n{"name": "ls", "arguments": {}}\\n</tool_call>'
    """
    arguments = [
        written_arguments(call.get("args"), keep_invalid=keep_invalid_args) for call in turn.get("tool_calls") or ()
    ]
    return _gpt_text(turn, arguments, empty_think)


def _gpt_text(turn: dict[str, Any], arguments: list[Any], empty_think: bool) -> str:
    """``gpt_value`` with the arguments already written (``written_arguments``, which counts their losses).

    ``training.sharegpt_rows.row_conversation`` writes the same bytes for the rows it covers (see its docs)."""
    reason = turn.get("reason")
    content = think_block(reason) if isinstance(reason, str) and reason.strip() else ""
    msg = text_of(turn.get("msg"))
    calls = turn.get("tool_calls")
    if calls:
        if msg.strip():
            content += _scratchpad_to_think(msg) + "\n"
        for call, args in zip(calls, arguments, strict=True):
            # jdumps({"name": …, "arguments": …}), spelled out: the same bytes without a dict per call.
            content += tool_call_block(jdumps(call["fn"]), jdumps(args))
        if empty_think and THINK[0] not in content:
            content = EMPTY_THINK + content
        return content.rstrip()
    content += _scratchpad_to_think(msg)
    if empty_think and THINK[0] not in content:
        content = EMPTY_THINK + content
    return content.strip()


def response_content(content: Any) -> Any:
    """Tool output as the reference puts it in ``content``: parsed (by Python's ``json``, as the reference does)
    when its stripped text starts with { or [, else the text.

    >>> response_content('{"n": 1.0, "big": 18446744073709551616}'), response_content("[not json")
    ({'n': 1.0, 'big': 18446744073709551616}, '[not json')
    """
    if isinstance(content, str) and content.strip().startswith(("{", "[")):
        try:
            return _reference_loads(content)
        except (ValueError, RecursionError):
            return content
    return content


# orjson gives the same value as json.loads for every text it accepts, except integers beyond 64 bits (which
# it reads as floats: ``may_hold_big_int`` finds them) and nesting deeper than json's recursion limit (which
# json refuses: a text of fewer than 800 characters cannot nest 400 deep). Everything orjson refuses
# (NaN, Infinity, 1e400, lone surrogates…) goes to json.loads, which decides.
_ORJSON_SAFE_LENGTH = 2 * 400


def _reference_loads(text: str) -> Any:
    """``json.loads(text)``, by orjson where that gives the same value (four times faster)."""
    if len(text) < _ORJSON_SAFE_LENGTH and not may_hold_big_int(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass
    return json.loads(text)


def tool_value(results: list[tuple[str, str, Any]]) -> str:
    """The tool turn: one ``<tool_response>`` per ``(tool_call_id, name, content)`` (id and name strings), joined
    by newlines.

    >>> print(tool_value([("c1", "ls", "a.txt"), ("", "cat", '{"size": 3}')]))
    <tool_response>
    {"tool_call_id": "c1", "name": "ls", "content": "a.txt"}
    </tool_response>
    <tool_response>
    {"tool_call_id": "", "name": "cat", "content": {"size": 3}}
    </tool_response>
    """
    # jdumps({"tool_call_id": …, "name": …, "content": …}), spelled out: the same bytes without a dict per result
    # (the id and the name are short strings: encode_basestring is what jdumps writes them with).
    return "\n".join(
        [
            tool_response_block(encode_basestring(cid), encode_basestring(name), content_json(content))
            for cid, name, content in results
        ]
    )


def wrote_big_float(written: str) -> bool:
    """Whether JSON written (by ``jdumps``) from a value orjson read may hold an integer beyond 64 bits.

    orjson reads such an integer as a float of magnitude 2**63 or more, which Python's json writes with an exponent
    (``9.223372036854776e+18``): written JSON without ``e+`` held none. One search of the output, where
    ``jsonio.may_hold_big_int`` reads the input three times; ``+`` first, found at memchr speed (text rarely has
    one). A hit (a float that big, or the text "e+") is decided on the source text by the caller.

    >>> import orjson
    >>> wrote_big_float(jdumps(orjson.loads('{"n": 123456789012345678901234}'))), wrote_big_float('{"n": 1.5}')
    (True, False)
    """
    return "+" in written and "e+" in written


# The first characters of a tool output that can be JSON the reference parses: { or [, or the whitespace JSON
# allows before them (json.loads refuses a text that starts with any other space ``str.strip`` removes).
MAYBE_JSON = frozenset("{[ \t\n\r")


def content_json(content: Any) -> str:
    """``jdumps(response_content(content))``: a tool output as JSON in its ``<tool_response>``, with the test
    ``response_content`` makes (the stripped text starts with { or [, and json.loads takes it) done on the first
    character, which saves copying every output to strip it.

    >>> content_json("a.txt"), content_json(' {"size": 3}'), content_json({"size": 3})
    ('"a.txt"', '{"size": 3}', '{"size": 3}')
    """
    if type(content) is not str:
        return jdumps(content)
    first = content[:1]
    if first not in MAYBE_JSON or (first not in "{[" and not content.lstrip(" \t\n\r").startswith(("{", "["))):
        return json_string(content)
    if len(content) < _ORJSON_SAFE_LENGTH and JSON_CHUNKS is not None:
        # _reference_loads written out, with its scan for integers beyond 64 bits done on the JSON written
        # instead (wrote_big_float).
        try:
            value = orjson.loads(content)
        except orjson.JSONDecodeError:
            return jdumps(response_content(content))
        written = _flat_object_json(value) if type(value) is dict else None
        if written is None:
            written = "".join(JSON_CHUNKS(value, 0))
            if wrote_big_float(written):
                return jdumps(response_content(content))
        return written
    return jdumps(response_content(content))


def _flat_object_json(obj: dict) -> str | None:
    """``jdumps(obj)`` for an object of strings, integers, booleans and nulls (the usual tool output), else None.

    Faster than the C encoder for such an object (its strings go through ``json_string``), and it holds no float,
    so no integer beyond 64 bits read as one (``content_json``).

    >>> _flat_object_json({"output": "a\\nb", "exit": 0, "ok": True, "error": None}), _flat_object_json({"x": 1.5})
    ('{"output": "a\\\\nb", "exit": 0, "ok": true, "error": null}', None)
    """
    parts = []
    for key, value in obj.items():
        kind = type(value)
        if kind is str:
            written = json_string(value)
        elif value is None:
            written = "null"
        elif kind is bool:
            written = "true" if value else "false"
        elif kind is int:
            written = int.__repr__(value)
        else:
            return None
        parts.append(f"{encode_basestring(key)}: {written}")  # keys of decoded JSON are strings
    return "{" + ", ".join(parts) + "}"


def flattened(value: Any) -> bool:
    """Whether ``text_of(value)`` loses something a training text cannot hold: content parts that are not text
    (images, audio, files…), written as their JSON.

    >>> flattened([{"type": "text", "text": "a"}]), flattened([{"type": "image_url", "image_url": {"url": "x"}}])
    (False, True)
    """
    if not isinstance(value, list):
        return False
    return any(
        not (isinstance(p, dict) and p.get("type") in TEXT_PART_TYPES and isinstance(p.get("text"), str)) for p in value
    )


def message_text(value: Any, pointer: str) -> str:
    """``text_of(value)`` for a training output, counting the loss (``content_flattened``) when there is one."""
    if flattened(value):
        report_loss("content_flattened", pointer=pointer)
    return text_of(value)


def _text(value: Any, t: int, where: str) -> str:
    """``message_text`` of a value of turn ``t`` (``where``: its path in the turn), the pointer made only for a
    value that is not a string already."""
    return value if type(value) is str else message_text(value, f"/turns/{t}/{where}")


def conversation(
    story: dict[str, Any],
    *,
    keep_system_prompt: bool = False,
    empty_think: bool = True,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
    drop_notices: bool = False,
) -> list[dict[str, str]]:
    """The ShareGPT ``[{"from", "value"}]`` of a Storyline document (see the module docs).

    By default the system prompt is generated from ``/agent/tools`` and replaces the document's own (its leading
    system turns: the seed's rule, counted as ``system_prompt_replaced``); ``keep_system_prompt=True`` writes the
    system turns instead (the generated prompt only when there is none). Later system turns, ``developer`` turns
    and turns of other sources are ``system`` elements where they stand; a result that answers no tool call is a
    ``human`` element after its turn. ``drop_notices``: leave out the turns no model saw (``notices.is_notice``), as
    every training output does.
    """
    has_system = any(
        t["src"] == "system" and not (drop_copied and t.get("copied")) and not (drop_notices and is_notice(t))
        for t in story["turns"]
    )
    generated = not (keep_system_prompt and has_system)
    return elements(
        story,
        generated=generated,
        inline_system=keep_system_prompt,
        empty_think=empty_think,
        drop_copied=drop_copied,
        keep_invalid_args=keep_invalid_args,
        drop_notices=drop_notices,
    )


def elements(
    story: dict[str, Any],
    *,
    generated: bool,
    inline_system: bool,
    empty_think: bool = True,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
    loose: bool = True,
    drop_notices: bool = False,
) -> list[dict[str, str]]:
    """The elements of ``conversation``; ``inline_system``: every system turn is written where it stands
    (else the leading ones are replaced by the generated prompt); ``loose``: results that answer no call are
    ``human`` elements (the same-source writer has none: the reader makes tool output a turn of source ``tool``,
    written as a ``tool`` element)."""
    out: list[dict[str, str]] = []
    if generated:
        prompt, dropped = _tools_prompt(story["agent"].get("tools"))
        for k in dropped:
            report_loss("tool_definition_dropped", pointer=f"/agent/tools/{k}")
        out.append({"from": "system", "value": prompt})
    placed, loose_results = place_results(story)
    if not loose:
        loose_results = {}
    shown = shown_call_ids(story)
    leading = True  # still in the document's leading system turns (its system prompt)
    # Pointers are made only for a loss (``_text``): this loop runs for every turn of every example.
    for t, turn in enumerate(story["turns"]):
        src = turn["src"]
        leading = leading and src == "system"
        if (drop_copied and turn.get("copied")) or (drop_notices and is_notice(turn)):
            continue
        if src == "agent":
            msg = turn.get("msg")
            if type(msg) is not str and flattened(msg):
                report_loss("content_flattened", pointer=f"/turns/{t}/msg")
            calls = turn.get("tool_calls")
            arguments = _turn_arguments(calls, t, keep_invalid_args) if calls else []
            out.append({"from": "gpt", "value": _gpt_text(turn, arguments, empty_think)})
            if t in placed:  # its calls' results; on a turn without calls, results naming an id no call has
                out.append({"from": "tool", "value": tool_value([(shown.get(c, c), n, v) for c, n, v in placed[t]])})
        else:
            if isinstance(turn.get("reason"), str) and turn["reason"]:
                report_loss("reasoning_dropped", pointer=f"/turns/{t}/reason")
            if turn.get("tool_calls"):
                report_loss("tool_calls_dropped", pointer=f"/turns/{t}/tool_calls")
            if src == "user":
                out.append({"from": "human", "value": _text(turn["msg"], t, "msg")})
            elif src == "system" and leading and not inline_system:
                # The seed's rule: the system message is generated at save time, not taken from the dialogue. The
                # document's own prompt (a text protocol's instructions, say) is left out: counted, never silent.
                if turn["msg"] not in (None, ""):
                    report_loss("system_prompt_replaced", pointer=f"/turns/{t}/msg")
            elif src == "tool":  # tool output that answered no call (the reader's orphan tool elements)
                out.append({"from": "tool", "value": _text(turn["msg"], t, "msg")})
            else:
                if src not in ("system", "developer"):
                    report_loss("source_renamed", pointer=f"/turns/{t}/src")
                out.append({"from": "system", "value": _text(turn["msg"], t, "msg")})
            if t in placed:
                report_loss("results_dropped", pointer=f"/turns/{t}/observation")
        for k, content in loose_results.get(t, ()) if loose_results else ():
            if content is None or content == "":  # nothing to show (a subagent reference, say)
                if content is None:
                    report_loss("result_without_content", pointer=f"/turns/{t}/observation/results/{k}")
                continue
            out.append({"from": "human", "value": _text(content, t, f"observation/results/{k}")})
    return out
