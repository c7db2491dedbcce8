"""Roo Code's and Kilo Code's task folders (forks of Cline that keep the same files: docs/formats/cline.md, "Roo Code
and Kilo Code"), read as a user would: ``load_dataset("pchronicle", "auto", data_dir=…)``, the batched
``to_messages``, the same-source writer. Counts by hand come from the raw JSON (``roo_by_hand``), not the reader.

Before: a Roo folder did not load (``history_item.json`` and ``tasks/_index.json`` stopped it: "the format of this
file is not recognised"); Roo's ``reasoning`` blocks were residual (no reasoning in the training text); every task
said ``/agent/id`` ``cline`` and named no model; a condensing summary was a user turn; the histories of Roo's builds
of 2025-11-12 to -14 (reasoning items of their own) were read as ``chat``."""

from __future__ import annotations

import shutil

import orjson
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.formats import chat, cline

from .common import DATA

ROO = DATA / "roo"
KILO = DATA / "kilo"
ROO_TASKS = ROO / "rooveterinaryinc.roo-cline" / "tasks"
KILO_TASKS = KILO / "kilocode.kilo-code" / "tasks"
ROO_NATIVE = ROO_TASKS / "0f3c2a9e-5b7d-4e21-9c3a-2d8e6f1a4b90" / "api_conversation_history.json"
ROO_ITEMS = ROO_TASKS / "4c8e1d2f-9a3b-4f6e-8d1c-7b5a3e2f1d09" / "api_conversation_history.json"
KILO_NATIVE = KILO_TASKS / "9d2e7c41-0b6a-4f38-a5e2-1c7f9b3d5e28" / "api_conversation_history.json"
ALL = (ROO_NATIVE, ROO_ITEMS, KILO_NATIVE)


def roo_by_hand(path) -> dict:
    """What a Roo-family history holds, counted over its raw JSON: messages by role, ``tool_use`` and
    ``tool_result`` blocks, reasoning (blocks and items of their own, with text or a payload), and the user
    messages that hold only results and environment details, or are a condensing summary (context turns)."""
    items = orjson.loads(path.read_bytes())
    messages = [m for m in items if "role" in m]
    blocks = [(m, b) for m in messages for b in (m["content"] if isinstance(m["content"], list) else [])]
    context = 0
    for m in messages:
        if m["role"] != "user":
            continue
        texts = [b["text"] for b in m["content"] if b["type"] == "text"] if isinstance(m["content"], list) else []
        if m.get("isSummary") or (texts and all(t.startswith("<environment_details>") for t in texts)):
            context += 1
    return {
        "assistant": sum(m["role"] == "assistant" for m in messages),
        "user": sum(m["role"] == "user" for m in messages),
        "calls": sum(b["type"] == "tool_use" for _, b in blocks),
        "results": sum(b["type"] == "tool_result" for _, b in blocks),
        "reasoning_text": sum(b["type"] == "reasoning" and "text" in b for _, b in blocks),
        "reasoning_items": sum(m.get("type") == "reasoning" for m in items if "role" not in m),
        "context": context,
    }


def _load(tmp_path, data_dir):
    return load_dataset("pchronicle", "auto", data_dir=str(data_dir), split="train", cache_dir=str(tmp_path))


def _turns(row) -> list[dict]:
    return [
        {k: orjson.loads(v) if isinstance(v, str) and k in ("observation", "extra") else v for k, v in t.items()}
        for t in row["turns"]
    ]


def test_a_roo_code_folder_loads_and_reads_as_counted_by_hand(tmp_path, caplog):
    with caplog.at_level("WARNING"):
        ds = _load(tmp_path, ROO)
    # before, history_item.json (Roo since 2026-02) and tasks/_index.json stopped the load
    assert "left out 4 files that hold no session" in caplog.text
    assert sorted(ds["session"]) == ["0f3c2a9e-5b7d-4e21-9c3a-2d8e6f1a4b90", "4c8e1d2f-9a3b-4f6e-8d1c-7b5a3e2f1d09"]
    assert {row["origin"]["format"] for row in ds} == {"cline"}  # the items' history was read as chat before
    out = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    for row, messages in zip(ds, out["messages"], strict=True):
        path = ROO_TASKS / row["session"] / "api_conversation_history.json"
        counted = roo_by_hand(path)
        turns = _turns(row)
        assert row["agent"]["id"] == "roo-code" and row["agent"]["name"] == "Roo Code"
        agent_turns = [t for t in turns if t["src"] == "agent"]
        assert len(agent_turns) == counted["assistant"]  # an item of its own joins the answer after it
        assert sum(len(t["tool_calls"] or ()) for t in turns) == counted["calls"]
        results = sum(len(((t["observation"] or {}).get("results")) or ()) for t in turns)
        assert results == counted["results"]
        assert sum(t.get("kind") == "context" for t in turns) == counted["context"]
        roles = [m["role"] for m in messages]
        assert roles.count("assistant") == counted["assistant"]
        assert roles.count("tool") == counted["results"]
        assert roles.count("user") == counted["user"]  # results-only messages make no turn; env details do
        assert sum(len(m["tool_calls"] or ()) for m in messages) == counted["calls"]
        assert sum(bool(m["reasoning_content"]) for m in messages) == counted["reasoning_text"]


