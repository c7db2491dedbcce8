"""Map functions that turn Storyline rows into training examples, for ``ds.map``.

Both take a Storyline document or a dataset row of ``STORYLINE_FEATURES``, or a batch of rows: the batch
``ds.map(..., batched=True)`` passes, a ``pyarrow.Table`` (``ds.with_format("arrow")``) or ``RecordBatch`` (Spark's
``mapInArrow``). A batch is read from its Arrow columns (one core for all three, ``_table_run``: a column of
strings becomes Python strings in one call, no dict is built per row or turn) and the output is written as Arrow in
the fixed features (``SHAREGPT_FEATURES``…), returned as a table for a table and as lists for ``ds.map``'s batch.
They never change their input, and raise ``FormatError`` with a pointer on a malformed row.

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

import pyarrow as pa

from ..errors import FormatError
from ..features import bad_row, decode_columns, is_row, row_to_story, training_view
from ..formats import get_format
from ..losses import LossReport, collected, report_loss
from ..render.messages import render_messages
from ..render.sharegpt import conversation
from ..schema import SCHEMA_VERSION, validate
from .llamafactory import strict_record
from .map_losses import note
from .output_features import (
    LLAMAFACTORY_FEATURES,
    LLAMAFACTORY_TRAIN_FEATURES,
    MESSAGES_FEATURES,
    SHAREGPT_FEATURES,
    SHAREGPT_TRAIN_FEATURES,
    encode_messages,
)
from .policy import check_trainable, copied_answers, message_marks, sharegpt_marks
from .sharegpt_rows import row_elements, table_elements

try:  # the batch ``ds.map(..., batched=True)`` passes: its Arrow table is read instead of its Python columns
    from datasets.formatting.formatting import LazyBatch
except ImportError:  # a datasets without it: its batches are read as dicts of lists
    LazyBatch = None

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


def _convert(
    example: Mapping[str, Any], convert: Callable[[dict[str, Any]], dict[str, Any]], row: bool | None = None
) -> dict[str, Any]:
    """Run ``convert`` on the document of ``example``.

    A document given as a dict has the invariants the conversion relies on checked first. A dataset row of
    ``STORYLINE_FEATURES`` was validated when it was written, so it is converted straight away — the map
    functions run once per example over whole corpora — and only a row that trips the conversion is
    validated, to raise the error with its pointer instead of a bare ``KeyError``. ``row``: whether ``example`` is a
    row, when the caller knows (a row read from an Arrow batch holds only the columns the conversion reads).
    """
    if not (is_row(example) if row is None else row):
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
        raise bad_row(example, exc) from None
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
    example: Mapping[str, Any],
    convert: Callable,
    strict: bool,
    from_row: Callable | None = None,
    row: bool | None = None,
) -> tuple[dict[str, Any], LossReport]:
    """One example converted, with the losses of its conversion; ``strict``: the first loss raises."""
    fast = _from_row(example, from_row) if from_row is not None else None
    if fast is not None:
        return fast
    out, report = collected(_convert, example, convert, row)
    if strict:
        report.raise_first(document_id=_session(example) or None)
    return out, report


def _from_row(example: Mapping[str, Any], from_row: Callable) -> tuple[dict[str, Any], LossReport] | None:
    """``from_row(example)`` (the output and its losses) for a dataset row, or None: not a row, not one it covers,
    or a malformed one (left to the conversion, which names what is wrong)."""
    if not is_row(example):
        return None
    try:
        return from_row(example)
    except (ValueError, TypeError, KeyError, AttributeError, IndexError):
        return None


# The report of an example converted by a ``from_row`` without a loss: one empty report for all of them, only
# ever read.
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


def _is_batch(example: Any) -> bool:
    if isinstance(example, (pa.Table, pa.RecordBatch)) or (LazyBatch is not None and isinstance(example, LazyBatch)):
        return True
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

    Batched, the fastest form of the map (the batch's Arrow columns are read directly; the output is the same,
    byte for byte):

    >>> out = ds.map(pc.to_sharegpt, batched=True, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)
    >>> out[0]["conversations"][2]
    {'from': 'gpt', 'value': '<think>\\n</think>\\nhello'}
    >>> pc.to_sharegpt(pc.rows_to_table([pc.story_to_row(story)])).column("conversations")[0][1]["value"].as_py()
    'hi'
    """
    check_trainable(trainable)
    if isinstance(example, (pa.Table, pa.RecordBatch)) and (
        dialect != "reference" or trainable != "all" or mask_tool_arguments
    ):
        # Options with a shape of their own (``train`` marks, LLaMA-Factory's columns): rendered per row from the
        # batch's Python columns, written with their fixed schema.
        llama = dialect == "llamafactory"
        marked = trainable != "all" or mask_tool_arguments
        features = (
            (LLAMAFACTORY_TRAIN_FEATURES if marked else LLAMAFACTORY_FEATURES)
            if llama
            else (SHAREGPT_TRAIN_FEATURES if marked else SHAREGPT_FEATURES)
        )
        out = to_sharegpt(
            _pydict(example),
            keep_system_prompt=keep_system_prompt,
            empty_think=empty_think,
            drop_copied=drop_copied,
            keep_invalid_args=keep_invalid_args,
            trainable=trainable,
            mask_tool_arguments=mask_tool_arguments,
            dialect=dialect,
            strict=strict,
        )
        return _batch_output(example, pa.Table.from_pydict(out, schema=features.arrow_schema), features.arrow_schema)
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
            size = len(plain_out["conversations"])
            rows = ({k: v[i] for k, v in example.items()} for i in range(size))
            return {
                "conversations": [
                    _with_marks(conv, marked(conv, copied=_copied(row, drop_copied)))
                    for conv, row in zip(plain_out["conversations"], rows, strict=True)
                ]
            }
        conv = plain_out["conversations"]
        return {"conversations": _with_marks(conv, marked(conv, copied=_copied(example, drop_copied)))}
    plain = empty_think and not (keep_system_prompt or drop_copied or keep_invalid_args)  # what sharegpt_rows renders
    from_row = functools.partial(_sharegpt_from_row, strict=strict) if plain else None
    if from_row is not None and not _is_batch(example):
        fast = _from_row(example, from_row)  # first: this runs once per example of a corpus
        if fast is not None:
            note("to_sharegpt", fast[1], document=_session(example))
            return fast[0]
    options = {
        "keep_system_prompt": keep_system_prompt,
        "empty_think": empty_think,
        "drop_copied": drop_copied,
        "keep_invalid_args": keep_invalid_args,
        "drop_notices": True,  # what no model saw is never trained (notices.py)
    }
    exact = empty_think and not drop_copied and not keep_invalid_args

    def convert(story: dict[str, Any]) -> dict[str, Any]:
        source = _SHAREGPT.source_conversation(story) if exact else None
        return {"conversations": source if source is not None else conversation(story, **options)}

    table = _arrow_batch(example)
    if table is not None:
        # The batch's Arrow columns: the rows sharegpt_rows covers are rendered from them (table_elements).
        fast = table_elements if plain else None
        return _batch_output(example, _table_run("to_sharegpt", table, convert, strict, fast), _SHAREGPT_ARROW)
    # A single example here was not covered by _sharegpt_from_row; a batch's rows are offered to it one by one.
    return _run("to_sharegpt", example, convert, strict, from_row)


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
            story,
            drop_copied=drop_copied,
            keep_invalid_args=keep_invalid_args,
            arguments="object",
            developer="system",
            drop_notices=True,
        )
        copied = copied_answers(story, drop_copied=drop_copied)
        marks = (
            message_marks(out["messages"], trainable, mask_tool_arguments=mask_tool_arguments, copied=copied)
            if policy
            else None
        )
        return strict_record(out["messages"], out["tools"], marks)

    return _run("to_sharegpt", example, convert, strict)


