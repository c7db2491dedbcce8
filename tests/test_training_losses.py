"""Issue 12, "Training outputs never drop content silently": every turn and result is rendered or counted in the
loss report; one summary per ``ds.map`` call; ``strict=True``; source ids and exact reference conversations;
developer turns; results that answer no call (Harbor's terminus-2); ``pc.incomplete``."""

from __future__ import annotations

import functools
import gc
import logging
import os
from pathlib import Path

import orjson
import pytest
from datasets import Dataset
from hypothesis import HealthCheck, given, settings

import pchronicle_datasets as pc
from pchronicle_datasets.formats.sharegpt import conversation
from tests.strategies import sharegpt_records

DATA = Path(__file__).parent / "data" / "sharegpt"
ATIF = Path(__file__).parent / "data" / "atif"


@pytest.fixture(autouse=True)
def _earlier_map_calls_ended():
    """A map call's summary is logged when its shard's Arrow view is released; a call that raised under
    ``pytest.raises`` (here or in an earlier test) keeps that view in the kept traceback's reference cycle until
    the collector runs, which may be in the middle of a later test. Collecting first logs such summaries before
    this test reads the log."""
    gc.collect()


def doc(turns: list[dict], **agent) -> dict:
    for i, turn in enumerate(turns):
        turn.setdefault("id", i + 1)
    return {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a", **agent}, "turns": turns}


def dataset(stories: list[dict]) -> Dataset:
    return Dataset(pc.rows_to_table([pc.story_to_row(s) for s in stories]))


LOSSY = doc(
    [
        {"src": "user", "msg": [{"type": "text", "text": "look "}, {"type": "image_url", "image_url": {"url": "u"}}]},
        {"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": "{not json"}]},
    ]
)


# ------------------------------------------------------------------------------------------- the report


@pytest.mark.parametrize("fn", [pc.to_sharegpt, functools.partial(pc.to_messages, arguments="object")])
def test_losses_are_counted_by_kind_with_the_first_pointer(fn):
    with pc.collect_losses() as report:
        fn(LOSSY)
    assert dict(report.counts) == {"content_flattened": 1, "invalid_arguments": 1}
    assert report.first == {"content_flattened": "/turns/0/msg", "invalid_arguments": "/turns/1/tool_calls/0/args"}
    assert report.first_document == {"content_flattened": "s", "invalid_arguments": "s"}


def test_to_messages_string_form_keeps_arguments_that_are_not_json():
    """The dataset form's arguments are text: a source that is not JSON is written as it is, so it is no loss (the
    ShareGPT seed's rule writes ``{}``, and the object form has no place for text either)."""
    with pc.collect_losses() as report:
        out = pc.to_messages(LOSSY)
    assert out["messages"][1]["tool_calls"][0]["function"]["arguments"] == "{not json"
    assert dict(report.counts) == {"content_flattened": 1}


@pytest.mark.parametrize("fn", [pc.to_sharegpt, pc.to_messages])
def test_strict_raises_with_the_pointer_of_the_first_loss(fn):
    with pytest.raises(pc.FormatError) as err:
        fn(LOSSY, strict=True)
    assert err.value.pointer == "/turns/0/msg" and err.value.document_id == "s"
    assert "content_flattened" in str(err.value)
    ds = dataset([LOSSY])
    with pytest.raises(pc.FormatError):
        ds.map(fn, fn_kwargs={"strict": True}, remove_columns=ds.column_names)


def _map_summaries(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "pchronicle_datasets.losses"]


@pytest.mark.parametrize("batched", [False, True])
@pytest.mark.parametrize("fn", [pc.to_sharegpt, pc.to_messages])
def test_one_summary_per_map_call(fn, batched, caplog):
    ds = dataset([LOSSY] * 7 + [doc([{"src": "user", "msg": "hi"}])])
    caplog.set_level(logging.INFO, logger="pchronicle_datasets.losses")
    for _ in range(2):
        ds.map(fn, batched=batched, batch_size=3, remove_columns=ds.column_names, load_from_cache_file=False)
    summaries = _map_summaries(caplog)
    assert len(summaries) == 2, summaries  # one per map call, never one per row
    kinds = "2 kinds of loss" if fn is pc.to_sharegpt else "1 kind of loss"  # to_messages keeps the text
    assert summaries[0].startswith(f"{fn.__name__} over 8 example(s) (ds.map): {kinds}: ")
    assert "content_flattened 7 (first at /turns/0/msg of s)" in summaries[0]
    if fn is pc.to_sharegpt:
        assert "invalid_arguments 7" in summaries[0] and "keep_invalid_args=True" in summaries[0]
    else:
        assert "invalid_arguments" not in summaries[0]


