"""Hostile inputs for the fuzz suite (``tests/test_fuzz.py``, issue 7): every strategy here draws a ``FuzzInput``.

A ``FuzzInput`` is the whole text or bytes of one source file plus a short label that says how it was made
(``sample:gateway_capture.jsonl | truncate@1234``), so a failing example prints readably instead of as a
quarter of a megabyte of bytes. The classes of input, each a named strategy:

* ``valid_inputs``: the package samples, the test data and generated valid corpora of each format (Storyline
  documents and gateway corpora from ``tests/strategies.py``,
  ShareGPT records drawn here), plus Storyline files holding documents read from the other formats (their
  export hints under ``/meta`` and residual under ``/unknown_fields``);
* ``byte_mutated``: truncation, deletion, duplication, swapping, flipped bytes, inserted bytes, NUL, and a
  cut in the middle of a UTF-8 sequence;
* ``json_mutated``: a value anywhere replaced by a value of another type (``WRONG_VALUES``, and the hostile
  tokens: ``NaN``, integers beyond 64 bits, lone surrogates, deep nesting…), a key deleted, a key
  duplicated with another value in the raw text;
* ``compressed``: gzip (one member per line, concatenated, truncated inside the last member, trailing
  garbage), zstd (frames) and bzip2 streams, whole or cut short;
* ``hostile``: invalid UTF-8, BOMs, lone surrogates (escaped in JSON and in a Python ``str``), ``NaN`` and
  ``Infinity``, integers beyond 64 bits, numbers as strings, recursion bombs, long strings, empty and
  whitespace-only files, wrong top-level types, JSON Lines with one bad line among good ones;
* ``random_json_inputs`` and ``random_records``: ``st.recursive`` JSON as whole files, and as the documents,
  rows and records of each format (the format's own keys with random values);
* ``big_inputs()``: a few inputs of several MB, for the memory check.
"""

from __future__ import annotations

import bz2
import functools
import gzip
import itertools
import json
import re
from pathlib import Path
from typing import Any

import orjson
import zstandard
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.formats import openai_msg, sharegpt
from pchronicle_datasets.schema import ROOT, TOOL_CALL, TURN
from tests.strategies import AWKWARD_FLOATS, AWKWARD_INTS, AWKWARD_STRINGS, corpora, storylines

__all__ = [
    "FORMATS",
    "READERS",
    "SEEDS_ONE",
    "WRONG_VALUES",
    "FuzzInput",
    "Raw",
    "big_inputs",
    "builder_inputs",
    "byte_mutated",
    "compressed",
    "every_input",
    "hostile",
    "json_mutated",
    "json_paths",
    "random_json_inputs",
    "random_records",
    "render",
    "replace_at",
    "valid_inputs",
    "wrong_typed",
]

FORMATS = ("storyline", "openai-msg", "sharegpt")
READERS = (*FORMATS, "auto")
SAMPLES_DIR = Path(pc.__file__).resolve().parent / "samples"
DATA_DIR = Path(__file__).resolve().parent / "data"
_FOLDER = {"storyline": "storyline", "openai-msg": "openai_msg", "sharegpt": "sharegpt"}


class FuzzInput:
    """The text or bytes of one source file, and how it was made (printed short: label, size and head)."""

    __slots__ = ("data", "label")

    def __init__(self, label: str, data: bytes | str) -> None:
        self.label = label
        self.data = data

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:  # Hypothesis' and IPython's printer
        printer.text(repr(self))

    def __repr__(self) -> str:
        unit = "chars" if isinstance(self.data, str) else "bytes"
        return f"FuzzInput({self.label!r}, {len(self.data)} {unit}, head={self.data[:48]!r})"

    @property
    def raw(self) -> bytes:
        """The input as bytes (a ``str`` holding lone surrogates keeps them, as invalid UTF-8)."""
        if isinstance(self.data, str):
            return self.data.encode("utf-8", "surrogatepass")
        return self.data

    def then(self, step: str, data: bytes | str) -> FuzzInput:
        return FuzzInput(f"{self.label} | {step}", data)


# ------------------------------------------------------------------------------------------ JSON text