def _copied(example: Mapping[str, Any], drop_copied: bool) -> list[bool]:
    """``policy.copied_answers`` of one example, a document or a dataset row."""
    return copied_answers(training_view(example) if is_row(example) else example, drop_copied=drop_copied)


def _with_marks(items: list[dict[str, Any]], marks: list[bool]) -> list[dict[str, Any]]:
    return [{**item, "train": mark} for item, mark in zip(items, marks, strict=True)]


def _sharegpt_from_row(row: Mapping[str, Any], strict: bool = False) -> tuple[dict[str, Any], LossReport] | None:
    """``to_sharegpt``'s output for a row ``sharegpt_rows`` covers, with its losses; None for any other (and, with
    ``strict``, for one with a loss: the general path raises it with its pointer)."""
    found = row_elements(row)
    if found is None:
        return None
    conv, replaced = found
    if not replaced:
        return {"conversations": conv}, _NO_LOSS
    if strict:
        return None
    return {"conversations": conv}, _replaced_report(replaced)


def _replaced_report(replaced: list[int], report: LossReport | None = None, document: str = "") -> LossReport:
    """The loss the fast path counts itself (leading system prompts the generated one replaced), as
    ``render.sharegpt.elements`` reports it."""
    report = LossReport() if report is None else report
    for t in replaced:
        report.add("system_prompt_replaced", f"/turns/{t}/msg", document)
    return report