def test_a_clean_map_call_logs_no_warning(caplog):
    ds = dataset([doc([{"src": "user", "msg": "hi"}, {"src": "agent", "msg": "hello"}])])
    caplog.set_level(logging.INFO, logger="pchronicle_datasets.losses")
    ds.map(pc.to_sharegpt, remove_columns=ds.column_names, load_from_cache_file=False)
    assert [r.levelno for r in caplog.records if r.name == "pchronicle_datasets.losses"] == [logging.INFO]


def test_num_proc_workers_each_log_the_summary_of_their_shard(tmp_path):
    # A file handler: the forked workers inherit it (pytest's capture handlers stay in each worker's memory).
    handler = logging.FileHandler(tmp_path / "log.txt")
    logger = logging.getLogger("pchronicle_datasets.losses")
    logger.addHandler(handler)
    try:
        ds = dataset([LOSSY] * 4)
        ds.map(pc.to_sharegpt, num_proc=2, remove_columns=ds.column_names, load_from_cache_file=False)
    finally:
        logger.removeHandler(handler)
        handler.close()
    lines = (tmp_path / "log.txt").read_text().splitlines()
    assert sorted(line.split("(shard ")[1][:1] for line in lines) == ["0", "1"], lines
    assert all("over 2 example(s)" in line and "invalid_arguments 2" in line for line in lines)


def test_collect_losses_around_ds_map_gets_the_counts_and_nothing_is_logged(caplog):
    ds = dataset([LOSSY] * 3)
    with pc.collect_losses() as report:
        ds.map(pc.to_messages, remove_columns=ds.column_names, load_from_cache_file=False)
    assert report.counts["content_flattened"] == 3 and "invalid_arguments" not in report.counts
    assert _map_summaries(caplog) == []


@pytest.mark.parametrize("batched", [False, True])
def test_iterable_dataset_map_logs_one_summary_per_pass(batched, caplog):
    ds = dataset([LOSSY] * 5 + [doc([{"src": "user", "msg": "hi"}])]).to_iterable_dataset(num_shards=2)
    gc.collect()  # an earlier test's failed map call, held by its traceback, logs its summary now, not below
    caplog.set_level(logging.INFO, logger="pchronicle_datasets.losses")
    mapped = ds.map(pc.to_sharegpt, batched=batched, batch_size=2, remove_columns=list(ds.column_names))
    assert len(list(mapped)) == 6

    gc.collect()  # the pass's iterators are released (CPython frees them at once; gc for other interpreters)
    summaries = _map_summaries(caplog)
    assert len(summaries) == 1, summaries
    assert summaries[0].startswith("to_sharegpt over 6 example(s) (IterableDataset.map): 2 kinds of loss: ")
    assert "invalid_arguments 5" in summaries[0]


def test_iterable_dataset_map_left_early_logs_what_it_converted(caplog):
    ds = dataset([LOSSY] * 5).to_iterable_dataset()
    gc.collect()
    caplog.set_level(logging.INFO, logger="pchronicle_datasets.losses")
    mapped = ds.map(pc.to_messages, remove_columns=list(ds.column_names))
    rows = iter(mapped)
    next(rows), next(rows)
    assert _map_summaries(caplog) == []  # still reading
    del rows

    gc.collect()
    [summary] = _map_summaries(caplog)
    assert summary.startswith("to_messages over 2 example(s) (IterableDataset.map)")


def test_direct_calls_outside_ds_map_log_each_call(caplog):
    pc.to_sharegpt(LOSSY)
    [message] = _map_summaries(caplog)
    assert message.startswith("to_sharegpt: 2 kinds of loss")


# --------------------------------------------------------------------------------- turns of other sources

CODEX = doc(
    [
        {"src": "system", "msg": "You are Codex."},
        {"src": "developer", "msg": "Use the sandbox."},
        {"src": "user", "msg": "ls"},
        {"src": "agent", "msg": "done"},
        {"src": "system", "msg": "Context compacted."},
        {"src": "critic", "msg": "Looks fine."},
    ]
)


