"""The training map functions ``to_sharegpt`` and ``to_messages`` (issue 4, ``docs/formats/sharegpt.md``).

Both take a Storyline document or a dataset row of ``STORYLINE_FEATURES`` and must give the same result either
way, directly or through ``ds.map`` (batched or not), without changing their input; a malformed row raises a
``PchronicleError`` with a pointer. ``to_messages`` gives the conversational tool-calling shape of TRL and chat
templates; it must survive ``datasets`` without merged argument keys or null filling
(``../shared/notes/training-stack.md``).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
from datasets import Dataset

import pchronicle_datasets as pc
from pchronicle_datasets import PchronicleError
from tests.goldens import replay

DATA = Path(__file__).resolve().parent / "data" / "sharegpt"
EMPTY = "<think>\n</think>\n"


def load(name: str) -> Any:
    return json.loads((DATA / name).read_text(encoding="utf-8"))


def doc(session: str, turns: list[dict[str, Any]], tools: Any = None) -> dict[str, Any]:
    agent: dict[str, Any] = {"id": "a"}
    if tools is not None:
        agent["tools"] = tools
    story = {"schema_version": "storyline/v1", "session": session, "agent": agent}
    story["turns"] = [{"id": i + 1, **turn} for i, turn in enumerate(turns)]
    pc.validate(story)
    return story


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "weather",
        "description": "Weather of a city",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "required": None,  # the artifact of the reference's system prompt
    },
}
ADD_TOOL = {"name": "add", "description": "Add", "parameters": {"type": "object", "properties": {"a": {}, "b": {}}}}

WEATHER = doc(
    "weather",
    [
        {"src": "system", "msg": "Be brief."},
        {"src": "user", "msg": "Weather in Zürich?"},
        {
            "src": "agent",
            "msg": None,
            "reason": "Call the tool.",
            "tool_calls": [{"tcid": "c1", "fn": "weather", "args": {"city": "Zürich", "unit": "C"}}],
        },
        {
            "src": "agent",
            "msg": "12°C.",
            "observation": {"results": [{"source_call_id": "c1", "content": {"t": 12, "unit": "C"}}]},
        },
    ],
    tools=[WEATHER_TOOL],
)
ADD = doc(
    "add",
    [
        {"src": "user", "msg": [{"type": "text", "text": "5+33 and 0.5+1?"}]},
        {
            "src": "agent",
            "msg": "Adding.",
            "tool_calls": [
                {"tcid": "k1", "fn": "add", "args": {"a": 5, "b": 33}, "result": "38"},
                {"tcid": "k2", "fn": "add", "args": {"a": 0.5, "b": 1, "note": None}, "result": "1.5"},
            ],
        },
        {"src": "agent", "msg": 42},
        {"src": "user", "msg": "42"},
    ],
    tools=[ADD_TOOL],
)
PLAIN = doc("plain", [{"src": "user", "msg": "hi"}, {"src": "agent", "msg": "hello", "reason": "greet"}])
STORIES = [
    WEATHER,
    ADD,
    PLAIN,
    replay(load("ex1_reasoning.input.json")),
    replay(load("ex2_parallel_tools.input.json")),
    replay(load("ex3_plain.input.json")),
    pc.into_storyline("sharegpt", json.dumps(load("ex2_parallel_tools.batch_record.json")))[0],
]
FUNCTIONS = [pc.to_sharegpt, pc.to_messages]
MESSAGES = {"features": pc.MESSAGES_FEATURES}  # the documented ds.map usage of to_messages


def dataset(stories: list[dict[str, Any]]) -> Dataset:
    return Dataset(pc.rows_to_table([pc.story_to_row(s) for s in stories]))


def causes(exc: BaseException) -> list[BaseException]:
    """The exception and everything it was raised from or during, in order."""
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__  # type: ignore[assignment]
    return seen


# -------------------------------------------------------------------------------- documents and rows


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_documents_rows_and_dataset_rows_give_the_same_result(fn):
    ds = dataset(STORIES)
    for i, story in enumerate(STORIES):
        direct = fn(story)
        assert fn(pc.story_to_row(story)) == direct
        assert fn(ds[i]) == direct


@pytest.mark.parametrize("name", ["ex1_reasoning", "ex2_parallel_tools", "ex3_plain"])
def test_to_sharegpt_of_a_dataset_row_is_the_reference_output(name):
    story = replay(load(f"{name}.input.json"))
    want = load(f"{name}.conversations.json")
    ds = dataset([story])
    assert pc.to_sharegpt(ds[0]) == {"conversations": want}
    mapped = ds.map(pc.to_sharegpt, remove_columns=ds.column_names)
    assert mapped[0] == {"conversations": want}
    got = json.dumps(mapped[0]["conversations"], ensure_ascii=False)
    assert got == json.dumps(want, ensure_ascii=False)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_ds_map_equals_calling_the_function(fn):
    ds = dataset(STORIES)
    direct = [fn(s) for s in STORIES]
    plain = ds.map(fn, remove_columns=ds.column_names)
    batched = ds.map(fn, batched=True, batch_size=2, remove_columns=ds.column_names)  # a partial last batch too
    assert plain.to_list() == direct
    assert batched.to_list() == direct
    assert [plain[i] for i in range(len(ds))] == direct
    # kept next to the document columns
    alongside = ds.map(fn)
    for key in direct[0]:
        assert alongside[key] == [d[key] for d in direct]
    # a whole batch given directly
    batch = ds[:3]
    out = fn(batch)
    assert {k: v for k, v in out.items()} == {k: [d[k] for d in direct[:3]] for k in direct[0]}


def test_options_through_ds_map():
    ds = dataset(STORIES)
    options = {"empty_think": False, "keep_system_prompt": True, "drop_copied": True}
    direct = [pc.to_sharegpt(s, **options) for s in STORIES]
    assert ds.map(pc.to_sharegpt, fn_kwargs=options, remove_columns=ds.column_names).to_list() == direct
    assert (
        ds.map(pc.to_sharegpt, fn_kwargs=options, batched=True, batch_size=2, remove_columns=ds.column_names).to_list()
        == direct
    )
    direct = [pc.to_messages(s, drop_copied=True, arguments="object") for s in STORIES]
    mapped = ds.map(
        pc.to_messages, fn_kwargs={"drop_copied": True}, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES
    )
    assert [pc.decode_messages(row) for row in mapped] == direct


def test_values_stay_strings_through_datasets():
    """Numbers, nulls and content parts are rendered as text: no "42" turned into 42 in the same batch."""
    ds = dataset([ADD, PLAIN])
    for mapped in (
        ds.map(pc.to_sharegpt, remove_columns=ds.column_names),
        ds.map(pc.to_sharegpt, batched=True, batch_size=2, remove_columns=ds.column_names),
    ):
        values = [c["value"] for row in mapped for c in row["conversations"]]
        assert all(type(v) is str for v in values)
        conversation = mapped[0]["conversations"]
        assert conversation[1] == {"from": "human", "value": "5+33 and 0.5+1?"}
        assert conversation[4] == {"from": "gpt", "value": EMPTY + "42"}
        assert conversation[5] == {"from": "human", "value": "42"}
    messages = ds.map(pc.to_messages, remove_columns=ds.column_names)[0]["messages"]
    assert [m["content"] for m in messages if m["role"] != "tool"] == ["5+33 and 0.5+1?", "Adding.", "42", "42"]


# ----------------------------------------------------------------------------------------- no mutation


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_inputs_are_never_mutated(fn):
    ds = dataset(STORIES)
    for i, story in enumerate(STORIES):
        for example in (story, pc.story_to_row(story), ds[i]):
            before = copy.deepcopy(example)
            out = fn(example)
            assert example == before
            # changing the output does not reach back into the input
            json.dumps(out)  # JSON-serialisable
            for value in out.values():
                if isinstance(value, list) and value and isinstance(value[0], dict):
                    value[0].clear()
            assert example == before
    batch = ds[:4]
    before = copy.deepcopy(batch)
    fn(batch)
    assert batch == before
    sharegpt_options = {
        "keep_system_prompt": True,
        "empty_think": False,
        "drop_copied": True,
        "keep_invalid_args": True,
    }
    options = sharegpt_options if fn is pc.to_sharegpt else {"drop_copied": True}
    for story in STORIES:
        before = copy.deepcopy(story)
        fn(story, **options)
        assert story == before


# ---------------------------------------------------------------------------------------- malformed rows


def _bad_rows() -> dict[str, tuple[dict[str, Any], str]]:
    good = pc.story_to_row(WEATHER)
    not_json = copy.deepcopy(good)
    not_json["turns"][1]["msg"] = "not JSON text"
    no_session = copy.deepcopy(good)
    no_session["session"] = None
    no_msg = copy.deepcopy(good)
    no_msg["turns"][1]["msg"] = None
    bad_args = copy.deepcopy(good)
    bad_args["turns"][2]["tool_calls"][0]["args"] = "{unclosed"
    return {
        "msg not JSON text": (not_json, "/turns/1/msg"),
        "missing session": (no_session, "/session"),
        "missing msg": (no_msg, "/turns/1/msg"),
        "args not JSON text": (bad_args, "/turns/2/tool_calls/0/args"),
    }


BAD = _bad_rows()


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_malformed_row_raises_with_a_pointer(fn, case):
    row, pointer = BAD[case]
    with pytest.raises(PchronicleError) as info:
        fn(row)
    assert info.value.pointer == pointer
    assert pointer in str(info.value)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("case", ["missing msg", "msg not JSON text"])
@pytest.mark.parametrize("batched", [False, True])
def test_a_malformed_row_through_ds_map(fn, case, batched):
    """datasets may wrap the error: a PchronicleError is in the cause chain, with the pointer of a direct call."""
    row, _ = BAD[case]
    with pytest.raises(PchronicleError) as direct:
        fn(row)
    ds = Dataset(pc.rows_to_table([pc.story_to_row(PLAIN), row]))
    with pytest.raises(Exception) as info:
        ds.map(fn, batched=batched, batch_size=2, remove_columns=ds.column_names)
    found = [e for e in causes(info.value) if isinstance(e, PchronicleError)]
    assert found, f"no PchronicleError in the cause chain of {info.value!r}"
    assert (type(found[0]), found[0].pointer) == (type(direct.value), direct.value.pointer)


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_document_without_session_raises_with_a_pointer(fn):
    story = copy.deepcopy(PLAIN)
    del story["session"]
    with pytest.raises(PchronicleError) as info:
        fn(story)
    assert info.value.pointer == "/session"


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_a_document_with_an_empty_function_name_raises_with_a_pointer(fn):
    story = copy.deepcopy(WEATHER)
    story["turns"][2]["tool_calls"][0]["fn"] = ""
    with pytest.raises(PchronicleError) as info:
        fn(story)
    assert info.value.pointer == "/turns/2/tool_calls/0/fn"


# ----------------------------------------------------------------------------------------- to_messages


def test_to_messages_shape():
    out = pc.to_messages(WEATHER, arguments="object")
    assert list(out) == ["messages", "tools"]
    assert out["messages"] == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Zürich?"},
        {
            "role": "assistant",
            "content": "",
            "reasoning_content": "Call the tool.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": {"city": "Zürich", "unit": "C"}},
                }
            ],
        },
        {"role": "tool", "name": "weather", "tool_call_id": "c1", "content": '{"t": 12, "unit": "C"}'},
        {"role": "assistant", "content": "12°C."},
    ]
    assert out["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "weather",
                "description": "Weather of a city",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
            },
        }
    ]


def test_to_messages_bare_tools_wrapped_and_results_on_the_call():
    out = pc.to_messages(ADD, arguments="object")
    assert out["tools"] == [{"type": "function", "function": ADD_TOOL}]
    assert out["messages"][1:4] == [
        {
            "role": "assistant",
            "content": "Adding.",
            "tool_calls": [
                {"id": "k1", "type": "function", "function": {"name": "add", "arguments": {"a": 5, "b": 33}}},
                {
                    "id": "k2",
                    "type": "function",
                    "function": {"name": "add", "arguments": {"a": 0.5, "b": 1, "note": None}},
                },
            ],
        },
        {"role": "tool", "name": "add", "tool_call_id": "k1", "content": "38"},
        {"role": "tool", "name": "add", "tool_call_id": "k2", "content": "1.5"},
    ]


def test_to_messages_of_the_reference_example():
    story = replay(load("ex2_parallel_tools.input.json"))
    out = pc.to_messages(story, arguments="object")
    assert out["tools"] == load("ex2_parallel_tools.input.json")["tools"]
    assert out["messages"] == [
        {"role": "system", "content": "ignored by hermes"},
        {"role": "user", "content": "Find the weather in Zürich and read notes.txt"},
        {
            "role": "assistant",
            "content": "Let me check both.",
            "reasoning_content": "I need two tools in parallel.",
            "tool_calls": [
                {
                    "id": "call_A",
                    "type": "function",
                    "function": {"name": "web_search", "arguments": {"query": "weather Zürich"}},
                },
                {
                    "id": "call_B",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": {"path": "notes.txt", "offset": 0}},
                },
            ],
        },
        {
            "role": "tool",
            "name": "web_search",
            "tool_call_id": "call_A",
            "content": '{"results": [{"title": "Zürich: 12°C", "url": "https://example.com"}], "error": null}',
        },
        {"role": "tool", "name": "read_file", "tool_call_id": "call_B", "content": '  ["line 1", "line 2"]'},
        {"role": "assistant", "content": "It is 12°C in Zürich; notes.txt has 2 lines."},
    ]
    assert pc.to_messages(story, drop_copied=True, arguments="object")["messages"][0]["role"] == "user"


def test_to_messages_names_results_through_the_call_id():
    story = doc(
        "order",
        [
            {
                "src": "agent",
                "msg": "",
                "tool_calls": [
                    {"tcid": "c_A", "fn": "web_search", "args": {"q": "x"}},
                    {"tcid": "c_B", "fn": "read_file", "args": {"p": "y"}},
                ],
            },
            {
                "src": "agent",
                "msg": "ok",
                "observation": {
                    "results": [
                        {"source_call_id": "c_B", "content": "notes"},
                        {"source_call_id": "c_A", "content": "sunny"},
                    ]
                },
            },
        ],
    )
    tools = [
        (m["name"], m["tool_call_id"], m["content"])
        for m in pc.to_messages(story, arguments="object")["messages"]
        if m["role"] == "tool"
    ]
    assert tools == [("read_file", "c_B", "notes"), ("web_search", "c_A", "sunny")]


def _check_chat_shape(out: dict[str, Any]) -> None:
    """What a chat template relies on: roles, string contents, object arguments, tools after their call."""
    messages = out["messages"]
    open_calls: dict[str, str] = {}
    for k, message in enumerate(messages):
        assert message["role"] in ("system", "user", "assistant", "tool")
        assert type(message["content"]) is str
        if message["role"] == "assistant":
            open_calls = {}
            for call in message.get("tool_calls", []):
                assert set(call) == {"id", "type", "function"} and call["type"] == "function"
                assert set(call["function"]) == {"name", "arguments"}
                assert isinstance(call["function"]["arguments"], dict)
                open_calls[call["id"]] = call["function"]["name"]
            if "reasoning_content" in message:
                assert type(message["reasoning_content"]) is str
        elif message["role"] == "tool":
            assert set(message) == {"role", "name", "tool_call_id", "content"}
            assert messages[k - 1]["role"] in ("assistant", "tool")
            assert open_calls.get(message["tool_call_id"]) == message["name"]
        else:
            assert set(message) == {"role", "content"}
            open_calls = {}
    for tool in out["tools"]:
        assert tool["type"] == "function" and isinstance(tool["function"]["name"], str)
        assert "required" not in tool["function"] or tool["function"]["required"] is not None


@pytest.mark.parametrize("index", range(len(STORIES)))
def test_to_messages_has_the_chat_template_shape(index):
    _check_chat_shape(pc.to_messages(STORIES[index], arguments="object"))


def test_different_argument_keys_survive_datasets():
    """Rows whose arguments (and tool schemas) have different keys: no merged keys, no nulls filled in."""
    stories = [WEATHER, ADD]
    direct = [pc.to_messages(s, arguments="object") for s in stories]
    ds = dataset(stories)
    for rows in (
        [pc.decode_messages(r) for r in ds.map(pc.to_messages, remove_columns=ds.column_names, **MESSAGES)],
        [
            pc.decode_messages(r)
            for r in ds.map(pc.to_messages, batched=True, batch_size=2, remove_columns=ds.column_names, **MESSAGES)
        ],
        Dataset.from_list(direct, on_mixed_types="use_json").to_list(),
    ):
        assert rows == direct
        arguments = [c["function"]["arguments"] for r in rows for m in r["messages"] for c in m.get("tool_calls", [])]
        assert arguments == [{"city": "Zürich", "unit": "C"}, {"a": 5, "b": 33}, {"a": 0.5, "b": 1, "note": None}]
        assert [list(r["tools"][0]["function"]) for r in rows] == [
            ["name", "description", "parameters"],
            ["name", "description", "parameters"],
        ]
        assert rows[1]["tools"][0]["function"]["parameters"] == ADD_TOOL["parameters"]  # no "required": None added
    sharegpt = [pc.to_sharegpt(s) for s in stories]
    assert Dataset.from_list(sharegpt, on_mixed_types="use_json").to_list() == sharegpt


def test_json_floats_stay_exact_through_datasets():
    """Arguments are JSON text in ``MESSAGES_FEATURES`` (``output_features``): no ``Json`` decoder rounds them.
    (Issue 12 changed this: with inferred ``Json`` types, 2.5e-05 could read back as 2.4999999999999998e-05.)"""
    story = doc("f", [{"src": "agent", "msg": "", "tool_calls": [{"tcid": "c", "fn": "f", "args": {"x": 2.5e-05}}]}])
    args = pc.to_messages(story, arguments="object")["messages"][0]["tool_calls"][0]["function"]["arguments"]
    assert args == {"x": 2.5e-05}
    ds = dataset([story, ADD])
    mapped = ds.map(pc.to_messages, remove_columns=ds.column_names, **MESSAGES)
    x = pc.decode_messages(mapped[0])["messages"][0]["tool_calls"][0]["function"]["arguments"]["x"]
    assert repr(x) == "2.5e-05"
    # to_sharegpt writes text, so nothing is rounded there
    text = ds.map(pc.to_sharegpt, remove_columns=ds.column_names)[0]["conversations"][1]["value"]
    assert '"arguments": {"x": 2.5e-05}' in text


# ------------------------------------------------------------------------------------------ chat template

HERMES_TEMPLATE = (
    "{%- if tools %}<|im_start|>system\n<tools>\n{{ tools | tojson }}\n</tools><|im_end|>\n{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.role == 'tool' %}<|im_start|>tool\n<tool_response>\n{{ message.content }}\n</tool_response>"
    "<|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}"
    "{%- for call in message.tool_calls or [] %}\n<tool_call>\n"
    '{"name": "{{ call.function.name }}", "arguments": {{ call.function.arguments | tojson }}}\n</tool_call>'
    "{%- endfor %}<|im_end|>\n{%- endif %}"
    "{%- endfor %}"
)


def _render(out: dict[str, Any]) -> str:
    """The template above, without a template engine: what it gives when arguments are objects."""
    text = ""
    if out["tools"]:
        text += f"<|im_start|>system\n<tools>\n{json.dumps(out['tools'])}\n</tools><|im_end|>\n"
    for m in out["messages"]:
        if m["role"] == "tool":
            text += f"<|im_start|>tool\n<tool_response>\n{m['content']}\n</tool_response><|im_end|>\n"
            continue
        text += f"<|im_start|>{m['role']}\n{m['content']}"
        for call in m.get("tool_calls", []):
            name, arguments = call["function"]["name"], call["function"]["arguments"]
            assert isinstance(arguments, dict)  # a string would be rendered as a JSON string, double-encoded
            text += f'\n<tool_call>\n{{"name": "{name}", "arguments": {json.dumps(arguments)}}}\n</tool_call>'
        text += "<|im_end|>\n"
    return text


_CALL_BLOCK = re.compile(r"<tool_call>\n(.*?)\n</tool_call>", re.S)


def _calls_in(text: str) -> list[Any]:
    return [json.loads(block) for block in _CALL_BLOCK.findall(text)]


@pytest.mark.parametrize("index", range(len(STORIES)))
def test_rendered_messages_carry_the_same_tool_calls_as_to_sharegpt(index):
    """Template-free check: every call rendered from ``to_messages`` is the call ``to_sharegpt`` writes."""
    story = STORIES[index]
    out = pc.to_messages(story, arguments="object")
    rendered = _render(out)
    assert rendered.count("<|im_start|>") == len(out["messages"]) + (1 if out["tools"] else 0)
    conversations = pc.to_sharegpt(story)["conversations"]
    assert _calls_in(rendered) == [call for c in conversations if c["from"] == "gpt" for call in _calls_in(c["value"])]
    responses = sum(1 for m in out["messages"] if m["role"] == "tool")
    assert responses == sum(c["value"].count("<tool_response>") for c in conversations if c["from"] == "tool")


def test_chat_template_of_transformers():
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    backend = tokenizers.Tokenizer(tokenizers.models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tokenizer = transformers.PreTrainedTokenizerFast(tokenizer_object=backend, chat_template=HERMES_TEMPLATE)
    for story in STORIES:
        out = pc.to_messages(story, arguments="object")
        text = tokenizer.apply_chat_template(out["messages"], tools=out["tools"] or None, tokenize=False)
        assert text.count("<|im_start|>") == len(out["messages"]) + (1 if out["tools"] else 0)
        rendered_calls = _calls_in(text)
        assert rendered_calls == _calls_in(_render(out))
        assert all(isinstance(call["arguments"], dict) for call in rendered_calls)