# ----------------------------------------------------------------------------------------- Arrow batches

_SHAREGPT_ARROW = SHAREGPT_FEATURES.arrow_schema
_MESSAGES_ARROW = MESSAGES_FEATURES.arrow_schema

# The columns a conversion reads of a row (``_convert``: the training view, the same-source hints, the renamed
# call ids; ``schema_version`` for the validation of a row that trips it): the rest of a batch (metrics, tool
# stats…) is never turned into Python objects.
_ROW_COLUMNS = ("schema_version", "session", "origin", "agent", "turns", "meta", "unknown_fields")


def _arrow_batch(example: Any) -> pa.Table | None:
    """The Arrow table of a batch of rows: a ``pyarrow.Table`` or ``RecordBatch`` as given (``ds.with_format("arrow")
    .map(..., batched=True)``, Spark's ``mapInArrow``), or the table behind the batch ``ds.map(..., batched=True)``
    passes (a ``LazyBatch``: reading its Python columns would build a dict per turn and per call). None for
    anything else (a document, a row, a dict of lists)."""
    if isinstance(example, pa.Table):
        return example
    if isinstance(example, pa.RecordBatch):
        return pa.Table.from_batches([example])
    if LazyBatch is not None and isinstance(example, LazyBatch):
        table = getattr(example, "pa_table", None)
        # Only an untouched batch: its columns are still the table's (a function before this one may have set some).
        if (
            isinstance(table, pa.Table)
            and list(example.keys()) == table.column_names
            and example.keys_to_format == set(table.column_names)
        ):
            return table
    return None


def _batch_output(example: Any, outs: list[dict[str, Any]] | pa.Table, schema: pa.Schema) -> Any:
    """The outputs ``outs`` (one dict per row, or a table already) in the shape of the batch given: a table of
    ``schema`` for a table, a record batch for a record batch, and for ``ds.map``'s ``LazyBatch`` a dict of lists
    (``ds.map`` writes them in the features given, and keeps the columns not removed beside them: building Arrow
    here would be undone into Python lists for it)."""
    if not isinstance(example, (pa.Table, pa.RecordBatch)):
        if isinstance(outs, pa.Table):
            return outs.to_pydict()
        return {key: [out[key] for out in outs] for key in schema.names}
    if not isinstance(outs, pa.Table):
        outs = _sharegpt_table(outs) if schema is _SHAREGPT_ARROW else pa.Table.from_pylist(outs, schema=schema)
    if isinstance(example, pa.Table):
        return outs
    return pa.RecordBatch.from_arrays([c.combine_chunks() for c in outs.columns], schema=outs.schema)