class Raw:
    """A value written as this exact JSON text (``NaN``, ``1e400``, a 300-deep list, an object with a
    duplicate key…), which no JSON encoder would write."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r}{'…' if len(self.text) > 40 else ''})"


_TOKEN = "RAW-c0ffee-{}"


def render(value: Any, *, ensure_ascii: bool = True, indent: int | None = None) -> str:
    """JSON text of ``value`` (Python's encoder: big integers stay exact), with every ``Raw`` spliced in.

    With ``ensure_ascii=False`` a lone surrogate stays in the returned ``str`` (it is not UTF-8 any more)."""
    raws: list[str] = []

    def default(obj: Any) -> str:
        if isinstance(obj, Raw):
            raws.append(obj.text)
            return _TOKEN.format(len(raws) - 1)
        raise TypeError(f"not JSON: {type(obj).__name__}")

    text = json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, default=default, allow_nan=True)
    for i, raw in enumerate(raws):
        text = text.replace(json.dumps(_TOKEN.format(i)), raw, 1)
    return text


def _deep(depth: int, kind: str = "list") -> Raw:
    if kind == "list":
        return Raw("[" * depth + "]" * depth)
    return Raw('{"a":' * depth + "null" + "}" * depth)


#: The wrong-typed values every field is given in turn (the deterministic test runs each one over every path).
WRONG_VALUES: dict[str, Any] = {
    "null": None,
    "true": True,
    "zero": 0,
    "minus_one": -1,
    "float": 1.5,
    "empty_string": "",
    "number_string": "42",
    "empty_array": [],
    "empty_object": {},
    "int_2_70": 2**70,
    "int_minus_2_70": -(2**70),
    "nan": Raw("NaN"),
    "long_string": "x" * 100_000,
    "deep_list": _deep(300),
}
#: Tokens and values a strict reader must refuse or keep exactly (mixed into the random mutations).
HOSTILE_VALUES: tuple[Any, ...] = (
    Raw("NaN"),
    Raw("Infinity"),
    Raw("-Infinity"),
    Raw("1e400"),
    Raw("-1e400"),
    Raw("18446744073709551616"),  # 2**64
    Raw("-9223372036854775809"),  # -(2**63) - 1
    Raw("9223372036854775808"),  # 2**63: a uint64, not an int64
    Raw("1" * 30),
    Raw("-" + "9" * 25),
    Raw("1" * 5000),  # beyond Python's int-from-str digit limit
    -(2**70),
    2**64 - 1,
    -(2**63),
    "\ud800",
    "a\udfffb",
    "\udc00\ud800",
    "1.5",
    "-0",
    "1e5",
    "true",
    "null",
    "2026-07-30T12:00:00Z",
    "x" * 300_000,
    _deep(254),
    _deep(255),
    _deep(256),
    _deep(900),
    _deep(1023),
    _deep(1024),
    _deep(1025),
    _deep(600, "object"),
    Raw("[" * 1000 + "1" * 20 + "]" * 1000),
)
MUTATION_VALUES: tuple[Any, ...] = (*WRONG_VALUES.values(), *HOSTILE_VALUES)


def json_nodes(value: Any, limit: int = 20_000) -> list[tuple[tuple, Any]]:
    """Every ``(path, node)`` in ``value`` (a path is a tuple of keys and indices), root first, document order;
    ``Raw`` is a leaf."""
    out: list[tuple[tuple, Any]] = []
    stack: list[tuple[tuple, Any]] = [((), value)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        out.append((path, node))
        if isinstance(node, dict):
            stack.extend(((*path, k), v) for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend(((*path, i), v) for i, v in reversed(list(enumerate(node))))
    return out


def json_paths(value: Any, limit: int = 20_000) -> list[tuple]:
    """Every path in ``value``, root first, document order."""
    return [path for path, _ in json_nodes(value, limit)]


def _get(value: Any, path: tuple) -> Any:
    for token in path:
        value = value[token]
    return value


def _pick(draw: st.DrawFn, items: list | tuple) -> Any:
    """One of ``items`` (an index draw: ``sampled_from`` would walk a list of thousands on every call)."""
    return items[draw(st.integers(0, len(items) - 1))]


def replace_at(value: Any, path: tuple, new: Any) -> Any:
    """A copy of ``value`` with the node at ``path`` replaced (only the containers on the path are copied)."""
    if not path:
        return new
    head, rest = path[0], path[1:]
    copy = dict(value) if isinstance(value, dict) else list(value)
    copy[head] = replace_at(value[head], rest, new)
    return copy


def _delete_at(value: Any, path: tuple) -> Any:
    parent = _get(value, path[:-1])
    if isinstance(parent, dict):
        smaller: Any = {k: v for k, v in parent.items() if k != path[-1]}
    else:
        smaller = parent[: path[-1]] + parent[path[-1] + 1 :]
    return replace_at(value, path[:-1], smaller)


def _with_duplicate_key(obj: dict, key: str, other: Any) -> Raw:
    """``obj`` as JSON text with ``key`` written a second time, holding ``other``."""
    text = render(obj)
    return Raw(f"{text[:-1]}, {json.dumps(key)}: {render(other)}}}")


# ------------------------------------------------------------------------------------------ seeds


def _sample_inputs(fmt: str) -> list[FuzzInput]:
    folder = SAMPLES_DIR / _FOLDER[fmt]
    return [FuzzInput(f"sample:{p.name}", p.read_bytes()) for p in sorted(folder.iterdir()) if p.is_file()]


def _hub_inputs() -> list[FuzzInput]:
    """Storyline files of the documents read from the other formats' samples (export hints, residual)."""
    out = []
    for fmt in ("openai-msg", "sharegpt"):
        for seed in _sample_inputs(fmt):
            stories = pc.into_storyline(fmt, seed.data, document_id=seed.label.split(":", 1)[1])
            out.append(FuzzInput(f"hub:{seed.label}", pc.from_storyline("storyline", stories).encode("utf-8")))
            out.append(FuzzInput(f"hub1:{seed.label}", orjson.dumps(stories[0], option=orjson.OPT_INDENT_2)))
    return out


SEED_INPUTS: dict[str, list[FuzzInput]] = {
    "storyline": [
        *_sample_inputs("storyline"),
        FuzzInput(
            "data:every_optional_field", (DATA_DIR / "validation" / "every_optional_field.storyline.json").read_bytes()
        ),
        *_hub_inputs(),
    ],
    "openai-msg": _sample_inputs("openai-msg"),
    "sharegpt": [
        *_sample_inputs("sharegpt"),
        *(
            FuzzInput(f"data:{p.name}", p.read_bytes())
            for p in sorted((DATA_DIR / "sharegpt").glob("*.json"))
            if p.name.endswith((".record.json", ".conversations.json"))
        ),
    ],
}

# One small valid seed per format for the deterministic wrong-type test: JSON values, one per source line
# (a single-document file is one line). The openai-msg seed uses every mapped row key at least once.
_OPENAI_ROWS: list[dict[str, Any]] = [
    {
        "session_id": "s1",
        "step_id": 1,
        "run_id": "run-1",
        "agent_id": "agent-1",
        "agent_model": "gpt-5",
        "llm_model": "gpt-5",
        "env_id": "s1",
        "env_name": "swe",
        "dataset_type": "train",
        "dt": "2026-11-30",
        "id": "row-1",
        "created_at": "2026-11-30T10:00:00Z",
        "reward": 0.5,
        "is_terminal": False,
        "blob_manifest": None,
        "vendor": {"trace": [1, "x"]},
        "meta_json": {
            "source": "agent-1",
            "group_id": "g1",
            "env_state": {
                "prompt_tokens": 12,
                "total_latency_ms": 250,
                "ttft_ms": 40,
                "finish_reason": "tool_calls",
                "request_id": "req-1",
                "event_type": "chat",
                "endpoint": "/v1/chat/completions",
                "session_id": "s1",
                "requested_model": "gpt-5",
                "llm_step_index": 1,
                "weight_version": "w1",
            },
        },
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "List files."}]},
        ],
        "response": {
            "role": "assistant",
            "content": "",
            "reasoning_content": "ls it",
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}},
                {"id": "call_2", "type": "function", "function": {"name": "cat", "arguments": {"path": "a"}}},
            ],
        },
    },
    {
        "session_id": "s1",
        "step_id": 2,
        "run_id": "run-1",
        "agent_model": "gpt-5",
        "created_at": 1764496801,
        "meta_json": '{"env_state": {"prompt_tokens": 30, "request_id": "req-2"}}',
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": [{"type": "text", "text": "List files."}]},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}},
                    {"id": "call_2", "type": "function", "function": {"name": "cat", "arguments": {"path": "a"}}},
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "a\nb", "name": "ls"},
            {"role": "tool", "tool_call_id": "call_2", "content": "hello"},
        ],
        "response": {"role": "assistant", "content": "Two files: a, b.", "refusal": None},
        "is_session_completed": True,
    },
]


