"""Issue #23, "Nothing duplicated, reordered or dropped on the way to training": one test per case of the issue
(the delta-style echo is ``tests/formats/openai_msg/test_echoes.py``; the sweep over every file is
``tests/test_source_accounting.py``), and the loss inventory (``pc.losses``, ``inspect --losses``, the card)."""

from __future__ import annotations

import json
import math

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.losses import collect_losses
from tests.hub_fake import fake_hub


def _chat(messages: list, **record) -> dict:
    return pc.into_storyline("chat", json.dumps({"messages": messages, **record}), document_id="c.json")[0]


def _rows(*rows: dict) -> dict:
    text = "".join(json.dumps(r) + "\n" for r in rows)
    return pc.into_storyline("openai-msg", text, document_id="cap.jsonl")[0]


def _call(cid: str, name: str, args: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}


PARALLEL = [
    {"role": "user", "content": "list both"},
    {"role": "assistant", "content": "", "tool_calls": [_call("a", "ls", '{"p": "x"}')]},
    {"role": "assistant", "content": "", "tool_calls": [_call("b", "ls", '{"p": "y"}')]},
    {"role": "tool", "tool_call_id": "a", "content": "A"},
    {"role": "tool", "tool_call_id": "b", "content": "B"},
    {"role": "assistant", "content": "done"},
]


def test_parallel_calls_written_one_message_each_keep_their_order() -> None:
    """``assistant(a), assistant(b), tool(a), tool(b)`` is written in that order, not ``a, A, b, B``."""
    story = _chat(PARALLEL)
    with collect_losses(propagate=False) as report:
        messages = pc.to_messages(story)["messages"]
        conversation = pc.to_sharegpt(story)["conversations"]
    got = [(m["role"], m["tool_call_id"] or (m["tool_calls"] or [{}])[0].get("id") or m["content"]) for m in messages]
    assert got == [("user", "list both"), ("assistant", "a"), ("assistant", "b"), ("tool", "a"), ("tool", "b"),
                   ("assistant", "done")]  # fmt: skip
    assert [e["from"] for e in conversation[1:]] == ["human", "gpt", "gpt", "tool", "gpt"]
    assert '"tool_call_id": "a"' in conversation[4]["value"] and '"tool_call_id": "b"' in conversation[4]["value"]
    assert not report
    assert json.loads(pc.from_storyline("chat", [story])) == {"messages": PARALLEL}


def test_tool_stats_count_results_linked_by_position() -> None:
    """``tool_stats`` and the training text use one linking rule: a result without an id answers the call of its
    turn by position, and counts."""
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [
        {"id": 1, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}],
         "observation": {"results": [{"content": "a.txt"}]}}]}  # fmt: skip
    assert pc.compute_tool_stats(story) == [{"tool": "ls", "count": 1, "success": 1, "failure": 0}]
    with collect_losses(propagate=False):
        assert [m["name"] for m in pc.to_messages(story)["messages"] if m["role"] == "tool"] == ["ls"]


TEXT_PROTOCOL = [
    {"role": "system", "content": "You are SWE-agent. Reply with one ```bash``` block per turn.\n" * 20},
    {"role": "user", "content": "fix the bug"},
    {"role": "assistant", "content": "Let me look.\n```bash\nls\n```"},
    {"role": "user", "content": "a.py b.py"},
    {"role": "assistant", "content": "Done."},
]


def test_a_replaced_system_prompt_is_counted_and_can_be_kept() -> None:
    """No tool definitions, a text protocol: the seed's generated prompt replaces the source prompt, and the
    report says so (``system_prompt_replaced``); ``keep_system_prompt=True`` keeps the source prompt."""
    story = _chat(TEXT_PROTOCOL)
    with collect_losses(propagate=False) as report:
        out = pc.to_sharegpt(story)["conversations"]
    assert report.counts == {"system_prompt_replaced": 1} and report.first["system_prompt_replaced"] == "/turns/0/msg"
    assert out[0]["value"].startswith("You are a function calling AI model")
    with collect_losses(propagate=False) as kept_report:
        kept = pc.to_sharegpt(story, keep_system_prompt=True)["conversations"]
    assert kept[0] == {"from": "system", "value": TEXT_PROTOCOL[0]["content"]} and not kept_report
    # Rows of a dataset take the fast path: the same count.
    with collect_losses(propagate=False) as row_report:
        assert pc.to_sharegpt(pc.story_to_row(story))["conversations"] == out
    assert row_report.counts == report.counts


@pytest.mark.parametrize(
    "content", ['[\n {"name": "x", "score": 1.50}\n]', '[{"type":"text","text":"hello"}]', "[1, 2,  3]", '{"a": 1}']
)
def test_text_that_looks_like_json_stays_the_text(content: str) -> None:
    """A string is a string: only a JSON array in the source is content parts (issue #23 over RFC-0009's
    restoration of parts re-encoded as a string)."""
    story = _rows(
        {
            "session_id": "s",
            "step_id": 1,
            "messages": [{"role": "user", "content": content}],
            "response": {"role": "assistant", "content": content},
        }
    )
    assert [t["msg"] for t in story["turns"]] == [content, content]
    with collect_losses(propagate=False) as report:
        messages = pc.to_messages(story)["messages"]
        conversation = pc.to_sharegpt(story)["conversations"]
    assert [m["content"] for m in messages] == [content, content]
    assert conversation[1]["value"] == content and conversation[2]["value"].endswith(content)
    assert not report
    back = json.loads(pc.from_storyline("openai-msg", [story]))
    assert back["messages"][0]["content"] == content and back["response"]["content"] == content