def test_the_folder_names_the_extension_and_the_content_names_the_family(tmp_path):
    """Decision: ``/agent`` is the extension whose storage folder the document's id holds (``kilocode.kilo-code``,
    ``rooveterinaryinc.roo-cline``); without it (a load of one ``tasks`` folder), a history only the Roo family
    writes is Roo Code's: Kilo Code's Roo-based extension writes the same, and nothing in it tells them apart."""
    kilo = _load(tmp_path / "a", KILO)
    assert kilo["agent"][0]["id"] == "kilo-code" and kilo["agent"][0]["name"] == "Kilo Code"
    tasks_only = _load(tmp_path / "b", KILO_TASKS)
    assert tasks_only["agent"][0]["id"] == "roo-code"
    # a Cline history stays Cline's, wherever it lies
    moved = tmp_path / "rooveterinaryinc.roo-cline" / "tasks" / "1777073170000"
    shutil.copytree(DATA / "tasks" / "1777073170000", moved)
    (moved / "ui_messages.json").unlink()
    cline_in_roo = _load(tmp_path / "c", tmp_path / "rooveterinaryinc.roo-cline" / "tasks")
    assert cline_in_roo["agent"][0]["id"] == "cline"


def test_kilo_code_reads_as_counted_by_hand(tmp_path):
    ds = _load(tmp_path, KILO)
    counted = roo_by_hand(KILO_NATIVE)
    turns = _turns(ds[0])
    assert sum(len(t["tool_calls"] or ()) for t in turns) == counted["calls"] == 5
    assert sum(len(((t["observation"] or {}).get("results")) or ()) for t in turns) == counted["results"] == 4
    story = cline.decode(KILO_NATIVE.read_bytes(), "kilocode.kilo-code/tasks/9d2e/api_conversation_history.json")[0]
    # the attempt_completion before the [TASK RESUMPTION] was never answered; the task was stopped once
    assert story["meta"]["cline"]["unanswered"] == ["call_03_gH9iJ0kL1mN2oP3qR4sT5uV6"]
    assert story["meta"]["cline"]["interrupted"] == 1
    # the resumption holds the user's new words: a user turn, not a context turn
    resumed = next(t for t in story["turns"] if "[TASK RESUMPTION]" in t["msg"])
    assert resumed["src"] == "user" and "kind" not in resumed


def test_roo_reasoning_blocks_are_the_turns_reasoning():
    story = cline.decode(ROO_NATIVE.read_bytes(), "tasks/0f3c/api_conversation_history.json")[0]
    first = next(t for t in story["turns"] if t["src"] == "agent")
    assert first["reason"].startswith("The user reports a flaky retry test.")
    # summary: [] stays residual, at its pointer
    residual = story["unknown_fields"]["sources"]["cline"]["fields"]
    assert residual["/1/content/0/summary"] == []


def test_a_reasoning_item_of_its_own_joins_the_answer_after_it():
    """Roo's builds of 2025-11-12 to -14 kept OpenAI's encrypted reasoning as an item before its assistant
    message: the two are one agent turn, the payload in ``extra.reasoning``, the answer's time."""
    raw = orjson.loads(ROO_ITEMS.read_bytes())
    story = cline.decode(ROO_ITEMS.read_bytes(), "tasks/4c8e/api_conversation_history.json")[0]
    agent = [t for t in story["turns"] if t["src"] == "agent"]
    assert len(agent) == 2
    assert agent[0]["extra"]["reasoning"] == [{"encrypted_content": raw[1]["encrypted_content"]}]
    assert agent[0]["msg"] == "I'll read the script first."
    assert agent[0]["ts"] == cline.reader.time_of(raw[2]["ts"])
    assert agent[0]["model"] == "gpt-5.1"  # from the environment details before it
    residual = story["unknown_fields"]["sources"]["cline"]["fields"]
    assert residual["/1/id"] == raw[1]["id"] and residual["/1/ts"] == raw[1]["ts"]


def test_detection_takes_the_reasoning_items_from_chat():
    items = orjson.loads(ROO_ITEMS.read_bytes())
    assert cline.sniff(items)
    assert not chat.sniff(items)
    # a list of reasoning items alone is no history
    assert not cline.sniff([m for m in items if "role" not in m])