def _one_line_record(path: Path) -> list[Any]:
    return [orjson.loads(path.read_bytes())]


#: The JSON values of each seed, one per source line.
SEEDS_ONE: dict[str, list[Any]] = {
    "storyline": _one_line_record(DATA_DIR / "validation" / "every_optional_field.storyline.json"),
    "openai-msg": _OPENAI_ROWS,
    "sharegpt": _one_line_record(DATA_DIR / "sharegpt" / "ex2_parallel_tools.record.json"),
}

# ------------------------------------------------------------------------------------------ generated valid

TEXT = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=16)
MARKUP = st.sampled_from(
    [
        "<think>",
        "</think>",
        "<tool_call>",
        "</tool_call>",
        "<tool_response>",
        "</tool_response>",
        "<REASONING_SCRATCHPAD>",
        "</REASONING_SCRATCHPAD>",
        "<function=ls>",
        "</function>",
        "<parameter=path>.</parameter>",
        '<tool_call>\n{"name": "ls", "arguments": {}}\n</tool_call>',
        '<tool_call>{"name": "", "arguments": 1}</tool_call>',
        "\n<tools>\n[]\n</tools>\n",
        '{"name": "ls"}',
        "[{",
        '{"type": "text", "text": "x"}',
    ]
)
TAGGED_TEXT = st.lists(st.one_of(TEXT, MARKUP), max_size=5).map("".join)
TOOL_NAMES = ("ls", "cat", "web_search", "工具")


@st.composite
def _sharegpt_record(draw: st.DrawFn) -> Any:
    """A trajectory record in the reference converter's dialect (think blocks, tool calls and responses)."""
    names = draw(st.lists(st.sampled_from(TOOL_NAMES), max_size=3, unique=True))
    tools = [{"type": "function", "function": {"name": n, "description": "d", "parameters": {}}} for n in names]
    conv: list[dict[str, Any]] = []
    system = draw(st.sampled_from(["generated", "custom", "none"]))
    if system == "generated":
        conv.append({"from": "system", "value": sharegpt.system_prompt(tools)})
    elif system == "custom":
        conv.append({"from": "system", "value": draw(TAGGED_TEXT)})
    for step in range(draw(st.integers(1, 3))):
        conv.append({"from": "human", "value": draw(TAGGED_TEXT)})
        value = ""
        think = draw(st.one_of(st.none(), TEXT))
        if think is not None:
            value += f"<think>\n{think}\n</think>\n"
        value += draw(TAGGED_TEXT)
        calls = draw(st.lists(st.sampled_from(names), max_size=2)) if names else []
        for name in calls:
            args = draw(st.dictionaries(st.sampled_from(["path", "q"]), st.one_of(TEXT, st.integers())))
            value += f"\n<tool_call>\n{json.dumps({'name': name, 'arguments': args}, ensure_ascii=False)}\n</tool_call>"
        conv.append({"from": "gpt", "value": value})
        if calls:
            blocks = [
                json.dumps({"tool_call_id": f"call_{step}_{c}", "name": n, "content": draw(TEXT)}, ensure_ascii=False)
                for c, n in enumerate(calls)
            ]
            conv.append({"from": "tool", "value": "\n".join(f"<tool_response>\n{b}\n</tool_response>" for b in blocks)})
    if draw(st.integers(0, 4)) == 0:
        return conv  # a bare conversation
    record: dict[str, Any] = {"conversations": conv}
    if draw(st.booleans()):
        record["timestamp"] = "2026-11-30T10:00:00.123456"
    if draw(st.booleans()):
        record["model"] = draw(st.sampled_from(["hermes-4", "qwen3"]))
    if draw(st.booleans()):
        record["completed"] = draw(st.booleans())
        record["partial"] = draw(st.booleans())
    if draw(st.booleans()):
        record["api_calls"] = draw(st.integers(0, 9))
        record["toolsets_used"] = names
    if draw(st.booleans()):
        record["metadata"] = {"model": "hermes-4", "batch": draw(st.integers(0, 3))}
    return record