@pytest.mark.parametrize(
    ("arguments", "value"),
    [
        ('{"n": 1180591620717411303424}', {"n": 2**70}),
        ('{"x": NaN}', {"x": math.nan}),
        ('{"s": "\\ud800"}', {"s": "\ud800"}),
    ],
)
def test_arguments_the_reference_parser_reads_are_kept_exactly(arguments: str, value: dict) -> None:
    """An integer beyond 64 bits, ``NaN``, a lone surrogate: not strict JSON, but JSON to the reference converter
    (``json.loads``), which writes them as ``json.dumps`` does; ``to_messages`` keeps the source's text."""
    story = _rows(
        {
            "session_id": "s",
            "step_id": 1,
            "messages": [{"role": "user", "content": "go"}],
            "response": {"role": "assistant", "content": "", "tool_calls": [_call("c1", "f", arguments)]},
        }
    )
    with collect_losses(propagate=False) as report:
        conversation = pc.to_sharegpt(story)["conversations"]
        messages = pc.to_messages(story)["messages"]
    block = json.dumps({"name": "f", "arguments": json.loads(arguments)}, ensure_ascii=False)
    assert conversation[2]["value"] == f"<think>\n</think>\n<tool_call>\n{block}\n</tool_call>"
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == arguments
    assert not report


def test_a_result_that_answers_no_call_is_named_unknown() -> None:
    """A result whose id names no call, on a turn with calls, is ``unknown`` (docs/training.md, the reference),
    not the name of the turn's call."""
    story = _chat(
        [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "", "tool_calls": [_call("c1", "terminal", "{}")]},
            {"role": "tool", "tool_call_id": "zz", "content": "stray"},
            {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        ]
    )
    with collect_losses(propagate=False):
        conversation = pc.to_sharegpt(story)["conversations"]
        messages = pc.to_messages(story)["messages"]
    assert '{"tool_call_id": "zz", "name": "unknown", "content": "stray"}' in conversation[3]["value"]
    assert [(m["tool_call_id"], m["name"]) for m in messages if m["role"] == "tool"] == [
        ("zz", "unknown"),
        ("c1", "terminal"),
    ]


@pytest.mark.parametrize("session", ["", None])
def test_the_rows_fast_path_refuses_what_the_general_path_refuses(session) -> None:
    story = _chat([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}])
    row = {**pc.story_to_row(story), "session": session}
    with pytest.raises(pc.PchronicleError):
        pc.to_sharegpt(row)


def test_inspect_does_not_call_an_empty_tools_list_a_definition(tmp_path, capsys) -> None:
    path = tmp_path / "convs.jsonl"
    record = {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "tools": "[]"}
    path.write_text("".join(json.dumps({**record, "id": f"r{i}"}) + "\n" for i in range(100)))
    assert main(["inspect", str(path), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["residual_tools"] == 0


# ---------------------------------------------------------------------------------------- the loss inventory


def test_losses_of_a_dataset_per_target(tmp_path) -> None:
    from datasets import Dataset

    ds = Dataset.from_list([pc.story_to_row(_chat(TEXT_PROTOCOL)), pc.story_to_row(_chat(PARALLEL))])
    assert pc.losses(ds, target="to_sharegpt").counts == {"system_prompt_replaced": 1}
    assert not pc.losses(ds, target="to_messages")
    assert not pc.losses(ds, target="storyline")
    assert pc.losses(ds, target="openai-msg").counts  # chat records hold turns no gateway row can
    with pytest.raises(ValueError, match="unknown target"):
        pc.losses(ds, target="csv")


def test_inspect_losses_prints_per_file_and_target_and_writes_nothing(tmp_path, capsys) -> None:
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"messages": TEXT_PROTOCOL}))
    before = sorted(tmp_path.iterdir())
    assert main(["inspect", "--losses", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"{path}: 1 document(s), 0 bad record(s)" in out
    assert "  to_messages: no loss" in out
    assert f"system_prompt_replaced  (first at /turns/0/msg of {path}#1)" in out
    assert sorted(tmp_path.iterdir()) == before
    assert main(["inspect", "--losses", "--json", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)[str(path)]["targets"]
    assert report["to_sharegpt"]["system_prompt_replaced"]["count"] == 1


def test_push_writes_what_the_conversion_left_out_in_the_card(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"messages": TEXT_PROTOCOL}))
    with fake_hub() as fake:
        assert main(["push", str(path), "--repo", "org/sft", "--to", "sharegpt", "--token", "hf_test_token"]) == 0
    card = fake.files["README.md"].decode()
    section = card.split("## What the conversion left out", 1)[1]
    row = next(line for line in section.splitlines() if line.startswith("| `system_prompt_replaced` |"))
    assert row.startswith("| `system_prompt_replaced` | 1 | `/turns/0/msg` ")  # the first pointer…
    assert "run\\.json" in row.split(" | ")[2]  # …and the document it is in (Markdown-escaped)
    with fake_hub() as fake:
        assert main(["push", str(path), "--repo", "org/sft", "--to", "messages", "--token", "hf_test_token"]) == 0
    assert "Nothing: every value of the sources is in these rows" in fake.files["README.md"].decode()
