"""Map functions that turn Storyline rows into training examples, for ``ds.map``.

Both take a Storyline document or a dataset row of ``STORYLINE_FEATURES`` (or, with ``batched=True``, a
batch of rows), never change their input, and raise ``FormatError`` with a pointer on a malformed row.

>>> import pchronicle_datasets as pc
>>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
...     {"id": 1, "src": "user", "msg": "2+2?"}, {"id": 2, "src": "agent", "msg": "4", "reason": "easy"}]}
>>> [c["value"] for c in pc.to_sharegpt(story)["conversations"][1:]]
['2+2?', '<think>\\neasy\\n</think>\\n4']
>>> pc.to_messages(story, arguments="object")["messages"][1]
{'role': 'assistant', 'content': '4', 'reasoning_content': 'easy'}

Losses (what an output cannot hold) go to the loss report: ``pc.collect_losses()`` around the calls, or under
``ds.map`` one logged summary per map call (``map_losses``); ``strict=True`` raises at the first instead.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FormatError
from ..features import decode_columns, is_row, locate_bad_row, row_to_story, training_view
from ..formats import get_format
from ..losses import LossReport, collected, report_loss
from ..render.messages import render_messages
from ..render.sharegpt import conversation
from ..schema import SCHEMA_VERSION, validate
from .llamafactory import strict_record
from .map_losses import note
from .output_features import encode_messages
from .policy import check_trainable, message_marks, sharegpt_marks
from .sharegpt_rows import row_conversation

__all__ = ["incomplete", "to_messages", "to_prompt_completion", "to_sharegpt"]

# The ShareGPT format, through the registry (training/ never imports a format package): a document read from
# it gives back its source conversations (``source_conversation``).
_SHAREGPT = get_format("sharegpt")
SHAREGPT = _SHAREGPT.NAME


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
        if (view.get("origin") or {}).get("format") == SHAREGPT:
            # Same source: the export hints and the residual give back the source conversations exactly.
            view.update(decode_columns(example, ("meta", "unknown_fields")))
        elif example.get("meta") is not None and "source_call_ids" in example["meta"]:
            view.update(decode_columns(example, ("meta",)))
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # JSON text that does not decode, etc.
        raise FormatError(f"not a row of STORYLINE_FEATURES: {exc}", pointer=locate_bad_row(example)) from None
    if type(view.get("session")) is not str or not view["session"]:
        raise FormatError("a row needs a non-empty session", pointer="/session")
    try:
        return convert(view)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        validate(row_to_story(example))
        raise FormatError(f"the row cannot be converted: {exc!r}") from exc


def _session(example: Mapping[str, Any]) -> str:
    session = example.get("session")
    return session if isinstance(session, str) else ""


def _one(
    example: Mapping[str, Any], convert: Callable, strict: bool, from_row: Callable | None = None
) -> tuple[dict[str, Any], LossReport]:
    """One example converted, with the losses of its conversion; ``strict``: the first loss raises."""
    fast = _from_row(example, from_row) if from_row is not None else None
    if fast is not None:
        return fast, _NO_LOSS
    out, report = collected(_convert, example, convert)
    if strict:
        report.raise_first(document_id=_session(example) or None)
    return out, report


def _from_row(example: Mapping[str, Any], from_row: Callable) -> dict[str, Any] | None:
    """``from_row(example)`` for a dataset row, or None: not a row, not one it covers, or a malformed one (left to
    the conversion, which names what is wrong)."""
    if not is_row(example):
        return None
    try:
        return from_row(example)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


# The report of an example converted by a ``from_row`` (which converts only rows it can without a loss): one
# empty report for all of them, only ever read.
_NO_LOSS = LossReport()


def _run(
    name: str, example: Mapping[str, Any], convert: Callable, strict: bool, from_row: Callable | None = None
) -> dict[str, Any]:
    """The map function ``name`` on one example or a batch; its losses go to the loss report (``map_losses``).
    ``from_row``: the same conversion read straight from a dataset row, for the rows of a batch it covers (it
    gives None for the others, which ``convert`` takes); the caller offers it a single example itself."""
    if not _is_batch(example):
        out, report = _one(example, convert, strict)
        note(name, report, document=_session(example))
        return out
    size = len(next(iter(example.values()))) if example else 0
    total = LossReport()
    batch: dict[str, list] = {}
    for i in range(size):
        row = {k: v[i] for k, v in example.items()}
        one, report = _one(row, convert, strict, from_row)
        total.update(report, _session(row))
        for key, value in one.items():
            batch.setdefault(key, []).append(value)
    note(name, total, examples=size)
    return batch


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
    trainable: str = "all",
    mask_tool_arguments: bool = False,
    dialect: str = "reference",
    strict: bool = False,
) -> dict[str, Any]:
    """``{"conversations": [{"from", "value"}, …]}`` for a Storyline document or dataset row.

    The output equals, byte for byte, what the reference agent's converter writes for the same
    trajectory (``docs/formats/sharegpt.md`` lists the deliberate differences); a document read from the
    reference agent's ShareGPT gives back its source ``conversations`` exactly. Options, all off by
    default: keep the source system prompt instead of the generated one, no empty ``<think>`` block, drop
    copied context turns, keep invalid (string) arguments raw instead of ``{}``. What the output cannot hold
    is counted in the loss report (``pc.collect_losses()``; under ``ds.map`` one summary per call is logged);
    ``strict=True`` raises ``FormatError`` at the first loss instead.

    ``trainable="last"`` / ``"final_answer"`` or ``mask_tool_arguments=True`` (``training/policy.py``) give every
    element a boolean ``train`` (true only on the ``gpt`` elements the policy trains; ``pc.SHAREGPT_TRAIN_FEATURES``);
    the default ``"all"`` writes the elements as they are (every ``gpt`` element is trained).

    ``dialect="llamafactory"``: LLaMA-Factory's ShareGPT, ``{"conversations", "system", "tools"}`` in strict
    alternation (``human``/``observation``, then ``gpt``/``function_call``; ``pc.LLAMAFACTORY_FEATURES``), every
    repair counted as ``alternation_repaired: …`` (``training/llamafactory.py``; ``docs/training.md``). It keeps
    the document's system prompt (LLaMA-Factory's template writes the tools prompt) and writes no empty
    ``<think>``, so ``keep_system_prompt`` and ``empty_think`` do not apply to it.

    >>> from datasets import Dataset
    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...          "turns": [{"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
    >>> ds = Dataset(pc.rows_to_table([pc.story_to_row(story)]))
    >>> out = ds.map(pc.to_sharegpt, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)
    >>> out[0]["conversations"][2]
    {'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}
    >>> [c["train"] for c in pc.to_sharegpt(story, trainable="last")["conversations"]]
    [False, False, True]
    """
    check_trainable(trainable)
    if dialect == "llamafactory":
        return _llamafactory(example, drop_copied, keep_invalid_args, trainable, mask_tool_arguments, strict)
    if dialect != "reference":
        raise ValueError(f'dialect is "reference" (the seed\'s ShareGPT) or "llamafactory", got {dialect!r}')
    if trainable != "all" or mask_tool_arguments:
        marked = functools.partial(sharegpt_marks, trainable=trainable, mask_tool_arguments=mask_tool_arguments)
        plain_out = to_sharegpt(
            example,
            keep_system_prompt=keep_system_prompt,
            empty_think=empty_think,
            drop_copied=drop_copied,
            keep_invalid_args=keep_invalid_args,
            strict=strict,
        )
        if _is_batch(example):
            return {"conversations": [_with_marks(conv, marked(conv)) for conv in plain_out["conversations"]]}
        return {"conversations": _with_marks(plain_out["conversations"], marked(plain_out["conversations"]))}
    plain = empty_think and not (keep_system_prompt or drop_copied or keep_invalid_args)  # what sharegpt_rows renders
    if plain and not _is_batch(example):
        fast = _from_row(example, _sharegpt_from_row)  # first: this runs once per example of a corpus
        if fast is not None:
            note("to_sharegpt", _NO_LOSS, document=_session(example))
            return fast
    options = {
        "keep_system_prompt": keep_system_prompt,
        "empty_think": empty_think,
        "drop_copied": drop_copied,
        "keep_invalid_args": keep_invalid_args,
    }
    exact = empty_think and not drop_copied and not keep_invalid_args

    def convert(story: dict[str, Any]) -> dict[str, Any]:
        source = _SHAREGPT.source_conversation(story) if exact else None
        return {"conversations": source if source is not None else conversation(story, **options)}

    # A single example here was not covered by _sharegpt_from_row; a batch's rows are offered to it one by one.
    return _run("to_sharegpt", example, convert, strict, _sharegpt_from_row if plain else None)


def _llamafactory(
    example: Mapping[str, Any],
    drop_copied: bool,
    keep_invalid_args: bool,
    trainable: str,
    mask_tool_arguments: bool,
    strict: bool,
) -> dict[str, Any]:
    """``to_sharegpt(dialect="llamafactory")``: the ``to_messages`` rendering (developer turns folded into the
    system prompt, which LLaMA-Factory reads from the ``system`` key only) in strict alternation."""
    policy = trainable != "all" or mask_tool_arguments

    def convert(story: dict[str, Any]) -> dict[str, Any]:
        out = render_messages(
            story, drop_copied=drop_copied, keep_invalid_args=keep_invalid_args, arguments="object", developer="system"
        )
        marks = message_marks(out["messages"], trainable, mask_tool_arguments=mask_tool_arguments) if policy else None
        return strict_record(out["messages"], out["tools"], marks)

    return _run("to_sharegpt", example, convert, strict)


def _with_marks(items: list[dict[str, Any]], marks: list[bool]) -> list[dict[str, Any]]:
    return [{**item, "train": mark} for item, mark in zip(items, marks, strict=True)]


def _sharegpt_from_row(row: Mapping[str, Any]) -> dict[str, Any] | None:
    conv = row_conversation(row)
    return None if conv is None else {"conversations": conv}


def to_messages(
    example: Mapping[str, Any],
    *,
    arguments: str = "string",
    developer: str = "developer",
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
    trainable: str = "all",
    mask_tool_arguments: bool = False,
    strict: bool = False,
) -> dict[str, Any]:
    """``{"messages": [...], "tools": ...}`` in the conversational tool-calling shape of TRL and chat templates.

    Roles ``system``/``developer``/``user``/``assistant``/``tool`` (``developer="system"`` folds developer turns
    into the system message); assistant ``tool_calls`` as ``{"id", "type": "function", "function": {"name",
    "arguments"}}``; ``reasoning_content`` kept; one ``tool`` message (``name``, ``tool_call_id``, text
    ``content``) per result, right after the turn whose call it answers; a result that answers no call as the
    next ``user`` message; ``tools`` as OpenAI function schemas. Every ``content`` is a string.

    ``arguments="string"`` (the default) is the dataset form, exactly ``pc.MESSAGES_FEATURES``: arguments and
    ``tools`` as JSON text, every key in every message (null where it has none), so outputs of any corpora
    concatenate and JSON values keep every digit. ``arguments="object"``: arguments as mappings, ``tools`` as a
    list, keys only where they have a value — what chat templates that write ``arguments | tojson`` take (for
    direct use; ``pc.decode_messages`` turns a stored row into it). String ``args`` (a source whose arguments
    were not JSON) become ``{}``, a counted loss, unless ``keep_invalid_args=True``; ``strict=True`` raises
    ``FormatError`` at the first loss.

    ``trainable="last"`` (the last assistant message) or ``"final_answer"`` (the last assistant message without a
    tool call), and ``mask_tool_arguments=True`` (not the assistant messages whose only content is a call), give
    every message a boolean ``train``: true only on the assistant messages the policy trains (axolotl's
    ``message_field_training: train``). The default ``"all"`` asks for no policy: the object form has no ``train``
    key, the string form a null one (every assistant message is trained, by the trainer's own role rule).

    >>> from datasets import Dataset
    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", "tools": [
    ...     {"name": "ls", "description": "list", "parameters": {"type": "object"}}]}, "turns": [
    ...     {"id": 1, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {"p": "."}}],
    ...      "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}]}
    >>> ds = Dataset(pc.rows_to_table([pc.story_to_row(story)]))
    >>> out = ds.map(pc.to_messages, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    >>> out[0]["messages"][0]["tool_calls"][0]["function"]
    {'name': 'ls', 'arguments': '{"p":"."}'}
    >>> pc.to_messages(story, arguments="object")["messages"][1]
    {'role': 'tool', 'name': 'ls', 'tool_call_id': 'c1', 'content': 'a.txt'}
    >>> [m["train"] for m in pc.to_messages(story, mask_tool_arguments=True)["messages"]]
    [False, False]
    """
    if arguments not in ("object", "string"):
        raise ValueError(f'arguments is "object" or "string", got {arguments!r}')
    check_trainable(trainable)
    policy = trainable != "all" or mask_tool_arguments

    def convert(story: dict[str, Any]) -> dict[str, Any]:
        out = render_messages(
            story,
            drop_copied=drop_copied,
            keep_invalid_args=keep_invalid_args,
            arguments=arguments,
            developer=developer,
        )
        if policy:
            marks = message_marks(out["messages"], trainable, mask_tool_arguments=mask_tool_arguments)
            for msg, mark in zip(out["messages"], marks, strict=True):
                msg["train"] = mark
        return encode_messages(out) if arguments == "string" else out

    return _run("to_messages", example, convert, strict)


def to_prompt_completion(
    example: Mapping[str, Any],
    *,
    trainable: str = "last",
    mask_tool_arguments: bool = False,
    developer: str = "developer",
    drop_copied: bool = False,
    keep_invalid_args: bool = False,
    strict: bool = False,
) -> dict[str, Any]:
    """TRL's conversational prompt-completion form, ``{"prompt": [...], "completion": [...], "tools": [...]}``:
    the completion is the messages the policy trains (``to_messages(trainable=…)``), the prompt everything before
    them, so TRL's default completion-only loss trains exactly the policy's turns. Messages are in the object
    form (arguments as mappings; what chat templates take), ``tools`` a list.

    TRL trains the whole completion, so it must be one run of trained messages: with ``trainable="all"`` on a
    conversation whose assistant messages have tool results or user messages between them, ``FormatError``
    says so (use ``to_messages`` with ``assistant_only_loss``, or ``"last"``/``"final_answer"``). Messages after
    the last trained one are not trained and left out (counted: ``completion_tail_dropped``); a conversation
    with no trained message has an empty completion (``pc.flags`` flags it ``incomplete``).

    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
    ...     {"id": 1, "src": "user", "msg": "hi"}, {"id": 2, "src": "agent", "msg": "hello"}]}
    >>> pc.to_prompt_completion(story)
    {'prompt': [{'role': 'user', 'content': 'hi'}], 'completion': [{'role': 'assistant', 'content': 'hello'}], \
'tools': []}
    """
    check_trainable(trainable)

    def convert(story: dict[str, Any]) -> dict[str, Any]:
        out = render_messages(
            story, drop_copied=drop_copied, keep_invalid_args=keep_invalid_args, arguments="object", developer=developer
        )
        messages = out["messages"]
        marks = message_marks(messages, trainable, mask_tool_arguments=mask_tool_arguments)
        trained = [i for i, mark in enumerate(marks) if mark]
        if not trained:
            return {"prompt": messages, "completion": [], "tools": out["tools"]}
        first, last = trained[0], trained[-1]
        between = [i for i in range(first, last + 1) if not marks[i]]
        if between:
            raise FormatError(
                f"trainable={trainable!r}: message {between[0]} ({messages[between[0]]['role']}) lies between trained"
                " messages, and TRL trains the whole completion; use to_messages with assistant_only_loss, or"
                ' trainable="last" / "final_answer"',
                pointer=f"/messages/{between[0]}",
            )
        if last + 1 < len(messages):
            report_loss("completion_tail_dropped", pointer=f"/messages/{last + 1}", count=len(messages) - last - 1)
        return {"prompt": messages[:first], "completion": messages[first : last + 1], "tools": out["tools"]}

    return _run("to_prompt_completion", example, convert, strict)


def incomplete(example: Mapping[str, Any]) -> str | None:
    """Why a conversation is incomplete for training, or None: ``"no assistant turn"``, or ``"ends on a tool
    result"`` (a tool result with no answer after it). Takes a Storyline document or row, a ``to_messages``
    output (either form) or a ``to_sharegpt`` output, so it works before or after the map:
    ``train = train.filter(lambda ex: pc.incomplete(ex) is None)``.

    >>> incomplete({"conversations": [{"from": "human", "value": "hi"}]})
    'no assistant turn'
    >>> incomplete({"messages": [{"role": "user", "content": "ls"}, {"role": "assistant", "content": "",
    ...     "tool_calls": [{"id": "c", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
    ...     {"role": "tool", "content": "a.txt"}]})
    'ends on a tool result'
    """
    if "messages" in example and "turns" not in example:
        roles = [m.get("role") for m in example["messages"] or []]
        agent, tool = "assistant", "tool"
    elif "conversations" in example:
        roles = [c.get("from") for c in example["conversations"] or []]
        agent, tool = "gpt", "tool"
    else:
        story = example if not is_row(example) else training_view(example)
        roles = []
        for turn in story.get("turns") or []:
            roles.append(turn.get("src"))
            if turn.get("observation") or any("result" in c for c in turn.get("tool_calls") or []):
                roles.append("result")
        agent, tool = "agent", "result"
    if agent not in roles:
        return "no assistant turn"
    if roles[-1] == tool:
        return "ends on a tool result"
    return None