@st.composite
def _generated(draw: st.DrawFn, fmt: str) -> FuzzInput:
    if fmt == "storyline":
        docs = draw(st.lists(storylines(max_turns=3), min_size=1, max_size=2))
        if len(docs) == 1 and draw(st.booleans()):
            return FuzzInput("gen:storyline-doc", render(docs[0], indent=draw(st.sampled_from([None, 2]))).encode())
        return FuzzInput("gen:storyline-jsonl", b"".join(orjson.dumps(d) + b"\n" for d in docs))
    if fmt == "openai-msg":
        rows = draw(corpora())
        shape = draw(st.sampled_from(["jsonl", "array", "envelope"]))
        if shape == "jsonl":
            return FuzzInput("gen:openai-jsonl", b"".join(orjson.dumps(r) + b"\n" for r in rows))
        if shape == "array":
            return FuzzInput("gen:openai-array", orjson.dumps(rows))
        return FuzzInput("gen:openai-envelope", orjson.dumps({"session_steps": rows, "capture": {"host": "gw-1"}}))
    records = draw(st.lists(_sharegpt_record(), min_size=1, max_size=3))
    return FuzzInput("gen:sharegpt-jsonl", "".join(render(r, ensure_ascii=False) + "\n" for r in records).encode())


def valid_inputs(fmt: str) -> st.SearchStrategy[FuzzInput]:
    """Valid files of ``fmt`` (all formats for ``"auto"``): samples, test data and generated corpora."""
    if fmt == "auto":
        return st.one_of(*(valid_inputs(f) for f in FORMATS))
    return st.one_of(st.sampled_from(SEED_INPUTS[fmt]), _generated(fmt))


# ------------------------------------------------------------------------------------------ byte mutations

_MULTIBYTE = re.compile(rb"[\xc2-\xf4]")
BYTE_OPS = ("truncate", "delete", "duplicate", "swap", "flip", "insert", "nul", "cut_utf8")


@st.composite
def _range(draw: st.DrawFn, n: int) -> tuple[int, int]:
    start = draw(st.integers(0, n))
    length = draw(st.sampled_from([1, 2, 7, 64, 1000, 100_000]))
    return start, min(n, start + length)


def _mutate_bytes(draw: st.DrawFn, data: bytearray, op: str) -> str:
    n = len(data)
    if op == "truncate":
        i = draw(st.integers(0, n))
        del data[i:]
        return f"truncate@{i}"
    if op == "delete":
        i, j = draw(_range(n))
        del data[i:j]
        return f"delete[{i}:{j}]"
    if op == "duplicate":
        i, j = draw(_range(n))
        data[j:j] = data[i:j]
        return f"duplicate[{i}:{j}]"
    if op == "swap":
        i, j = draw(_range(n))
        k = min(n, j + (j - i))
        data[i:k] = data[j:k] + data[i:j]
        return f"swap[{i}:{j}:{k}]"
    if op == "flip":
        if not n:
            return "flip(empty)"
        spots = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
        for p in spots:
            data[p] ^= draw(st.integers(1, 255))
        return f"flip{spots}"
    if op in ("insert", "nul"):
        p = draw(st.integers(0, n))
        blob = b"\x00" if op == "nul" else draw(st.binary(min_size=1, max_size=16))
        data[p:p] = blob
        return f"{op}@{p}:{bytes(blob)!r}"
    # cut_utf8: end the data, or drop the continuation bytes, right after the lead byte of a multibyte sequence
    leads = [m.start() for m in itertools.islice(_MULTIBYTE.finditer(data), 2000)]
    if not leads:
        p = draw(st.integers(0, n))
        data[p:p] = b"\xe2\x82"
        return f"partial-utf8@{p}"
    p = _pick(draw, leads)
    if draw(st.booleans()):
        del data[p + 1 :]
        return f"cut-utf8-end@{p + 1}"
    del data[p + 1 : p + 2]
    return f"cut-utf8-mid@{p + 1}"


@st.composite
def byte_mutated(draw: st.DrawFn, seeds: st.SearchStrategy[FuzzInput]) -> FuzzInput:
    """1–3 byte-level mutations of a seed."""
    seed = draw(seeds)
    data = bytearray(seed.raw)
    steps = [_mutate_bytes(draw, data, draw(st.sampled_from(BYTE_OPS))) for _ in range(draw(st.integers(1, 3)))]
    return seed.then(" ".join(steps), bytes(data))


# ------------------------------------------------------------------------------------------ JSON mutations


@functools.lru_cache(maxsize=128)
def _parse_lines(raw: bytes) -> tuple[str, tuple[Any, ...]]:
    """``("whole", (value,))`` when ``raw`` is one JSON text, else ``("lines", (value or Raw(line), …))``.

    Cached (the samples are parsed once): callers copy, and mutations copy the containers they change."""
    try:
        return "whole", (json.loads(raw),)
    except ValueError:
        pass
    out: list[Any] = []
    for line in raw.split(b"\n"):
        try:
            out.append(json.loads(line) if line.strip() else Raw(line.decode("utf-8", "replace")))
        except ValueError:
            out.append(Raw(line.decode("utf-8", "replace")))
    return "lines", tuple(out)


@functools.lru_cache(maxsize=256)
def _seed_nodes(raw: bytes, i: int) -> list[tuple[tuple, Any]]:
    return json_nodes(_parse_lines(raw)[1][i])


