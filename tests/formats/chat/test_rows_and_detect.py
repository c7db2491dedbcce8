"""``pc.from_messages`` through a real ``datasets.Dataset`` (single and batched), detection of the chat
shapes against the other formats' files, the writer for documents of other formats, and bad input."""

from __future__ import annotations

from importlib.resources import files

import orjson
import pytest
from datasets import Dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.formats import detect

from .common import DATA, written_records

TRL = [
    {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "weather", "arguments": {"city": "Paris"}}}
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "name": "weather", "content": "sunny"},
            {"role": "assistant", "content": "Sunny."},
        ],
        "tools": '[{"type": "function", "function": {"name": "weather"}}]',
        "source": "synthetic",
    },
    {
        "messages": [
            {"role": "user", "content": "3+5?"},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": "c2", "type": "function", "function": {"name": "add", "arguments": {"a": 3, "b": 5}}}
                ],
            },
            {"role": "tool", "tool_call_id": "c2", "name": "add", "content": "8"},
        ],
        "tools": "[]",
        "source": "synthetic",
    },
]


@pytest.mark.parametrize("batched", [False, True])
def test_from_messages_through_datasets_map(batched):
    ds = Dataset.from_list(TRL, on_mixed_types="use_json")
    out = ds.map(pc.from_messages, batched=batched, remove_columns=ds.column_names, features=pc.STORYLINE_FEATURES)
    assert out.features == pc.STORYLINE_FEATURES
    stories = [pc.row_to_story(row) for row in out]
    for story in stories:
        pc.validate(story)
    # arguments with different keys stay apart (no merged structs filled with nulls)
    assert [s["turns"][1]["tool_calls"][0]["args"] for s in stories] == [{"city": "Paris"}, {"a": 3, "b": 5}]
    assert stories[0]["turns"][1]["observation"]["results"] == [{"content": "sunny", "source_call_id": "c1"}]
    # tools given as a JSON string (as TRL takes them) are the tool schemas; the exact string stays as residual
    assert stories[0]["agent"]["tools"] == orjson.loads(TRL[0]["tools"])
    # removed columns are kept as residual: nothing is lost
    assert stories[0]["unknown_fields"]["sources"]["chat"]["fields"] == {
        "/source": "synthetic",
        "/tools": TRL[0]["tools"],
    }
    assert stories[0]["session"].startswith("chat-") and stories[0]["session"] != stories[1]["session"]
    direct = [pc.row_to_story(pc.from_messages(example)) for example in TRL]
    assert direct == stories


def test_from_messages_reads_arrow_null_keys_as_absent():
    example = {"messages": [{"role": "user", "content": "hi", "tool_calls": None, "name": None}], "id": "x"}
    story = pc.row_to_story(pc.from_messages(example))
    assert story["session"] == "x" and story["unknown_fields"]["sources"]["chat"]["fields"] == {}


def test_writer_for_other_formats_gives_the_to_messages_shape():
    sample = files("pchronicle_datasets") / "samples" / "openai_msg" / "gateway_capture.jsonl"
    stories = pc.into_storyline("openai-msg", sample.read_bytes(), document_id="gateway_capture.jsonl")
    records = written_records(pc.from_storyline("chat", stories))
    for story, record in zip(stories, records, strict=True):
        rendered = pc.to_messages(story, keep_invalid_args=True, arguments="object")
        assert record["messages"] == rendered["messages"] and record["tools"] == rendered["tools"]
        assert record["id"] == story["session"]
        assert record["_storyline"]["unknown_fields"]["sources"] == story["unknown_fields"]["sources"]
    # and it reads back as chat, carrying the gateway residual
    back = pc.into_storyline("auto", pc.from_storyline("chat", stories), document_id="x.jsonl")
    assert [s["unknown_fields"]["sources"]["openai-msg"] for s in back] == [
        s["unknown_fields"]["sources"]["openai-msg"] for s in stories
    ]


@pytest.mark.parametrize(
    "sample",
    [
        "openai_msg/gateway_capture.jsonl",
        "openai_msg/gateway_capture_envelope.json",
        "sharegpt/batch_0_output.jsonl",
        "sharegpt/trajectory_samples.jsonl",
        "storyline/harbor_goldens.storyline.jsonl",
    ],
)
def test_chat_does_not_claim_other_formats(sample):
    data = (files("pchronicle_datasets") / "samples" / sample).read_bytes()
    assert detect(data).NAME != "chat"


@pytest.mark.parametrize(
    "text",
    [
        b'{"messages": [{"role": "user", "content": "from value"}], "conversations": []}',
        b'[{"role": "user", "content": "hi"}]',
        b'{"conversations": [{"role": "user", "content": "hi"}], "tool_definitions": []}',
    ],
)
def test_chat_shapes_are_detected_even_when_bytes_look_like_sharegpt(text):
    assert detect(text).NAME == "chat"


def test_aliases_and_contract():
    chat = pc.formats.get_format("openai-chat")
    assert chat is pc.formats.get_format("messages")
    assert (chat.NAME, chat.EXTENSION, chat.OUTPUT) == ("chat", ".jsonl", "file")


@pytest.mark.parametrize(
    ("text", "pointer", "line"),
    [
        (b'{"messages": [{"role": "user", "content": "ok"}]}\n{"messages": "nope"}\n', "/messages", 2),
        (b'{"messages": []}\n{"other": 1}\n', "/messages", 2),
        (b'{"messages": []}\n42\n', "", 2),
        (b'[{"messages": []}, {"messages": 3}]', "/1/messages", None),
    ],
)
def test_bad_records_name_file_line_and_pointer(text, pointer, line):
    records = list(pc.formats.iter_records("chat", text, "bad.jsonl"))
    error = next(r.error for r in records if r.error is not None)
    assert isinstance(error, pc.FormatError)
    assert (error.pointer, error.line, error.document_id) == (pointer, line, "bad.jsonl")
    assert sum(r.story is not None for r in records) == 1


def test_empty_whole_array_holds_no_conversation_and_a_line_array_is_one():
    assert pc.into_storyline("chat", b"[]") == []
    stories = pc.into_storyline("chat", b"[]\n[]\n")
    assert [s["turns"] for s in stories] == [[], []]
    assert written_records(pc.from_storyline("chat", stories)) == [[], []]


def test_golden_data_folder_has_a_provenance_readme():
    assert "5e93f74c" in (DATA / "README.md").read_text("utf-8")


def test_a_completed_flag_is_the_task_result_and_comes_back(tmp_path):
    # Agents that log role/content conversations (a `conversations` list) say whether they completed.
    data = (
        b'{"conversations": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],'
        b' "timestamp": "2026-01-01T00:00:00", "completed": false}\n'
    )
    [story] = pc.into_storyline("chat", data, document_id="c.jsonl")
    assert story["task"] == {"result": {"completed": False}}
    assert orjson.loads(pc.from_storyline("chat", [story])) == orjson.loads(data)
    (tmp_path / "c.jsonl").write_bytes(data)
    assert main(["convert", str(tmp_path / "c.jsonl"), "--to", "sharegpt", "-o", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "failed_trajectories.jsonl").read_bytes().count(b"\n") == 1
    assert (tmp_path / "out" / "trajectory_samples.jsonl").read_bytes() == b""
