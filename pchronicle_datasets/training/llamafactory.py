"""``to_sharegpt(example, dialect="llamafactory")``: LLaMA-Factory's ShareGPT with strict alternation.

LLaMA-Factory's ``SharegptDatasetConverter`` (``src/llamafactory/data/converter.py``) reads a record as: an
optional leading ``system`` element (else the ``system`` column), then elements whose ``from`` is ``human`` or
``observation`` at even positions and ``gpt`` or ``function_call`` at odd ones, an even number of them. Any
other record is *skipped* with a log line ("Skipping this abnormal example") — so this rendering repairs every
conversation into that shape and counts each repair in the loss report as ``alternation_repaired: <what>``
(``losses.KINDS``), instead of leaving a trainer to drop the example:

- ``system``: the document's own leading system prompt (developer turns folded in), as the record's ``system``
  key; LLaMA-Factory's template writes the tools prompt itself from ``tools`` (JSON text of the bare function
  schemas, ``"[]"`` without tools), so the seed's generated prompt is not written.
- An assistant message with calls is one ``function_call`` element. Its value is the calls' JSON — one
  ``{"name", "arguments"}``, or a list of them for parallel calls — when the message has nothing else; with
  text or reasoning it is ``<think>…</think>`` + text, then the JSON in one ``<tool_call>…</tool_call>`` block:
  LLaMA-Factory's ``FunctionFormatter`` (since v0.9.4, #9610) parses the block and writes the text outside it
  before the calls, in the model's own tool-call format. The text is the model's, so it stays in the trained
  element: a ``gpt`` element before the ``function_call`` would need an invented ``human`` between them.
- The results of one ``function_call`` are one ``observation``: the result's text, or a JSON list of the texts
  of parallel results (``results merged``).
- Consecutive user (or later system/developer) messages are one ``human`` element, joined by a blank line
  (``inputs merged``, ``system as human``); user messages among tool results after a call join the
  ``observation``'s list (``inputs merged``).
- Consecutive assistant messages are one element (``assistant messages merged``): the texts first, then every
  call, as LLaMA-Factory writes a ``function_call``'s text before its calls.
- A conversation that starts with the model gets an empty ``human`` element first (``empty human inserted``);
  user messages or results after the last assistant message (a run cut on a tool result) are left out
  (``trailing input dropped``): LLaMA-Factory trains only records that end on the model.

>>> from pchronicle_datasets.losses import collect_losses
>>> messages = [{"role": "user", "content": "weather in a and b?"},
...     {"role": "assistant", "content": "Checking both.", "tool_calls": [
...         {"id": "1", "type": "function", "function": {"name": "w", "arguments": {"c": "a"}}},
...         {"id": "2", "type": "function", "function": {"name": "w", "arguments": {"c": "b"}}}]},
...     {"role": "tool", "tool_call_id": "1", "content": "sun"},
...     {"role": "tool", "tool_call_id": "2", "content": "rain"},
...     {"role": "assistant", "content": "Sun in a, rain in b."}]
>>> with collect_losses() as report:
...     record = strict_record(messages, [])
>>> for element in record["conversations"]:
...     print(element["from"], element["value"])
human weather in a and b?
function_call Checking both.
<tool_call>[{"name": "w", "arguments": {"c": "a"}}, {"name": "w", "arguments": {"c": "b"}}]</tool_call>
observation ["sun", "rain"]
gpt Sun in a, rain in b.
>>> report.summary()
'1 kind of loss: alternation_repaired: results merged 1 (first at /messages/3)'
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..losses import report_loss
from ..markup_tags import LLAMAFACTORY_CALL_WORDS, LLAMAFACTORY_THOUGHT_WORDS
from ..render.sharegpt import jdumps, tool_schema

__all__ = ["ASSISTANT_ROLES", "CALL_WORDS", "THOUGHT_WORDS", "USER_ROLES", "strict_record"]

#: LLaMA-Factory's default reasoning and tool-call words (spelled in ``markup_tags``, the home of every tag).
THOUGHT_WORDS = LLAMAFACTORY_THOUGHT_WORDS
CALL_WORDS = LLAMAFACTORY_CALL_WORDS
#: The converter's alternation: ``USER_ROLES`` at even positions, ``ASSISTANT_ROLES`` at odd ones.
USER_ROLES = ("human", "observation")
ASSISTANT_ROLES = ("gpt", "function_call")

_REPAIRED = "alternation_repaired"


def strict_record(
    messages: Sequence[Mapping[str, Any]], tools: Sequence[Any], marks: Sequence[bool] | None = None
) -> dict[str, Any]:
    """``{"conversations", "system", "tools"}`` of ``to_messages``' object-form ``messages`` and ``tools``;
    ``marks`` (one per message, ``policy.message_marks``) gives every element ``train``: true when a message it
    holds is trained."""
    start = 0
    system = []
    while start < len(messages) and messages[start]["role"] in ("system", "developer"):
        system.append(messages[start]["content"])
        start += 1
    if len(system) > 1:  # render_messages folds developer turns in; two system turns in a row are joined here
        _repaired("system messages merged", 1, len(system) - 1)
    runs = _runs(messages, start)
    out: list[dict[str, Any]] = []
    if runs and runs[0][0] == "assistant":
        _repaired("empty human inserted", start)
        out.append(_element("human", "", [], marks))
    if runs and runs[-1][0] == "input":
        side, first, last = runs.pop()
        _repaired("trailing input dropped", first, last - first)
    for side, first, last in runs:
        run = list(range(first, last))
        if side == "assistant":
            out.append(_assistant(messages, run, marks))
        else:
            after_call = bool(out) and out[-1]["from"] == "function_call"
            out.append(_input(messages, run, after_call, marks))
    schemas = [fn for fn in (tool_schema(t) for t in tools) if fn is not None]
    return {"conversations": out, "system": "\n\n".join(system), "tools": jdumps(schemas)}


def _repaired(what: str, index: int, count: int = 1) -> None:
    report_loss(f"{_REPAIRED}: {what}", pointer=f"/messages/{index}", count=count)


def _runs(messages: Sequence[Mapping[str, Any]], start: int) -> list[tuple[str, int, int]]:
    """``(side, first, end)`` of each run of consecutive assistant (or input) messages from ``start``."""
    runs: list[tuple[str, int, int]] = []
    for i in range(start, len(messages)):
        side = "assistant" if messages[i]["role"] == "assistant" else "input"
        if runs and runs[-1][0] == side:
            runs[-1] = (side, runs[-1][1], i + 1)
        else:
            runs.append((side, i, i + 1))
    return runs


def _element(role: str, value: str, run: list[int], marks: Sequence[bool] | None) -> dict[str, Any]:
    element = {"from": role, "value": value}
    if marks is not None:
        element["train"] = any(marks[i] for i in run)
    return element


def _assistant(messages: Sequence[Mapping[str, Any]], run: list[int], marks: Sequence[bool] | None) -> dict:
    if len(run) > 1:
        _repaired("assistant messages merged", run[1], len(run) - 1)
    texts, calls = [], []
    for i in run:
        m = messages[i]
        reason = m.get("reasoning_content")
        text = THOUGHT_WORDS[0] + reason + THOUGHT_WORDS[1] if isinstance(reason, str) and reason.strip() else ""
        text += m.get("content") or ""
        if text.strip():
            texts.append(text)
        calls += [
            {"name": c["function"]["name"], "arguments": c["function"]["arguments"]} for c in m.get("tool_calls") or ()
        ]
    text = "\n\n".join(texts)
    if not calls:
        return _element("gpt", text, run, marks)
    value = jdumps(calls[0] if len(calls) == 1 else calls)
    if text:
        # ``FunctionFormatter`` finds the block with a non-greedy regex: a "</tool_call>" inside a JSON string is
        # written with JSON's "\/" escape, which json.loads reads back as "/".
        block = value.replace(CALL_WORDS[1], CALL_WORDS[1].replace("/", "\\/"))
        value = text.rstrip("\n") + "\n" + CALL_WORDS[0] + block + CALL_WORDS[1]
    return _element("function_call", value, run, marks)


def _input(
    messages: Sequence[Mapping[str, Any]], run: list[int], after_call: bool, marks: Sequence[bool] | None
) -> dict:
    roles = [messages[i]["role"] for i in run]
    contents = [messages[i]["content"] or "" for i in run]
    for i, role in zip(run, roles, strict=True):
        if role in ("system", "developer"):  # a later system turn: the converter knows system only first
            _repaired("system as human", i)
    if not after_call:  # a result of a call-less turn (its id names no call): the converter's human slot
        for i, role in zip(run, roles, strict=True):
            if role == "tool":
                _repaired("result as human", i)
    if after_call and "tool" in roles:
        if len(run) > 1:
            _repaired("results merged" if set(roles) == {"tool"} else "inputs merged", run[1], len(run) - 1)
        return _element("observation", contents[0] if len(run) == 1 else jdumps(contents), run, marks)
    if len(run) > 1:
        _repaired("inputs merged", run[1], len(run) - 1)
    return _element("human", "\n\n".join(contents), run, marks)