@st.composite
def _json_mutation(
    draw: st.DrawFn, value: Any, nodes: list[tuple[tuple, Any]], ops: tuple[str, ...], values: tuple[Any, ...]
) -> tuple[Any, str]:
    op = draw(st.sampled_from(ops))
    if op == "delete" and len(nodes) > 1:
        path = _pick(draw, nodes[1:])[0]
        return _delete_at(value, path), f"delete{list(path)}"
    objects = [(p, n) for p, n in nodes if isinstance(n, dict) and n] if op == "dup_key" else []
    if objects:
        path, obj = _pick(draw, objects)
        key = _pick(draw, sorted(obj))
        other = _pick(draw, values)
        return replace_at(value, path, _with_duplicate_key(obj, key, other)), f"dup_key{[*path, key]}={other!r:.40}"
    path = _pick(draw, nodes)[0]
    new = _pick(draw, values)
    return replace_at(value, path, new), f"replace{list(path)}={new!r:.40}"


@st.composite
def json_mutated(
    draw: st.DrawFn,
    seeds: st.SearchStrategy[FuzzInput],
    ops: tuple[str, ...] = ("replace", "replace", "delete", "dup_key"),
    values: tuple[Any, ...] = MUTATION_VALUES,
    max_ops: int = 3,
) -> FuzzInput:
    """1–``max_ops`` JSON-level mutations of one line (or the whole document) of a seed, written back as text."""
    seed = draw(seeds)
    raw = seed.raw
    mode, parsed = _parse_lines(raw)
    lines = list(parsed)
    targets = [i for i, v in enumerate(lines) if not isinstance(v, Raw)]
    if not targets:
        return seed.then("unparsable", seed.data)
    i = _pick(draw, targets)
    value, nodes = lines[i], _seed_nodes(raw, i)
    steps = []
    for n in range(draw(st.integers(1, max_ops))):
        if n:
            nodes = json_nodes(value)
        value, step = draw(_json_mutation(value, nodes, ops, values))
        steps.append(step)
    lines[i] = value
    ascii_ = draw(st.booleans())
    indent = draw(st.sampled_from([None, 1])) if mode == "whole" else None
    text = "\n".join(v.text if isinstance(v, Raw) else render(v, ensure_ascii=ascii_, indent=indent) for v in lines)
    label = f"{mode}[{i}] " + "; ".join(steps)
    try:
        data: bytes | str = text.encode("utf-8")
    except UnicodeEncodeError:
        data = text  # a lone surrogate: only a Python str can hold it
    if isinstance(data, bytes) and draw(st.integers(0, 4)) == 0:
        data = text  # readers take str too
    return seed.then(label, data)


def wrong_typed(fmt: str) -> st.SearchStrategy[FuzzInput]:
    """One field anywhere in a valid input of ``fmt`` given a value of another type."""
    return json_mutated(valid_inputs(fmt), ops=("replace",), values=tuple(WRONG_VALUES.values()), max_ops=1)


# ------------------------------------------------------------------------------------------ compression


def _cut(draw: st.DrawFn, blob: bytes, last: int) -> tuple[bytes, str]:
    """``blob`` whole, cut inside its last ``last`` bytes (the last member or frame), or cut anywhere."""
    how = draw(st.sampled_from(["whole", "last", "anywhere", "garbage", "nul-padding"]))
    if how == "last" and last > 1:
        k = draw(st.integers(1, last - 1))
        return blob[:-k], f"cut-last-{k}"
    if how == "anywhere":
        i = draw(st.integers(0, len(blob)))
        return blob[:i], f"cut@{i}"
    if how == "garbage":
        return blob + draw(st.sampled_from([b"x", b"\x1f\x8b", b"\x1f\x8b\x08\x00", b"{}\n"])), "trailing-garbage"
    if how == "nul-padding":
        return blob + b"\x00" * draw(st.integers(1, 600)), "nul-padding"
    return blob, "whole"


@st.composite
def compressed(draw: st.DrawFn, seeds: st.SearchStrategy[FuzzInput]) -> FuzzInput:
    """A seed gzip-, zstd- or bzip2-compressed (member/frame per line or whole), then maybe cut short."""
    seed = draw(seeds)
    raw = seed.raw
    kind = draw(st.sampled_from(["gzip-lines", "gzip", "gzip-concat", "zstd", "zstd-frames", "bzip2", "bzip2-streams"]))
    lines = raw.splitlines(keepends=True) or [raw]
    if kind == "gzip-lines":
        parts = [gzip.compress(line, mtime=0) for line in lines]
    elif kind == "gzip":
        parts = [gzip.compress(raw, mtime=0)]
    elif kind == "gzip-concat":
        half = len(lines) // 2
        pad = b"\x00" * draw(st.integers(0, 3))
        parts = [gzip.compress(b"".join(lines[:half]), mtime=0) + pad, gzip.compress(b"".join(lines[half:]), mtime=0)]
    elif kind == "zstd":
        parts = [zstandard.ZstdCompressor().compress(raw)]
    elif kind == "zstd-frames":
        parts = [zstandard.ZstdCompressor().compress(line) for line in lines]
    elif kind == "bzip2":
        parts = [bz2.compress(raw)]
    else:
        half = len(lines) // 2
        parts = [bz2.compress(b"".join(lines[:half])), bz2.compress(b"".join(lines[half:]))]
    blob, how = _cut(draw, b"".join(parts), len(parts[-1]))
    return seed.then(f"{kind} {how}", blob)


# ------------------------------------------------------------------------------------------ hostile classes

