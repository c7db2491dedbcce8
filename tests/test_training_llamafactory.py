"""Issue 25: ``to_sharegpt(example, dialect="llamafactory")``, LLaMA-Factory's ShareGPT in strict alternation, on
the real files of ``tests/data`` (Claude Code and Codex logs, gateway captures, Harbor's ATIF goldens, LLaMA-
Factory's own glaive demo).

LLaMA-Factory itself is not installed to check the output: its releases pin ``datasets<=4.0.0``, ``trl<=0.24.0``
and ``transformers<=5.8.0`` (``pyproject.toml`` of hiyouga/LLaMA-Factory at ff6d4d1, v0.9.5), which cannot sit
beside this project's ``datasets`` 5 and ``trl`` 1. So ``lf_convert`` below restates, rule for rule, what its
``SharegptDatasetConverter.__call__`` (``src/llamafactory/data/converter.py``) checks before it keeps an example,
and ``lf_function_calls`` what its ``FunctionFormatter.apply`` (``src/llamafactory/data/formatter.py``, with the
default ``thought_words`` and ``tool_call_words`` of ``template.py``) parses out of a ``function_call`` value.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from datasets import Dataset

import pchronicle_datasets as pc
from pchronicle_datasets.training.llamafactory import strict_record

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
REAL = [
    DATA / "claude_code" / "entire_2.0.76" / "488c5296-fc78-4fdf-8cfd-f1cae9454bd0.jsonl",
    DATA / "claude_code" / "entire_2.1.1_task" / "c01ff5a5-0d50-40b0-9169-a0302770e8ff.jsonl",
    DATA / "claude_code" / "showcase" / "55550000-0000-4000-8000-000000000001.jsonl",
    DATA / "claude_code" / "daaain_dag_compact_after_rewind.jsonl",
    DATA / "codex" / "rollout-2026-02-23T13-19-38-019c8a70-dda7-7f33-98ea-f30553347322.jsonl",
    DATA / "codex" / "rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl",
    SAMPLES / "openai_msg" / "gateway_capture.jsonl",
    *sorted((DATA / "atif").glob("harbor_golden_*.trajectory.json")),
    SAMPLES / "sharegpt" / "trajectory_samples.jsonl",
    SAMPLES / "chat" / "openhands_sdk_fncall-llm-message.json",
]
GLAIVE = DATA / "sharegpt" / "llamafactory_glaive_toolcall_en_demo.json"


def _stories(path: Path) -> list[dict]:
    return pc.into_storyline("auto", path.read_bytes(), document_id=path.name)


STORIES = [(f"{path.name}#{k}", story) for path in REAL for k, story in enumerate(_stories(path))]
IDS = [name for name, _ in STORIES]

# --- LLaMA-Factory's rules, restated (see the module docstring) ---------------------------------------------------
USER_TAGS, ASSISTANT_TAGS = ("human", "observation"), ("gpt", "function_call")
THOUGHT = re.compile(re.escape("<think>\n") + "(.*?)" + re.escape("\n</think>\n\n"), re.S)
TOOL_CALL = re.compile(re.escape("<tool_call>") + "(.*?)" + re.escape("</tool_call>"), re.S)


def lf_convert(example: dict) -> tuple[list[dict], list[dict], str] | None:
    """``SharegptDatasetConverter.__call__`` with the default tags: ``(prompt, response, system)``, or None where it
    logs "Skipping this abnormal example" (and trains on nothing)."""
    messages = example["conversations"]
    if messages and messages[0]["from"] == "system":
        system, messages = messages[0]["value"], messages[1:]
    else:
        system = example["system"]
    accept = (USER_TAGS, ASSISTANT_TAGS)
    for i, m in enumerate(messages):
        if m["from"] not in accept[i % 2]:
            return None  # "Invalid role tag"
    if len(messages) % 2 != 0:
        return None  # "Invalid message count"
    aligned = [{"role": m["from"], "content": m["value"]} for m in messages]
    return aligned[:-1], aligned[-1:], system


def lf_function_calls(content: str) -> tuple[str, list[tuple[str, object]]]:
    """``FunctionFormatter.apply``: the text it writes before the calls, and the ``(name, arguments)`` it parses (it
    raises on JSON it cannot read, as this does)."""
    match = TOOL_CALL.search(content)
    if match is None:
        thought = THOUGHT.search(content)
        text = thought.group(0) if thought else ""
        calls = json.loads(content.replace(text, "") if thought else content)
    else:
        text = content.replace(match.group(0), "")
        calls = json.loads(match.group(1))
    calls = calls if isinstance(calls, list) else [calls]
    return text, [(c["name"], c["arguments"]) for c in calls]


def lf_tools(tools: str) -> list:
    """``ToolFormatter.apply``: the tools are JSON text of a list (each a bare function schema, or wrapped)."""
    listed = json.loads(tools)
    assert isinstance(listed, list)
    return listed


# --- the tests ----------------------------------------------------------------------------------------------------


def test_the_real_files_need_the_repairs():
    with pc.collect_losses() as report:
        for _, story in STORIES:
            pc.to_sharegpt(story, dialect="llamafactory")
    repaired = {k.split(": ", 1)[1] for k in report.counts if k.startswith("alternation_repaired")}
    # parallel results, Claude Code user text after results, later system turns, terminus-2 ending on a result…
    assert {"results merged", "inputs merged", "system as human", "trailing input dropped"} <= repaired, repaired
    assert len(STORIES) >= 19


@pytest.mark.parametrize("name,story", STORIES, ids=IDS)
def test_llamafactorys_converter_keeps_every_example_and_every_call(name, story):
    with pc.collect_losses() as report:
        out = pc.to_sharegpt(story, dialect="llamafactory")
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert set(out) == {"conversations", "system", "tools"}
    assert all(set(e) == {"from", "value"} and isinstance(e["value"], str) for e in out["conversations"])
    converted = lf_convert(out)
    assert converted is not None, out["conversations"]  # LLaMA-Factory would have skipped it
    _prompt, response, system = converted
    assistants = [m for m in messages if m["role"] == "assistant"]
    assert bool(response) == bool(assistants)  # without an assistant message there is nothing to train
    lf_tools(out["tools"])
    # every call, in order, with its arguments, parsed as LLaMA-Factory's FunctionFormatter parses it
    calls = [(c["function"]["name"], c["function"]["arguments"]) for m in assistants for c in m.get("tool_calls") or ()]
    parsed = []
    for e in out["conversations"]:
        if e["from"] == "function_call":
            parsed += lf_function_calls(e["value"])[1]
    # calls after the last assistant message cannot be (they are the model's), so every call is there
    assert parsed == calls
    # the text of every assistant message is in the element that holds it
    values = "\n".join(e["value"] for e in out["conversations"])
    assert all(m["content"] in values for m in assistants)
    # the system prompt is the document's own (the leading system messages, developer turns folded in)
    folded = pc.to_messages(story, arguments="object", developer="system")["messages"]
    assert system == (folded[0]["content"] if folded and folded[0]["role"] == "system" else "")
    # every message is in an element, or its repair is counted
    repairs = {k: n for k, n in report.counts.items() if k.startswith("alternation_repaired")}
    body = folded[1:] if folded and folded[0]["role"] == "system" else folded  # later system turns are human
    dropped = repairs.get("alternation_repaired: trailing input dropped", 0)
    merged = sum(n for k, n in repairs.items() if k.endswith("merged") and "system messages" not in k)
    inserted = repairs.get("alternation_repaired: empty human inserted", 0)
    assert len(out["conversations"]) == len(body) - dropped - merged + inserted
    if not repairs:
        roles = {"user": "human", "tool": "observation", "system": "human"}
        want = [roles.get(m["role"]) or ("function_call" if m.get("tool_calls") else "gpt") for m in body]
        assert [e["from"] for e in out["conversations"]] == want


def test_text_beside_calls_stays_in_the_function_call_on_claude_code():
    story = _stories(REAL[0])[0]
    out = pc.to_sharegpt(story, dialect="llamafactory")["conversations"]
    with_text = [e for e in out if e["from"] == "function_call" and "<tool_call>" in e["value"]]
    assert with_text
    for e in with_text:
        text, calls = lf_function_calls(e["value"])
        assert text.strip() and calls and not text.startswith("<tool_call>")
    # parallel calls: one value holding the list; their results one observation holding the list of texts
    parallel = [e for e in out if e["from"] == "function_call" and len(lf_function_calls(e["value"])[1]) > 1]
    for e in parallel:
        after = out[out.index(e) + 1]
        assert after["from"] == "observation" and isinstance(json.loads(after["value"]), list)


def test_a_dataset_maps_to_as_many_examples_with_fixed_features():
    paths = [p for p in REAL if p.suffix == ".jsonl"][:4]
    rows = [pc.story_to_row(s) for p in paths for s in _stories(p)]
    ds = Dataset(pc.rows_to_table(rows))
    out = ds.map(
        pc.to_sharegpt,
        fn_kwargs={"dialect": "llamafactory"},
        remove_columns=ds.column_names,
        features=pc.LLAMAFACTORY_FEATURES,
    )
    assert out.num_rows == ds.num_rows == len(rows)
    assert all(lf_convert(ex) is not None for ex in out)
    batched = ds.map(
        pc.to_sharegpt,
        fn_kwargs={"dialect": "llamafactory"},
        batched=True,
        batch_size=3,
        remove_columns=ds.column_names,
        features=pc.LLAMAFACTORY_FEATURES,
    )
    assert batched.to_list() == out.to_list()
    marked = ds.map(
        pc.to_sharegpt,
        fn_kwargs={"dialect": "llamafactory", "trainable": "last"},
        remove_columns=ds.column_names,
        features=pc.LLAMAFACTORY_TRAIN_FEATURES,
    )
    for ex in marked:
        trained = [i for i, e in enumerate(ex["conversations"]) if e["train"]]
        # "last" is LLaMA-Factory's mask_history: the last element, the model's, when there is one
        assert trained == ([len(ex["conversations"]) - 1] if ex["conversations"] else [])


def test_llamafactorys_own_demo_comes_back_without_a_repair():
    source = json.loads(GLAIVE.read_text())
    stories = pc.into_storyline("sharegpt", GLAIVE.read_bytes(), document_id=GLAIVE.name)
    with pc.collect_losses() as report:
        outs = [pc.to_sharegpt(s, dialect="llamafactory") for s in stories]
    assert not report
    assert [o["conversations"] for o in outs] == [r["conversations"] for r in source]
    assert [json.loads(o["tools"]) for o in outs] == [json.loads(r["tools"]) for r in source]


def _msg(role, content="", **extra):
    return {"role": role, "content": content, **extra}


def _call(name, **args):
    return {"id": name, "type": "function", "function": {"name": name, "arguments": args}}


def test_each_repair_is_counted_with_its_pointer():
    messages = [
        _msg("system", "Be brief."),
        _msg("system", "Really."),
        _msg("assistant", "Hello."),  # the model starts: an empty human first
        _msg("user", "a"),
        _msg("user", "b"),  # inputs merged
        _msg("assistant", "", tool_calls=[_call("ls")]),
        _msg("assistant", "and", tool_calls=[_call("cat")]),  # assistant messages merged
        _msg("tool", "x"),
        _msg("tool", "y"),
        _msg("user", "stop"),  # inputs merged: results and a user message, one observation
        _msg("assistant", "ok", reasoning_content="why"),
        _msg("system", "note"),  # system as human
        _msg("assistant", "done"),
        _msg("tool", "late"),  # trailing input dropped
    ]
    with pc.collect_losses() as report:
        out = strict_record(messages, [{"name": "ls"}, "not a schema"])
    assert report.counts == {
        "alternation_repaired: system messages merged": 1,
        "alternation_repaired: empty human inserted": 1,
        "alternation_repaired: inputs merged": 3,  # a+b; x, y and stop
        "alternation_repaired: assistant messages merged": 1,
        "alternation_repaired: system as human": 1,
        "alternation_repaired: trailing input dropped": 1,
    }
    assert report.first["alternation_repaired: trailing input dropped"] == "/messages/13"
    assert out["system"] == "Be brief.\n\nReally."
    assert out["tools"] == '[{"name": "ls"}]'
    assert [(e["from"], e["value"]) for e in out["conversations"]] == [
        ("human", ""),
        ("gpt", "Hello."),
        ("human", "a\n\nb"),
        (
            "function_call",
            'and\n<tool_call>[{"name": "ls", "arguments": {}}, {"name": "cat", "arguments": {}}]</tool_call>',
        ),
        ("observation", '["x", "y", "stop"]'),
        ("gpt", "<think>\nwhy\n</think>\n\nok"),
        ("human", "note"),
        ("gpt", "done"),
    ]
    assert lf_convert(out) is not None


def test_a_closing_tag_in_the_arguments_does_not_end_the_block():
    messages = [_msg("user", "q"), _msg("assistant", "Writing it.", tool_calls=[_call("echo", text="</tool_call>")])]
    value = strict_record(messages, [])["conversations"][1]["value"]
    assert lf_function_calls(value) == ("Writing it.\n", [("echo", {"text": "</tool_call>"})])


def test_an_unknown_dialect_is_refused():
    story = _stories(REAL[6])[0]
    with pytest.raises(ValueError, match="llamafactory"):
        pc.to_sharegpt(story, dialect="llama-factory")