def test_a_condensing_summary_and_a_truncation_marker_are_context_turns():
    """Roo's non-destructive condensing appends a summary (``isSummary``, a user message) and tags the messages
    it replaces (``condenseParent``, residual: they stay turns, the model saw them before); a sliding-window
    truncation inserts a marker message (``isTruncationMarker``). Both are context turns."""
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}],
            "ts": 1,
            "condenseParent": "c1",
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Looking."}], "ts": 2, "condenseParent": "c1"},
        {
            "role": "user",
            "content": "[Sliding window truncation: 2 messages hidden to reduce context]",
            "ts": 3,
            "isTruncationMarker": True,
            "truncationId": "t1",
        },
        {
            "role": "user",
            "content": [{"type": "text", "text": "## Summary\nfixing it"}],
            "ts": 4,
            "isSummary": True,
            "condenseId": "c1",
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "ts": 5},
    ]
    story = cline.decode(orjson.dumps(history), "tasks/x/api_conversation_history.json")[0]
    kinds = [(t["src"], t.get("kind"), (t.get("extra") or {}).get("cline")) for t in story["turns"]]
    assert kinds == [
        ("user", None, None),
        ("agent", None, None),
        ("user", "context", {"context": ["truncation_marker"]}),
        ("user", "context", {"context": ["condense_summary"]}),
        ("agent", None, None),
    ]
    assert story["agent"]["id"] == "roo-code"
    assert orjson.loads(cline.encode([story])) == history


def test_the_model_of_the_environment_details_is_the_answers_model():
    """Roo stamps no model on its messages; its environment details name the request's (``<model>``): each agent
    turn takes the one the last details before it named (derived; the text stays the context turn's)."""
    story = cline.decode(KILO_NATIVE.read_bytes(), "tasks/9d2e/api_conversation_history.json")[0]
    assert {t.get("model") for t in story["turns"] if t["src"] == "agent"} == {"x-ai/grok-code-fast-1"}
    assert story["agent"]["model"] == "x-ai/grok-code-fast-1"
    assert not any("model" in t for t in story["turns"] if t["src"] == "user")


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.parent.name[:8])
def test_the_same_source_writer_gives_each_history_back(path):
    raw = path.read_bytes()
    assert orjson.loads(cline.encode(cline.decode(raw, "h.json"))) == orjson.loads(raw)
    assert orjson.loads(pc.convert("cline", "cline", raw)) == orjson.loads(raw)


def test_openrouter_reasoning_details_are_the_reasoning_of_a_message_without_its_own():
    """Roo keeps OpenRouter's ``reasoning_details`` instead of a ``reasoning`` block for the models that need them
    back (Gemini 3's): their text (with its signature) and encrypted data are the turn's reasoning; a message that
    has its own reasoning (Cline's ``thinking`` block beside them) keeps them residual."""
    details = [
        {
            "type": "reasoning.text",
            "text": "Check the test first.",
            "signature": "c2ln",
            "format": "google-gemini-v1",
            "index": 0,
        },
        {"type": "reasoning.encrypted", "data": "ZW5j", "id": "tool_1", "format": "google-gemini-v1", "index": 0},
        {"type": "reasoning.other", "x": 1},
    ]
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>\nfix it\n</task>"}], "ts": 1},
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}], "ts": 2, "reasoning_details": details},
        {"role": "user", "content": [{"type": "text", "text": "go on"}], "ts": 3},
        {
            "role": "assistant",
            "content": [{"type": "thinking", "thinking": "Mine.", "signature": "s"}, {"type": "text", "text": "Done."}],
            "ts": 4,
            "reasoning_details": details,
        },
    ]
    story = cline.decode(orjson.dumps(history), "tasks/x/api_conversation_history.json")[0]
    first, second = (t for t in story["turns"] if t["src"] == "agent")
    assert first["reason"] == "Check the test first."
    assert first["extra"]["reasoning"] == [{"signature": "c2ln"}, {"encrypted_content": "ZW5j"}]
    assert second["reason"] == "Mine."
    residual = story["unknown_fields"]["sources"]["cline"]["fields"]
    assert residual["/1/reasoning_details/2"] == {"type": "reasoning.other", "x": 1}
    assert residual["/3/reasoning_details"] == details
    assert story["agent"]["id"] == "cline"  # OpenRouter's details are no mark of the Roo family
    assert orjson.loads(cline.encode([story])) == history


def test_the_roo_mode_section_without_a_model_still_names_the_family():
    """Roo's environment details named the mode (``<slug>``, since 2025-02) before they named the model (since
    2025-04): such a history is the Roo family's, with no model on its turns; Cline's (``# Current Mode\nACT
    MODE``) stays Cline's."""
    mode = "<slug>architect</slug>\n<name>🏗️ Architect</name>"
    env = f"<environment_details>\n# Current Mode\n{mode}\n</environment_details>"
    history = [
        {
            "role": "user",
            "content": [{"type": "text", "text": "<task>\nplan it\n</task>"}, {"type": "text", "text": env}],
            "ts": 1,
        },
        {"role": "assistant", "content": [{"type": "text", "text": "Planning."}], "ts": 2},
    ]
    story = cline.decode(orjson.dumps(history), "tasks/x/api_conversation_history.json")[0]
    assert story["agent"] == {"id": "roo-code", "name": "Roo Code"}
    cline_env = env.replace(mode, "ACT MODE")
    history[0]["content"][1]["text"] = cline_env
    story = cline.decode(orjson.dumps(history), "tasks/x/api_conversation_history.json")[0]
    assert story["agent"] == {"id": "cline", "name": "Cline"}