INVALID_UTF8 = (
    b"\xff",
    b"\xfe\xff",
    b"\x80",
    b"\xc3\x28",
    b"\xc0\xaf",
    b"\xe2\x28\xa1",
    b"\xe2\x82",
    b"\xed\xa0\x80",  # an encoded surrogate (CESU-8)
    b"\xf0\x28\x8c\x28",
    b"\xf4\x90\x80\x80",
    b"\xf8\x88\x80\x80\x80",
)
BOM = b"\xef\xbb\xbf"
EMPTY_INPUTS = (b"", b" ", b"\n", b"\n\n\n", b" \t\r\n", b"\r\n" * 50, b"\x0b\x0c", BOM, BOM + b"\n  ", "", " \n")
WRONG_TOP_LEVEL = (
    b"0",
    b"-1",
    b"1.5",
    b"1e999",
    b"18446744073709551616",
    b'"storyline"',
    b'"\\ud800"',
    b"null",
    b"true",
    b"[]",
    b"{}",
    b"[1, 2, 3]",
    b"[null]",
    b"[[]]",
    b"[{}]",
    b"[[{}]]",
    b"1\n2\n3\n",
    b"[1]\n[2]\n",
    b'"a"\n"b"\n',
    b"null\nnull\n",
    b"{}\n{}\n",
    b"[]\n{}\n",
    b'{"session_steps": 1}',
    b'{"session_steps": null}',
    b'{"session_steps": [1, null, "x"]}',
    b'{"conversations": 1}',
    b'[{"conversations": 1}, 2]',
)
BOMBS = (
    "[" * 100_000,
    '{"a":' * 5000,
    "[" * 1025 + "]" * 1025,
    "[" * 1024 + "]" * 1024,
    "[" * 300 + "]" * 300,
    '{"a":' * 1024 + "1" + "}" * 1024,
    "]" * 1000,
    "[{" * 3000,
    "[" * 100_000 + "\n" + "{}",
)
BAD_LINES = (
    b"",
    b"{",
    b"}",
    b"[",
    b"not json",
    b"{}",
    b"[]",
    b"1",
    b'"x"',
    b"null",
    b"NaN",
    b'{"a": NaN}',
    b'{"a": 1e400}',
    b"\xff\xfe",
    b"\x00",
    b'{"a": "\\ud800"}',
    b"[" * 2000,
    b'{"a": 18446744073709551616}',
)


def _string_starts(raw: bytes) -> list[int]:
    """Positions just inside the opening quote of JSON string values (``": "``), at most a few thousand."""
    return [m.end() for m in itertools.islice(re.finditer(rb'":\s*"', raw), 3000)]


@st.composite
def _in_string(draw: st.DrawFn, seed: FuzzInput, blobs: tuple[bytes, ...], name: str) -> FuzzInput:
    raw = seed.raw
    spots = _string_starts(raw) or [0]
    p = _pick(draw, spots)
    blob = draw(st.sampled_from(blobs))
    return seed.then(f"{name}@{p}:{blob!r}", raw[:p] + blob + raw[p:])


@st.composite
def _jsonl_one_bad_line(draw: st.DrawFn, seed: FuzzInput) -> FuzzInput:
    _, lines = _parse_lines(seed.raw)
    good = [orjson.dumps(v) if not isinstance(v, Raw) else v.text.encode() for v in lines]
    good = [g for g in good if g.strip()]
    if len(good) < 2:
        good = good * 3  # a single document repeated: JSON Lines of three
    i = draw(st.integers(0, len(good)))
    bad = draw(st.one_of(st.sampled_from(BAD_LINES), st.binary(max_size=40)))
    lines_out = [*good[:i], bad, *good[i:]]
    sep = draw(st.sampled_from([b"\n", b"\r\n", b"\n\n"]))
    return seed.then(f"one-bad-line@{i}:{bad[:20]!r}", sep.join(lines_out) + sep)


@st.composite
def hostile(draw: st.DrawFn, fmt: str) -> FuzzInput:
    """One input of a hostile class (the class is the first word of the label)."""
    kind = draw(
        st.sampled_from(
            [
                "invalid-utf8",
                "bom",
                "surrogate-escaped",
                "surrogate-str",
                "nan",
                "big-int",
                "number-string",
                "bomb",
                "bomb-inside",
                "long-string",
                "empty",
                "top-level",
                "jsonl-one-bad",
            ]
        )
    )
    seeds = valid_inputs(fmt)
    if kind == "empty":
        return FuzzInput("empty", draw(st.sampled_from(EMPTY_INPUTS)))
    if kind == "top-level":
        return FuzzInput("top-level", draw(st.sampled_from(WRONG_TOP_LEVEL)))
    if kind == "bomb":
        text = draw(st.sampled_from(BOMBS))
        return FuzzInput(f"bomb:{text[:12]}…{len(text)}", text if draw(st.booleans()) else text.encode())
    seed = draw(seeds)
    if kind == "invalid-utf8":
        return draw(_in_string(seed, INVALID_UTF8, "invalid-utf8"))
    if kind == "bom":
        raw = seed.raw
        where = draw(st.sampled_from(["start", "twice", "every-line", "middle"]))
        if where == "start":
            data = BOM + raw
        elif where == "twice":
            data = BOM + BOM + raw
        elif where == "every-line":
            data = b"".join(BOM + line for line in raw.splitlines(keepends=True))
        else:
            p = draw(st.integers(0, len(raw)))
            data = raw[:p] + BOM + raw[p:]
        return seed.then(f"bom-{where}", data)
    if kind == "surrogate-escaped":
        return draw(_in_string(seed, (b"\\ud800", b"\\udfff", b"\\udc00\\ud800", b"\\ud800\\u0041"), "surrogate"))
    if kind == "surrogate-str":
        text = seed.raw.decode("utf-8", "replace")
        spots = [m.end() for m in itertools.islice(re.finditer(r'":\s*"', text), 3000)] or [0]
        p = _pick(draw, spots)
        return seed.then(
            f"surrogate-str@{p}", text[:p] + draw(st.sampled_from(["\ud800", "\udfff", "a\udc80"])) + text[p:]
        )
    if kind == "nan":
        return draw(json_mutated(st.just(seed), ops=("replace",), values=HOSTILE_VALUES[:5]))
    if kind == "big-int":
        values = (*HOSTILE_VALUES[5:11], -(2**70), 2**70, 2**64, -(2**63) - 1)
        return draw(json_mutated(st.just(seed), ops=("replace",), values=values))
    if kind == "number-string":
        return draw(json_mutated(st.just(seed), ops=("replace",), values=("1", "-1", "0", "1.5", "1e5", "-0", "42")))
    if kind == "bomb-inside":
        return draw(
            json_mutated(st.just(seed), ops=("replace",), values=tuple(v for v in HOSTILE_VALUES if _is_deep(v)))
        )
    if kind == "long-string":
        values = (
            "x" * 1_000_000,
            "é" * 300_000,
            "\\" * 200_000,
            '"' * 100_000,
            "\x00" * 100_000,
            "<tool_call>" * 50_000,
        )
        return draw(json_mutated(st.just(seed), ops=("replace",), values=values, max_ops=1))
    return draw(_jsonl_one_bad_line(seed))