def test_to_messages_keeps_developer_turns_or_folds_them():
    roles = [(m["role"], m["content"]) for m in pc.to_messages(CODEX, arguments="object")["messages"]]
    assert roles[:2] == [("system", "You are Codex."), ("developer", "Use the sandbox.")]
    assert roles[4:] == [("system", "Context compacted."), ("system", "Looks fine.")]
    folded = pc.to_messages(CODEX, arguments="object", developer="system")["messages"]
    assert folded[0] == {"role": "system", "content": "You are Codex.\n\nUse the sandbox."}
    assert [m["role"] for m in folded] == ["system", "user", "assistant", "system", "system"]


def test_to_sharegpt_writes_developer_later_system_and_custom_turns_as_system():
    with pc.collect_losses() as report:
        values = [(c["from"], c["value"]) for c in pc.to_sharegpt(CODEX)["conversations"]]
    assert values[0][0] == "system" and values[0][1].startswith("You are a function calling AI model.")
    assert values[1:] == [
        ("system", "Use the sandbox."),
        ("human", "ls"),
        ("gpt", "<think>\n</think>\ndone"),
        ("system", "Context compacted."),
        ("system", "Looks fine."),
    ]
    # the leading system prompt is replaced by the generated one (the seed's rule), counted (issue #23)
    assert report.first == {"source_renamed": "/turns/5/src", "system_prompt_replaced": "/turns/0/msg"}
    kept = [c["value"] for c in pc.to_sharegpt(CODEX, keep_system_prompt=True)["conversations"]]
    assert kept[:2] == ["You are Codex.", "Use the sandbox."]


# -------------------------------------------------------------------------- results that answer no call


def test_terminus2_output_after_a_step_without_calls_is_the_next_user_message():
    text = (ATIF / "harbor_golden_terminus2_invalid-json.trajectory.json").read_bytes()
    [story] = pc.into_storyline("atif", text, document_id="invalid-json.json")
    error = story["turns"][1]["observation"]["results"][0]["content"]
    assert error.startswith("Previous response had parsing errors")
    messages = pc.to_messages(story, arguments="object")["messages"]
    roles = [m["role"] for m in messages]
    assert roles[:3] == ["user", "assistant", "user"] and messages[2]["content"] == error
    shared = [(c["from"], c["value"]) for c in pc.to_sharegpt(story)["conversations"]]
    assert shared[3] == ("human", error)
    assert all(role != "tool" or m.get("tool_call_id") is not None for role, m in zip(roles, messages, strict=True))


def test_terminus2_summarization_step_keeps_every_terminal_output_once():
    text = (ATIF / "harbor_golden_terminus2_context-summarization.trajectory.json").read_bytes()
    [story] = pc.into_storyline("atif", text, document_id="summ.json")
    results = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results", [])]
    with pc.collect_losses() as report:
        messages = pc.to_messages(story, arguments="object")["messages"]
    shown = [m["content"] for m in messages if m["role"] == "tool"]
    # each output after its own step, none moved to another; the summarization step's result is a subagent
    # reference without content: nothing to show
    assert shown == [r["content"] for r in results if "content" in r]
    assert not report and len(shown) == len(results) - 1