def _pydict(example: pa.Table | pa.RecordBatch) -> dict[str, list]:
    return example.to_pydict()


def _sharegpt_table(outs: list[dict[str, Any]]) -> pa.Table:
    """``pa.Table.from_pylist(outs, schema=_SHAREGPT_ARROW)``, built from two flat string arrays and the offsets:
    a third of the time of converting a dict per element."""
    froms: list[str] = []
    values: list[str] = []
    offsets = [0]
    for out in outs:
        conv = out["conversations"]
        froms += [e["from"] for e in conv]
        values += [e["value"] for e in conv]
        offsets.append(len(froms))
    field = _SHAREGPT_ARROW.field("conversations")
    items = pa.StructArray.from_arrays(
        [pa.array(froms, pa.string()), pa.array(values, pa.string())], fields=list(field.type.value_type)
    )
    return pa.Table.from_arrays(
        [pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=field.type)], schema=_SHAREGPT_ARROW
    )


def _table_run(
    name: str,
    table: pa.Table,
    convert: Callable,
    strict: bool,
    fast: Callable[[pa.RecordBatch], list] | None,
) -> list[dict[str, Any]]:
    """The map function ``name`` over a table of rows, one output per row; its losses go to the loss report once
    for the table (``map_losses``). ``fast``: ``table_elements``, the ShareGPT elements of the rows it covers
    read from the batch's columns; every other row is read as a dict of the columns the conversion needs and
    converted by ``convert`` as a single row is."""
    names = table.schema.names
    if "turns" not in names or "session" not in names:
        raise FormatError(f"not a batch of STORYLINE_FEATURES rows: its columns are {names}")
    columns = [c for c in _ROW_COLUMNS if c in names]
    total = LossReport()
    outs: list[dict[str, Any]] = []
    for batch in table.to_batches():
        found = fast(batch) if fast is not None else [None] * batch.num_rows
        sessions = batch.column("session").to_pylist()
        if strict:  # a row with a loss goes the general way, which raises it with its pointer
            found = [None if f is not None and f[1] else f for f in found]
        general = [i for i, f in enumerate(found) if f is None]
        rows = dict(zip(general, batch.select(columns).take(general).to_pylist(), strict=True)) if general else {}
        for i, f in enumerate(found):
            if f is None:
                out, report = _one(rows[i], convert, strict, row=True)
                total.update(report, sessions[i] if isinstance(sessions[i], str) else "")
                outs.append(out)
            else:
                if f[1]:
                    _replaced_report(f[1], total, sessions[i])
                outs.append({"conversations": f[0]})
    note(name, total, examples=table.num_rows)
    return outs


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
            drop_notices=True,
        )
        if policy:
            copied = copied_answers(story, drop_copied=drop_copied)
            marks = message_marks(out["messages"], trainable, mask_tool_arguments=mask_tool_arguments, copied=copied)
            for msg, mark in zip(out["messages"], marks, strict=True):
                msg["train"] = mark
        return encode_messages(out) if arguments == "string" else out

    table = _arrow_batch(example)
    if table is not None and arguments == "string":
        return _batch_output(example, _table_run("to_messages", table, convert, strict, None), _MESSAGES_ARROW)
    if isinstance(example, (pa.Table, pa.RecordBatch)):  # objects of any shape: the table's types are inferred
        out = pa.Table.from_pydict(_run("to_messages", _pydict(example), convert, strict))
        return _batch_output(example, out, out.schema)
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
            story,
            drop_copied=drop_copied,
            keep_invalid_args=keep_invalid_args,
            arguments="object",
            developer=developer,
            drop_notices=True,
        )
        messages = out["messages"]
        copied = copied_answers(story, drop_copied=drop_copied)
        marks = message_marks(messages, trainable, mask_tool_arguments=mask_tool_arguments, copied=copied)
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