def _is_deep(value: Any) -> bool:
    return isinstance(value, Raw) and value.text[:2] in ("[[", '{"')


# ------------------------------------------------------------------------------------------ random JSON

_KEYS = sorted(
    {
        *ROOT.fields,
        *TURN.fields,
        *TOOL_CALL.fields,
        "session_id",
        "step_id",
        "messages",
        "response",
        "role",
        "content",
        "tool_call_id",
        "function",
        "name",
        "arguments",
        "meta_json",
        "env_state",
        "session_steps",
        "conversations",
        "from",
        "value",
        "_storyline",
        "version",
        "sources",
        "fields",
        "source_document_id",
        *openai_msg.RUN_KEYS,
        *openai_msg.ROW_METRICS,
        *openai_msg.ENV_STATE_METRICS,
        *openai_msg.EMPTY_ROW_KEYS,
        *openai_msg.EMPTY_MSG_KEYS,
        *openai_msg.REASONING_KEYS,
        "timestamp",
        "completed",
        "partial",
        "api_calls",
        "toolsets_used",
        "metadata",
    }
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**63), max_value=2**64 - 1),
    st.sampled_from([*AWKWARD_INTS, 2**64, -(2**63) - 1, 2**70]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(AWKWARD_FLOATS),
    TEXT,
    TAGGED_TEXT,
    st.sampled_from(AWKWARD_STRINGS),
    st.sampled_from(["storyline/v1", "user", "agent", "assistant", "tool", "system", "human", "gpt", "function"]),
)
KEYS = st.one_of(st.sampled_from(_KEYS), TEXT)
JSON = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=5), max_leaves=20
)


def _jsonl(values: list[Any], ascii_: bool) -> bytes:
    return "".join(render(v, ensure_ascii=ascii_) + "\n" for v in values).encode("utf-8")


@st.composite
def random_json_inputs(draw: st.DrawFn) -> FuzzInput:
    """Random JSON as a whole file: one value (maybe pretty-printed), or JSON Lines of values."""
    ascii_ = draw(st.booleans())
    if draw(st.booleans()):
        return FuzzInput(
            "random-json", render(draw(JSON), ensure_ascii=ascii_, indent=draw(st.sampled_from([None, 2]))).encode()
        )
    return FuzzInput("random-jsonl", _jsonl(draw(st.lists(JSON, min_size=1, max_size=4)), ascii_))


def _maybe(draw: st.DrawFn, valid: st.SearchStrategy) -> Any:
    """Mostly a valid-looking value, sometimes random JSON."""
    return draw(st.one_of(valid, valid, JSON))


@st.composite
def _random_message(draw: st.DrawFn) -> Any:
    msg: dict[str, Any] = {"role": _maybe(draw, st.sampled_from(["system", "user", "assistant", "tool", "developer"]))}
    msg["content"] = _maybe(
        draw, st.one_of(TAGGED_TEXT, st.lists(st.fixed_dictionaries({"type": st.just("text"), "text": TEXT})))
    )
    if draw(st.booleans()):
        call = {"id": _maybe(draw, st.sampled_from(["call_1", "call_2", ""])), "type": "function"}
        call["function"] = _maybe(
            draw,
            st.fixed_dictionaries(
                {"name": st.sampled_from(TOOL_NAMES), "arguments": st.one_of(TEXT, st.just('{"a": 1}'), JSON)}
            ),
        )
        msg["tool_calls"] = _maybe(draw, st.just([call]))
    if draw(st.booleans()):
        msg["tool_call_id"] = _maybe(draw, st.sampled_from(["call_1", "call_2"]))
    msg.update(draw(st.dictionaries(KEYS, JSON, max_size=2)))
    return msg


@st.composite
def _random_row(draw: st.DrawFn) -> Any:
    row: dict[str, Any] = {
        "session_id": _maybe(draw, st.sampled_from(["s1", "s2"])),
        "step_id": _maybe(draw, st.integers(1, 4)),
        "messages": _maybe(draw, st.lists(_random_message(), max_size=4)),
        "response": _maybe(draw, _random_message()),
    }
    row.update(draw(st.dictionaries(st.sampled_from(_KEYS), JSON, max_size=4)))
    if draw(st.booleans()):
        row["meta_json"] = _maybe(draw, st.fixed_dictionaries({"env_state": st.dictionaries(KEYS, JSON, max_size=4)}))
    for key in [k for k in row if draw(st.integers(0, 9)) == 0]:
        del row[key]
    return row