def test_a_result_with_no_call_before_it_and_no_id_is_a_user_message():
    story = doc(
        [
            {"src": "user", "msg": "go"},
            {"src": "agent", "msg": "echo hi", "observation": {"results": [{"content": "hi\n"}]}},
            {"src": "agent", "msg": "done"},
        ]
    )
    assert [m["role"] for m in pc.to_messages(story, arguments="object")["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
    ]
    assert [c["from"] for c in pc.to_sharegpt(story)["conversations"]][1:] == ["human", "gpt", "human", "gpt"]


# ------------------------------------------------------------------------ exact reference conversations


def _records(path: Path) -> list:
    return [orjson.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


REAL = [
    "hermeswith_trajectory_samples.jsonl",
    "cymru_trajectory_samples.jsonl",
    "reused_ids_blank_line.jsonl",
    "parallel_reused_ids.jsonl",
]


def _assert_gives_back_the_source(path: Path) -> None:
    stories = pc.into_storyline("sharegpt", path.read_bytes(), document_id=path.name)
    records = _records(path)
    expected = [r["conversations"] for r in records]
    assert [pc.to_sharegpt(s)["conversations"] for s in stories] == expected
    ds = dataset(stories)
    mapped = ds.map(pc.to_sharegpt, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)
    assert [row["conversations"] for row in mapped] == expected
    assert [orjson.loads(line) for line in pc.from_storyline("sharegpt", stories).splitlines()] == records


@pytest.mark.parametrize("name", REAL)
def test_to_sharegpt_gives_back_the_reference_conversations_exactly(name):
    _assert_gives_back_the_source(DATA / name)


# Real trajectory files whose licence does not let them be committed here (or that are too large) are checked
# the same way when a folder of them is named: PCHRONICLE_SHAREGPT_CORPUS=DIR pytest -k corpus (every *.jsonl
# under DIR, each a file of the reference agent's ShareGPT). docs/training.md says which were checked.
CORPUS = os.environ.get("PCHRONICLE_SHAREGPT_CORPUS")


@pytest.mark.skipif(not CORPUS, reason="PCHRONICLE_SHAREGPT_CORPUS names no folder of real trajectory files")
def test_a_named_corpus_of_real_trajectories_comes_back_exactly():
    files = sorted(Path(CORPUS or ".").rglob("*.jsonl"))
    assert files, f"no *.jsonl under {CORPUS}"
    for path in files:
        _assert_gives_back_the_source(path)


def test_parallel_calls_that_reuse_ids_in_every_turn_are_shown_as_written():
    # The shape of the NeuraReport-V2 records (docs/training.md): qwen_tc_0, qwen_tc_1… restart in every turn.
    first, failed = pc.into_storyline("sharegpt", (DATA / "parallel_reused_ids.jsonl").read_bytes(), document_id="p")
    tcids = [c["tcid"] for t in first["turns"] for c in t.get("tool_calls") or []]
    assert len(set(tcids)) == len(tcids) == 6
    renamed = {"call-4-0": "qwen_tc_0", "call-8-0": "qwen_tc_0", "call-8-1": "qwen_tc_1"}
    assert first["meta"]["source_call_ids"] == renamed
    messages = pc.to_messages(first, arguments="object")["messages"]
    shown = ["qwen_tc_0", "qwen_tc_1", "qwen_tc_0", "qwen_tc_0", "qwen_tc_1", "qwen_tc_2"]
    assert [c["id"] for m in messages for c in m.get("tool_calls") or []] == shown
    assert [(m["name"], m["tool_call_id"]) for m in messages if m["role"] == "tool"] == [
        ("read_template", "qwen_tc_0"),
        ("get_schema", "qwen_tc_1"),
        ("verify_template", "qwen_tc_0"),
        ("verify_template", "qwen_tc_0"),
        ("read_template", "qwen_tc_1"),
        ("get_schema", "qwen_tc_2"),
    ]
    assert failed["task"]["result"]["completed"] is False


def test_reused_ids_are_shown_as_the_source_wrote_them():
    [story] = pc.into_storyline("sharegpt", (DATA / "reused_ids_blank_line.jsonl").read_bytes(), document_id="r")
    tcids = [c["tcid"] for t in story["turns"] for c in t.get("tool_calls") or []]
    assert tcids[0] == "qwen_tc_0" and tcids[1] != "qwen_tc_0"  # unique in Storyline
    assert story["meta"]["source_call_ids"] == {tcids[1]: "qwen_tc_0"}
    messages = pc.to_messages(story, arguments="object")["messages"]
    assert [c["id"] for m in messages for c in m.get("tool_calls", [])] == ["qwen_tc_0", "qwen_tc_0"]
    assert [m["tool_call_id"] for m in messages if m["role"] == "tool"] == ["qwen_tc_0", "qwen_tc_0"]
    rendered = [c["value"] for c in conversation(story)]
    assert sum('"tool_call_id": "qwen_tc_0"' in v for v in rendered) == 2


# ------------------------------------------------------------------------------------------ incomplete


def test_incomplete_conversations_are_named_before_and_after_the_map():
    no_answer = doc([{"src": "user", "msg": "hi"}])
    ends_on_result = doc(
        [
            {"src": "user", "msg": "ls"},
            {
                "src": "agent",
                "msg": "",
                "tool_calls": [{"tcid": "c", "fn": "ls", "args": {}}],
                "observation": {"results": [{"source_call_id": "c", "content": "a"}]},
            },
        ]
    )
    good = doc([{"src": "user", "msg": "hi"}, {"src": "agent", "msg": "hello"}])
    stories = [no_answer, ends_on_result, good]
    want = ["no assistant turn", "ends on a tool result", None]
    assert [pc.incomplete(s) for s in stories] == want
    ds = dataset(stories)
    assert [pc.incomplete(r) for r in ds] == want
    for fn, extra in ((pc.to_sharegpt, {}), (pc.to_messages, {"features": pc.MESSAGES_FEATURES})):
        mapped = ds.map(fn, remove_columns=ds.column_names, **extra)
        assert [pc.incomplete(r) for r in mapped] == want
        assert mapped.filter(lambda ex: pc.incomplete(ex) is None).num_rows == 1


# ------------------------------------------------------------------------------------------------ the CLI


def test_cli_convert_and_push_print_the_loss_report(tmp_path, monkeypatch, capsys):
    from pchronicle_datasets.cli import main
    from tests.hub_fake import fake_hub

    src = tmp_path / "lossy.storyline.jsonl"
    src.write_text(pc.from_storyline("storyline", [LOSSY]))
    assert main(["convert", str(src), "--to", "sharegpt", "-o", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    # The training text's losses, and what the record has no place for (formats/sharegpt/writer.py, WRITTEN).
    assert "losses: 4 kinds of loss: content_flattened 1 (first at /turns/0/msg of s)" in err
    assert "invalid_arguments: tool-call arguments that are not JSON" in err
    assert "not in sharegpt: /session: a Storyline field a sharegpt file has no place for" in err
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    with fake_hub() as fake:
        assert main(["push", str(src), "--repo", "org/x", "--to", "messages", "--token", "hf_test_token"]) == 0
    err = capsys.readouterr().err
    assert "losses: 1 kind of loss" in err and "to_messages over" not in err  # the CLI collects: no log line
    assert "data/train-00000-of-00001.parquet" in fake.files


def test_no_reader_keeps_a_message_whole_so_no_turn_is_omitted():
    """Issue #12: a developer message (a Codex session's) and a tool message without an id were residual, counted
    as omitted turns; they are now a developer turn and a result, so both outputs show them and nothing is lost."""
    path = Path(__file__).parent / "data" / "openai_msg" / "admitted_context.input.jsonl"
    [story] = pc.into_storyline("openai-msg", path.read_bytes(), document_id="ctx.jsonl")
    for example in (story, pc.story_to_row(story)):
        with pc.collect_losses() as report:
            messages = pc.to_messages(example)["messages"]
            conversations = pc.to_sharegpt(example)["conversations"]
        assert report.counts == {"system_prompt_replaced": 1}  # to_sharegpt's generated prompt (issue #23)
        assert ("developer", "dev note") in [(m["role"], m["content"]) for m in messages]
        assert any(m["role"] == "tool" and m["content"] == "orphan" for m in messages)
        assert {"from": "system", "value": "dev note"} in conversations


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sharegpt_records)
def test_to_sharegpt_gives_back_any_reference_conversation(record):
    """For any ShareGPT record of the reference agent's roles, the training output is its conversation, also
    from a dataset row; the same holds for LLaMA-Factory's dialect through the same-source writer."""
    line = orjson.dumps(record)
    [story] = pc.into_storyline("sharegpt", line, document_id="g.jsonl")
    conv = record["conversations"] if isinstance(record, dict) else record
    regular = all(e["from"] in ("system", "human", "gpt", "tool") and isinstance(e["value"], str) for e in conv)
    with pc.collect_losses():
        out = pc.to_sharegpt(story)["conversations"]
        from_row = pc.to_sharegpt(pc.story_to_row(story))["conversations"]
    assert out == from_row
    if regular and all(set(e) == {"from", "value"} for e in conv):
        assert out == conv


def test_a_call_released_late_does_not_end_the_call_that_took_its_frame_id(caplog):
    """The frame id of a map call may be reused by a newer call while the older call's anchor still lives (its
    traceback's cycle): the older finalizer logs the older call only, and the newer call keeps counting."""
    from pchronicle_datasets.training import map_losses

    caplog.set_level(logging.INFO, logger="pchronicle_datasets.losses")
    old, new = map_losses._MapCall("to_messages", None), map_losses._MapCall("to_sharegpt", None)
    key = -1  # no real frame has this id
    map_losses._CALLS[key] = new
    try:
        map_losses._finish(key, old)  # the older call's late finalizer
        assert map_losses._CALLS.get(key) is new
        map_losses._finish(key, old)  # a second end of the same call logs nothing more
        assert [r.getMessage() for r in caplog.records] == ["to_messages over 0 example(s) (ds.map): no loss"]
    finally:
        map_losses._CALLS.pop(key, None)
