"""Issue 25: which turns to train (``trainable=``, ``mask_tool_arguments=``), ``pc.flags`` and
``pc.to_prompt_completion``, on the shipped real files (Harbor's ATIF goldens, the gateway capture, the
reference agent's ShareGPT) and, for the prompt-completion form, through TRL's own tokenization and collator.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import Dataset

import pchronicle_datasets as pc
from pchronicle_datasets.training.policy import FLAGS

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
ATIF = sorted((ROOT / "tests" / "data" / "atif").glob("harbor_golden_*.trajectory.json"))
REAL = [
    *ATIF,
    ROOT / "tests" / "data" / "atif" / "golden" / "every_row.atif.json",
    SAMPLES / "openai_msg" / "gateway_capture.jsonl",
    SAMPLES / "sharegpt" / "trajectory_samples.jsonl",
    SAMPLES / "sharegpt" / "batch_0_output.jsonl",
    SAMPLES / "chat" / "openhands_sdk_fncall-llm-message.json",
]


def _stories(path: Path) -> list[dict]:
    return pc.into_storyline("auto", path.read_bytes(), document_id=path.name)


STORIES = [(f"{path.name}#{k}", story) for path in REAL for k, story in enumerate(_stories(path))]
IDS = [name for name, _ in STORIES]


def _assistants(messages):
    return [i for i, m in enumerate(messages) if m["role"] == "assistant"]


def test_the_real_files_have_what_the_policies_choose_between():
    multi = [s for _, s in STORIES if len(_assistants(pc.to_messages(s, arguments="object")["messages"])) > 1]
    calls = [s for _, s in STORIES if any(t.get("tool_calls") for t in s["turns"])]
    assert len(STORIES) >= 15 and len(multi) >= 8 and len(calls) >= 8


@pytest.mark.parametrize("name,story", STORIES, ids=IDS)
def test_the_default_is_todays_output_and_a_policy_only_adds_marks(name, story):
    plain_messages = pc.to_messages(story, arguments="object")
    plain_sharegpt = pc.to_sharegpt(story)
    assert all("train" not in m for m in plain_messages["messages"])
    assert all(set(c) == {"from", "value"} for c in plain_sharegpt["conversations"])
    assert pc.to_messages(story, trainable="all", arguments="object") == plain_messages
    assert pc.to_sharegpt(story, trainable="all") == plain_sharegpt
    # the dataset form: a null train (no policy asked for) on every message, the rest as before
    string = pc.to_messages(story)
    assert all(m["train"] is None for m in string["messages"])
    assert pc.decode_messages(string) == plain_messages
    for trainable in pc.training.TRAINABLE:
        for mask in (False, True):
            if trainable == "all" and not mask:
                continue  # checked above: no marks
            marked = pc.to_messages(story, arguments="object", trainable=trainable, mask_tool_arguments=mask)
            assert [{k: v for k, v in m.items() if k != "train"} for m in marked["messages"]] == plain_messages[
                "messages"
            ]
            assert all(type(m["train"]) is bool for m in marked["messages"])
            conv = pc.to_sharegpt(story, trainable=trainable, mask_tool_arguments=mask)["conversations"]
            assert [{"from": c["from"], "value": c["value"]} for c in conv] == plain_sharegpt["conversations"]


def _expected(messages, trainable, mask, story):
    """The policy restated from the issue, on the object form: never a copied turn's message (a fork's copy, an
    ATIF step of copied context), so "last" is the last the conversation gave itself."""
    own = [t for t in story["turns"] if t["src"] == "agent"]
    agent = [i for i, turn in zip(_assistants(messages), own, strict=True) if not turn.get("copied")]
    if trainable == "last":
        agent = agent[-1:]
    elif trainable == "final_answer":
        agent = [i for i in agent if not messages[i].get("tool_calls")][-1:]
    if mask:
        agent = [
            i
            for i in agent
            if not (
                messages[i].get("tool_calls")
                and not messages[i]["content"].strip()
                and not (messages[i].get("reasoning_content") or "").strip()
            )
        ]
    return set(agent)


@pytest.mark.parametrize("name,story", STORIES, ids=IDS)
@pytest.mark.parametrize("trainable", ["all", "last", "final_answer"])
@pytest.mark.parametrize("mask", [False, True])
def test_train_is_true_exactly_on_the_policys_assistant_messages(name, story, trainable, mask):
    plain = pc.to_messages(story, arguments="object")["messages"]
    want = _expected(plain, trainable, mask, story)
    if trainable == "all" and not mask:
        return  # no marks: every assistant message is trained by the trainer's role rule
    out = pc.to_messages(story, trainable=trainable, mask_tool_arguments=mask)["messages"]  # dataset form
    assert {i for i, m in enumerate(out) if m["train"]} == want
    # to_sharegpt marks the same agent turns: its gpt elements are the assistant messages, in order
    conv = pc.to_sharegpt(story, trainable=trainable, mask_tool_arguments=mask)["conversations"]
    gpt = [c["train"] for c in conv if c["from"] == "gpt"]
    assert gpt == [i in want for i in _assistants(plain)]
    assert not any(c["train"] for c in conv if c["from"] != "gpt")


def test_final_answer_on_harbor_runs():
    # OpenHands ends on its `finish` call: it has no final answer without a call, and "last" trains the call.
    story = _stories(ROOT / "tests" / "data" / "atif" / "harbor_golden_openhands_hello-world.trajectory.json")[0]
    out = pc.to_messages(story, trainable="final_answer", arguments="object")["messages"]
    assert not any(m["train"] for m in out)
    last = pc.to_messages(story, trainable="last", arguments="object")["messages"]
    assert [i for i, m in enumerate(last) if m["train"]] == [max(_assistants(last))]
    assert last[max(_assistants(last))]["tool_calls"][0]["function"]["name"] == "finish"
    masked = pc.to_messages(story, trainable="last", mask_tool_arguments=True)["messages"]
    assert any(m["train"] for m in masked) == bool(last[max(_assistants(last))]["content"].strip())
    # Without function calling its last message is the answer.
    name = "harbor_golden_openhands_hello-world.no_function_calling.trajectory.json"
    story = _stories(ROOT / "tests" / "data" / "atif" / name)[0]
    out = pc.to_messages(story, trainable="final_answer", arguments="object")["messages"]
    assert [i for i, m in enumerate(out) if m["train"]] == [len(out) - 1] and out[-1]["role"] == "assistant"


def test_marks_survive_ds_map_and_parquet(tmp_path):
    stories = [s for _, s in STORIES[:12]]
    ds = Dataset(pc.rows_to_table([pc.story_to_row(s) for s in stories]))
    for fn, features in ((pc.to_messages, pc.MESSAGES_FEATURES), (pc.to_sharegpt, pc.SHAREGPT_TRAIN_FEATURES)):
        out = ds.map(
            fn,
            fn_kwargs={"trainable": "last"},
            remove_columns=ds.column_names,
            features=features,
            load_from_cache_file=False,
        )
        assert out.features == features
        assert out.to_list() == [fn(s, trainable="last") for s in stories]
        batched = ds.map(
            fn, fn_kwargs={"trainable": "last"}, batched=True, batch_size=5, remove_columns=ds.column_names
        )
        assert batched.to_list() == out.to_list()
    default = ds.map(pc.to_messages, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    assert default.to_list() == [pc.to_messages(s) for s in stories]


def test_an_unknown_policy_is_refused():
    story = STORIES[0][1]
    for fn in (pc.to_messages, pc.to_sharegpt, pc.to_prompt_completion):
        with pytest.raises(ValueError, match="trainable is"):
            fn(story, trainable="first")


# --- flags -----------------------------------------------------------------------------------------------


def _doc(turns, **top):
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, **top}
    story["turns"] = [{"id": i + 1, **t} for i, t in enumerate(turns)]
    pc.validate(story)
    return story


ANSWER = [{"src": "user", "msg": "hi"}, {"src": "agent", "msg": "hello"}]
CALL = {"src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}]}
ANSWERED = {**CALL, "observation": {"results": [{"source_call_id": "c1", "content": "a.txt"}]}}
# The markers the Claude Code reader writes (docs/formats/claude-code.md): isMeta / hook / reminder lines and
# compaction summaries are context turns, a compaction sidechain a child document of rel "compaction".
META = {"src": "user", "msg": "<system-reminder>x</system-reminder>", "copied": True, "kind": "context"}
META["extra"] = {"claude_code": {"context": "meta"}}
SUMMARY = {**META, "extra": {"claude_code": {"context": "compact_summary"}}}


@pytest.mark.parametrize(
    "story,want",
    [
        (_doc(ANSWER), []),
        (_doc(ANSWER[:1]), ["incomplete"]),
        (_doc([ANSWER[0], ANSWERED]), ["incomplete"]),
        (_doc([ANSWER[0], CALL]), ["tool_call_unanswered"]),
        # a call the provider ran inside its response (linking.SERVER_SIDE_KINDS): its results never reach a log
        (
            _doc(
                [ANSWER[0], {**CALL, "msg": "found", "tool_calls": [{**CALL["tool_calls"][0], "kind": "web_search"}]}]
            ),
            [],
        ),
        (_doc([ANSWER[0], {**CALL, "msg": "found", "tool_calls": [{**CALL["tool_calls"][0], "kind": "server"}]}]), []),
        (
            _doc([ANSWER[0], {**CALL, "tool_calls": [{**CALL["tool_calls"][0], "kind": "custom"}]}]),
            ["tool_call_unanswered"],
        ),
        (_doc([ANSWER[0], ANSWERED, ANSWER[1]]), []),
        (_doc(ANSWER, task={"result": {"correct": False}}), ["failed"]),
        (_doc(ANSWER, task={"result": {"status": "Failed"}}), ["failed"]),
        (_doc(ANSWER, task={"result": {"error": "timeout"}}), ["failed"]),
        (_doc(ANSWER, task={"result": {"correct": True, "status": "completed"}}), []),
        (
            _doc([*ANSWER, {"src": "agent", "msg": "API Error: 529", "extra": {"claude_code": {"api_error": True}}}]),
            ["api_error"],
        ),
        (_doc(ANSWER, meta={"claude-code": {"counts": {"system/api_error": 2}}}), ["api_error"]),
        (_doc([META, *ANSWER]), ["injected"]),
        (_doc([SUMMARY, *ANSWER]), ["compaction"]),
        (_doc([{**META, "copied": False}, *ANSWER]), []),  # a context value on a turn that is not copied
        (_doc(ANSWER, parent={"psid": "p", "rel": "compaction"}), ["compaction"]),
        # Codex's compacted line and Pi's compaction entry: a context turn, its extra keyed "compaction"
        (
            _doc(
                [
                    *ANSWER,
                    {"src": "system", "msg": "summary", "kind": "context", "extra": {"compaction": "compacted"}},
                    {"src": "user", "msg": "go on"},
                    ANSWER[1],
                ]
            ),
            ["compaction"],
        ),
        (_doc([{"src": "system", "msg": "s", "kind": "context", "extra": {"branch_summary": {}}}, *ANSWER]), []),
        (_doc(ANSWER, parent={"psid": "p", "scid": "t1"}), ["subagent"]),
    ],
)
def test_each_flag_by_its_rule(story, want):
    assert pc.flags(story) == want
    assert pc.flags(pc.story_to_row(story)) == want  # a row gives the same
    assert set(want) <= set(FLAGS)


@pytest.mark.parametrize(
    "fmt,name",
    [
        ("pi", "pi/before-compaction.excerpt.jsonl"),
        ("codex", "codex/rollout-2026-02-23T12-54-34-019c8a59-e9dd-71f0-9ae3-4079fe9726a9.excerpt.jsonl"),
    ],
)
def test_a_real_pi_or_codex_compaction_is_flagged(fmt, name):
    # --drop-flagged compaction left these in: the rule knew Claude Code's markers only.
    path = Path(__file__).resolve().parent / "data" / name
    (story,) = pc.into_storyline(fmt, path.read_bytes(), document_id=path.name)
    assert "compaction" in pc.flags(story)
    assert "compaction" in pc.flags(pc.story_to_row(story))


def test_flags_on_the_real_files_and_as_a_dataset_filter():
    by_name = {name: pc.flags(story) for name, story in STORIES}
    # Harbor: terminus-2 timeout ends on a tool result, its last commands unanswered; OpenHands' finish call has no
    # observation; the every-row golden embeds a subagent, read as a child document.
    assert by_name["harbor_golden_terminus2_timeout.trajectory.json#0"] == ["incomplete", "tool_call_unanswered"]
    assert by_name["harbor_golden_openhands_hello-world.trajectory.json#0"] == ["tool_call_unanswered"]
    assert by_name["harbor_golden_openhands_hello-world.no_function_calling.trajectory.json#0"] == []
    assert by_name["every_row.atif.json#1"] == ["subagent"]
    assert all(set(f) <= set(FLAGS) for f in by_name.values())
    stories = [s for _, s in STORIES]
    ds = Dataset(pc.rows_to_table([pc.story_to_row(s) for s in stories]))
    kept = ds.filter(lambda ex: not pc.flags(ex))
    assert kept["session"] == [s["session"] for s in stories if not pc.flags(s)]
    assert 0 < kept.num_rows < ds.num_rows


# --- prompt-completion -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name,story", STORIES, ids=IDS)
@pytest.mark.parametrize("trainable", ["last", "final_answer"])
def test_prompt_completion_is_the_conversation_split_at_the_trained_turn(name, story, trainable):
    marked = pc.to_messages(story, trainable=trainable, arguments="object")
    messages = [{k: v for k, v in m.items() if k != "train"} for m in marked["messages"]]
    trained = [i for i, m in enumerate(marked["messages"]) if m["train"]]
    with pc.collect_losses() as report:
        out = pc.to_prompt_completion(story, trainable=trainable)
    assert out["tools"] == marked["tools"]
    if not trained:
        assert out["completion"] == [] and out["prompt"] == messages
        return
    assert out["prompt"] == messages[: trained[0]] and out["completion"] == [messages[trained[0]]]
    tail = len(messages) - trained[0] - 1
    assert report.counts.get("completion_tail_dropped", 0) == tail


def test_prompt_completion_refuses_all_when_tool_results_lie_between_trained_turns():
    story = _doc([ANSWER[0], ANSWERED, ANSWER[1]])
    with pytest.raises(pc.FormatError, match="TRL trains the whole completion"):
        pc.to_prompt_completion(story, trainable="all")
    assert pc.to_prompt_completion(_doc(ANSWER), trainable="all")["completion"] == [
        {"role": "assistant", "content": "hello"}
    ]


# --- TRL: its own tokenization and collator label exactly the completion ------------------------------------

TEMPLATE = (  # the notebooks' template (notebooks/finetune_sharegpt.ipynb): tools, reasoning, calls, results
    "{%- if tools %}<|system|>Tools: {{ tools | tojson }}<|end|>{{ '\\n' }}{% endif %}"
    "{%- for m in messages %}"
    "{%- if m.role == 'assistant' %}<|assistant|>{% generation %}"
    "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}{{ m.content }}"
    "{% for c in m.tool_calls or [] %}"
    '<tool_call>{"name": {{ c.function.name | tojson }}, "arguments": '
    "{{ c.function.arguments if c.function.arguments is string else c.function.arguments | tojson }}}</tool_call>"
    "{% endfor %}<|end|>{% endgeneration %}{{ '\\n' }}"
    "{%- elif m.role == 'tool' %}<|tool|>{{ m.name }}: {{ m.content }}<|end|>{{ '\\n' }}"
    "{%- else %}<|{{ m.role }}|>{{ m.content }}<|end|>{{ '\\n' }}"
    "{%- endif %}{%- endfor %}"
    "{%- if add_generation_prompt %}<|assistant|>{% endif %}"
)


def _tokenizer(texts):
    """The notebooks' small tokenizer: a byte-level BPE trained here on the examples (nothing downloaded)."""
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    special = ["<|pad|>", "<|end|>", "<|system|>", "<|user|>", "<|assistant|>", "<|tool|>"]
    bpe = tokenizers.Tokenizer(tokenizers.models.BPE())
    bpe.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = tokenizers.decoders.ByteLevel()
    trainer = tokenizers.trainers.BpeTrainer(
        vocab_size=600, special_tokens=special, initial_alphabet=tokenizers.pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(texts, trainer)
    return transformers.PreTrainedTokenizerFast(
        tokenizer_object=bpe, eos_token="<|end|>", pad_token="<|pad|>", chat_template=TEMPLATE
    )


def _assistant_text(m):
    """What the template writes for one trained assistant message after its ``<|assistant|>`` header."""
    out = f"<think>{m['reasoning_content']}</think>" if m.get("reasoning_content") else ""
    out += m["content"]
    for c in m.get("tool_calls") or []:
        args = c["function"]["arguments"]  # JSON text (see below)
        out += f'<tool_call>{{"name": {json.dumps(c["function"]["name"])}, "arguments": {args}}}</tool_call>'
    return out + "<|end|>\n"


def _text_arguments(ex):
    def message(m):
        if not m.get("tool_calls"):
            return m
        calls = [
            {**c, "function": {**c["function"], "arguments": json.dumps(c["function"]["arguments"])}}
            for c in m["tool_calls"]
        ]
        return {**m, "tool_calls": calls}

    return {**ex, "prompt": [message(m) for m in ex["prompt"]], "completion": [message(m) for m in ex["completion"]]}


@pytest.mark.parametrize("trainable", ["last", "final_answer"])
def test_trl_labels_exactly_the_trained_turns(trainable, tmp_path, monkeypatch):
    trl = pytest.importorskip("trl")
    transformers = pytest.importorskip("transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")
    examples = [pc.to_prompt_completion(s, trainable=trainable) for _, s in STORIES]
    # Arguments as JSON text, as in MESSAGES_FEATURES: Arrow merges the keys of argument objects otherwise.
    examples = [_text_arguments(ex) for ex in examples if ex["completion"] and ex["prompt"]]  # TRL needs a prompt
    assert len(examples) >= 5
    tokenizer = _tokenizer([json.dumps(ex, ensure_ascii=False) for ex in examples])
    config = transformers.LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=16,
        intermediate_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=8192,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    args = trl.SFTConfig(
        output_dir=str(tmp_path / "run"),
        max_length=None,
        use_cpu=True,
        bf16=False,
        report_to="none",
        disable_tqdm=True,
        save_strategy="no",
    )
    for ex in examples:
        # One example per dataset: Arrow would merge the argument keys of different rows (training-stack notes).
        dataset = Dataset.from_list([{**ex, "tools": json.dumps(ex["tools"])}])
        trainer = trl.SFTTrainer(
            model=transformers.LlamaForCausalLM(config), args=args, train_dataset=dataset, processing_class=tokenizer
        )
        row = trainer.train_dataset[0]
        batch = trainer.data_collator([row])
        labels = batch["labels"][0].tolist()
        ids = batch["input_ids"][0].tolist()
        # TRL tokenized our messages as they are (no Arrow filling, no change)...
        full = tokenizer.apply_chat_template(ex["prompt"] + ex["completion"], tools=ex["tools"], tokenize=False)
        assert tokenizer.decode(ids) == full
        # ...and labels exactly the completion: the trained assistant message, nothing of the prompt or results.
        labelled = tokenizer.decode([t for t, label in zip(ids, labels, strict=True) if label != -100])
        assert labelled == "".join(_assistant_text(m) for m in ex["completion"])
        first = next(i for i, label in enumerate(labels) if label != -100)
        assert all(label != -100 for label in labels[first:])  # one run, to the end