@st.composite
def _random_turn(draw: st.DrawFn, i: int) -> Any:
    turn: dict[str, Any] = {"id": _maybe(draw, st.just(i)), "src": _maybe(draw, st.sampled_from(["user", "agent"]))}
    turn["msg"] = draw(JSON)
    turn.update(draw(st.dictionaries(st.sampled_from(sorted(TURN.fields)), JSON, max_size=3)))
    return turn


@st.composite
def _random_document(draw: st.DrawFn) -> Any:
    doc: dict[str, Any] = {
        "schema_version": _maybe(draw, st.just("storyline/v1")),
        "session": _maybe(draw, st.sampled_from(["s1", "s/../2"])),
        "agent": _maybe(draw, st.fixed_dictionaries({"id": st.just("a")})),
        "turns": [draw(_random_turn(i)) for i in range(1, draw(st.integers(0, 3)) + 1)],
    }
    doc.update(draw(st.dictionaries(st.sampled_from(sorted(ROOT.fields)), JSON, max_size=3)))
    return doc


@st.composite
def _random_sharegpt(draw: st.DrawFn) -> Any:
    element = st.fixed_dictionaries(
        {
            "from": st.one_of(st.sampled_from(["system", "human", "gpt", "tool", "function"]), JSON),
            "value": st.one_of(TAGGED_TEXT, JSON),
        }
    )
    conv = draw(st.lists(st.one_of(element, element, element, JSON), max_size=5))
    if draw(st.integers(0, 4)) == 0:
        return conv
    record: dict[str, Any] = {"conversations": _maybe(draw, st.just(conv))}
    record.update(draw(st.dictionaries(st.sampled_from(_KEYS), JSON, max_size=4)))
    return record


@st.composite
def random_records(draw: st.DrawFn, fmt: str) -> FuzzInput:
    """Documents, rows or records of ``fmt`` with the format's own keys holding random (or valid) values."""
    if fmt == "auto":
        fmt = draw(st.sampled_from(FORMATS))
    one = {"storyline": _random_document, "openai-msg": _random_row, "sharegpt": _random_sharegpt}[fmt]
    values = draw(st.lists(one(), min_size=1, max_size=4))
    ascii_ = draw(st.booleans())
    if fmt == "openai-msg" and draw(st.booleans()):
        shape = draw(st.sampled_from(["array", "envelope"]))
        whole = (
            values if shape == "array" else {"session_steps": values, **draw(st.dictionaries(TEXT, JSON, max_size=2))}
        )
        return FuzzInput(f"random-{fmt}-{shape}", render(whole, ensure_ascii=ascii_).encode())
    if len(values) == 1 and draw(st.booleans()):
        return FuzzInput(f"random-{fmt}-one", render(values[0], ensure_ascii=ascii_, indent=2).encode())
    return FuzzInput(f"random-{fmt}-jsonl", _jsonl(values, ascii_))


# ------------------------------------------------------------------------------------------ everything mixed


def every_input(fmt: str) -> st.SearchStrategy[FuzzInput]:
    """Every class above, for one reader: valid, mutated (bytes and JSON), compressed, hostile, random."""
    seeds = valid_inputs(fmt)
    plain = st.one_of(
        byte_mutated(seeds),
        json_mutated(seeds),
        wrong_typed(fmt),
        hostile(fmt),
        random_json_inputs(),
        random_records(fmt),
    )
    return st.one_of(seeds, plain, plain, compressed(st.one_of(seeds, plain)))


def builder_inputs(fmt: str) -> st.SearchStrategy[FuzzInput]:
    """Files for the builder: mostly mutated valid inputs (so some records load), some compressed."""
    seeds = valid_inputs(fmt)
    mutated = st.one_of(byte_mutated(seeds), json_mutated(seeds), hostile(fmt).filter(lambda x: x.label != "empty"))
    return st.one_of(seeds, mutated, mutated, compressed(st.one_of(seeds, mutated)))


# ------------------------------------------------------------------------------------------ big inputs


def big_inputs(mb: int = 3) -> list[tuple[str, bytes]]:
    """A few inputs of ``mb`` MB or more each (valid and not), for the memory and time bounds."""
    size = mb * 1_000_000
    text = ("é" * (size // 4)) + ("a" * (size // 2))
    doc = {
        "schema_version": "storyline/v1",
        "session": "big",
        "agent": {"id": "a"},
        "turns": [
            {"id": 1, "src": "user", "msg": text},
            {"id": 2, "src": "agent", "msg": "ok", "tool_calls": [{"tcid": "c", "fn": "f", "args": {"x": text}}]},
        ],
    }
    row1 = {
        "session_id": "s",
        "step_id": 1,
        "messages": [{"role": "user", "content": text}],
        "response": {"role": "assistant", "content": "<tool_call>" * (size // 22) + text[: size // 2]},
    }
    row2 = {
        "session_id": "s",
        "step_id": 2,
        "messages": [*row1["messages"], row1["response"], {"role": "user", "content": "again"}],
        "response": {"role": "assistant", "content": "done"},
    }
    record = {
        "conversations": [
            {"from": "human", "value": text},
            {"from": "gpt", "value": "<think>" * (size // 14) + "<tool_call>" * (size // 22)},
        ]
    }
    return [
        ("storyline", orjson.dumps(doc)),
        ("openai-msg", orjson.dumps(row1) + b"\n" + orjson.dumps(row2) + b"\n"),
        ("sharegpt", orjson.dumps(record) + b"\n"),
        ("auto", b"[" + b"1.5," * (size // 4) + b"1]"),
        ("storyline", b'{"a": "' + b"x" * size),  # truncated in a long string
        ("sharegpt", b"\n".join([b'{"conversations": []}'] + [b"x" * 1000] * (size // 1000))),  # many bad lines
    ]
