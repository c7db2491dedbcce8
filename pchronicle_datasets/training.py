"""Map functions that turn Storyline rows into training examples, for ``ds.map``.

Both take a Storyline document or a dataset row of ``STORYLINE_FEATURES`` (or, with ``batched=True``, a
batch of rows), never change their input, and raise ``FormatError`` with a pointer on a malformed row.

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "2+2?"}, {"id": 2, "src": "agent", "msg": "4", "reason": "easy"}]}
>>> [c["value"] for c in pc.to_sharegpt(story)["conversations"][1:]]
['2+2?', '<think>\\neasy\\n</think>\\n4']
>>> pc.to_messages(story)["messages"][1]
{'role': 'assistant', 'content': '4', 'reasoning_content': 'easy'}
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .errors import FormatError
from .features import is_row, locate_bad_row, row_to_story, training_view
from .formats.chat.render import render_messages
from .formats.sharegpt import conversation
from .schema import SCHEMA_VERSION, validate

__all__ = ["to_messages", "to_sharegpt"]


def _convertible(story: Mapping[str, Any]) -> bool:
    """The invariants the conversion relies on, checked in one cheap pass: a full validation per example
    would cost as much as the conversion itself. Anything else that is wrong trips the conversion, and the
    validator then names it; a document that fails here is validated at once."""
    if story.get("schema_version") != SCHEMA_VERSION or not isinstance(story.get("agent"), Mapping):
        return False
    if type(story.get("session")) is not str or not story["session"]:
        return False
    turns = story.get("turns")
    if not isinstance(turns, list):
        return False
    seen: set[str] = set()
    for turn in turns:
        if not isinstance(turn, Mapping) or type(turn.get("src")) is not str or "msg" not in turn:
            return False
        calls = turn.get("tool_calls")
        if calls is None:
            continue
        if not isinstance(calls, list):
            return False
        for call in calls:
            if not isinstance(call, Mapping) or type(call.get("fn")) is not str or not call["fn"]:
                return False
            tcid = call.get("tcid")
            if type(tcid) is not str or not tcid or tcid in seen or "args" not in call:
                return False
            seen.add(tcid)
    return True


def _convert(example: Mapping[str, Any], convert: Callable[[dict[str, Any]], dict[str, Any]]) -> dict[str, Any]:
    """Run ``convert`` on the document of ``example``.

    A document given as a dict has the invariants the conversion relies on checked first. A dataset row of
    ``STORYLINE_FEATURES`` was validated when it was written, so it is converted straight away — the map
    functions run once per example over whole corpora — and only a row that trips the conversion is
    validated, to raise the error with its pointer instead of a bare ``KeyError``.
    """
    if not is_row(example):
        if not _convertible(example):
            validate(example)  # raises StorylineError (a PchronicleError) with the pointer of the first problem
        try:
            return convert(example)  # type: ignore[arg-type]
        except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
            validate(example)
            raise FormatError(f"the document cannot be converted: {exc!r}") from exc
    try:
        view = training_view(example)
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # JSON text that does not decode, etc.
        raise FormatError(f"not a row of STORYLINE_FEATURES: {exc}", pointer=locate_bad_row(example)) from None
    if type(view.get("session")) is not str or not view["session"]:
        raise FormatError("a row needs a non-empty session", pointer="/session")
    try:
        return convert(view)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        validate(row_to_story(example))
        raise FormatError(f"the row cannot be converted: {exc!r}") from exc


def _batched(fn: Callable[..., dict[str, Any]], batch: Mapping[str, list], **options: Any) -> dict[str, list]:
    size = len(next(iter(batch.values()))) if batch else 0
    out: dict[str, list] = {}
    for i in range(size):
        one = fn({k: v[i] for k, v in batch.items()}, **options)
        for key, value in one.items():
            out.setdefault(key, []).append(value)
    return out


def _is_batch(example: Mapping[str, Any]) -> bool:
    session = example.get("session")
    return isinstance(session, list)


def to_sharegpt(
    example: Mapping[str, Any],
    *,
    keep_system_prompt: bool = False,
    empty_think: bool = True,
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
) -> dict[str, Any]:
    """``{"conversations": [{"from", "value"}, …]}`` for a Storyline document or dataset row.

    The output equals, byte for byte, what the reference agent's converter writes for the same
    trajectory (``docs/formats/sharegpt.md`` lists the deliberate differences). Options, all off by
    default: keep the source system prompt instead of the generated one, no empty ``<think>`` block, drop
    copied context turns, keep invalid (string) arguments raw instead of ``{}``.

    >>> from datasets import Dataset
    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...          "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
    >>> ds = Dataset(pc.rows_to_table([pc.story_to_row(story)]))
    >>> ds.map(pc.to_sharegpt, remove_columns=ds.column_names)[0]["conversations"][2]
    {'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}
    """
    options = {
        "keep_system_prompt": keep_system_prompt,
        "empty_think": empty_think,
        "drop_copied": drop_copied,
        "keep_invalid_args": keep_invalid_args,
    }
    if _is_batch(example):
        return _batched(to_sharegpt, example, **options)
    return _convert(example, lambda story: {"conversations": conversation(story, **options)})


def to_messages(
    example: Mapping[str, Any], *, drop_copied: bool = False, keep_invalid_args: bool = False
) -> dict[str, Any]:
    """``{"messages": [...], "tools": [...]}`` in the conversational tool-calling shape of TRL and chat templates.

    Roles ``system``/``user``/``assistant``/``tool``; assistant ``tool_calls`` as
    ``{"id", "type": "function", "function": {"name", "arguments": <object>}}``; ``reasoning_content`` kept;
    one ``tool`` message (``name``, ``tool_call_id``, text ``content``) per result, right after the turn whose
    call it answers; ``tools`` as OpenAI function schemas. Every ``content`` is a string. String ``args`` (a
    source whose arguments were not JSON) become ``{}`` with a counted warning, as in ``to_sharegpt``;
    ``keep_invalid_args=True`` keeps the string.

    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "tools": [
    ...     {"name": "ls", "description": "list", "parameters": {"type": "object"}}]}, "turns": [
    ...     {"id": 1, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}],
    ...      "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}]}
    >>> out = pc.to_messages(story)
    >>> out["messages"][1]
    {'role': 'tool', 'name': 'ls', 'tool_call_id': 'c1', 'content': 'a.txt'}
    >>> out["tools"][0]["function"]["name"]
    'ls'
    """
    if _is_batch(example):
        return _batched(to_messages, example, drop_copied=drop_copied, keep_invalid_args=keep_invalid_args)
    # One rendering, shared with the chat writer (formats/chat/render.py).
    return _convert(
        example, lambda story: render_messages(story, drop_copied=drop_copied, keep_invalid_args=keep_invalid_args)
    )
