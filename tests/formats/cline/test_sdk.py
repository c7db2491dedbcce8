"""Sessions of Cline's SDK (``~/.cline/data/sessions/<id>/<id>.messages.json``, messages-contract-v1): the real
fixtures of cline/cline (tests/data/cline/README.md) read with calls and results counted by hand, the system prompt
a system turn, the session id, time, model and metrics of each message, compactions as context turns, attached
files as media, and each file written back as equal JSON. Before, ``chat`` claimed these files and kept the system
prompt, the session id, times, models and metrics as residual only."""

from __future__ import annotations

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.errors import NoConversationError
from pchronicle_datasets.formats import cline, detect

from .common import DATA

SDK = sorted([*(DATA / "sessions").rglob("*.messages.json"), *(DATA / "sdk_fixtures").glob("*.json")])
SESSION = DATA / "sessions" / "1784094124598_rruoq" / "1784094124598_rruoq.messages.json"
SUCCESS = DATA / "sessions" / "fixture-success-01" / "fixture-success-01.messages.json"


def _story(path):
    (story,) = cline.decode(path.read_bytes(), str(path.relative_to(DATA)))
    return story


@pytest.mark.parametrize("path", SDK, ids=lambda p: p.name)
def test_each_session_is_read_and_written_back(path):
    raw = orjson.loads(path.read_bytes())
    assert detect(path.read_bytes()).NAME == "cline"
    story = _story(path)
    messages = raw["messages"]
    blocks = [b for m in messages for b in m["content"]]
    calls = [c for t in story["turns"] for c in t.get("tool_calls", ())]
    results = [r for t in story["turns"] for r in (t.get("observation") or {}).get("results", ())]
    assert len(calls) == sum(b["type"] == "tool_use" for b in blocks)
    assert len(results) == sum(b["type"] == "tool_result" for b in blocks)
    assert all(r["source_call_id"] in {c["tcid"] for c in calls} for r in results)
    assert story["session"] == raw["sessionId"]
    assert story["origin"]["schema_version"] == "cline-messages/v1"
    assert sum(t["src"] == "agent" for t in story["turns"]) == sum(m["role"] == "assistant" for m in messages)
    if "system_prompt" in raw:
        assert story["turns"][0] == {"id": 1, "src": "system", "msg": raw["system_prompt"]}
    with_metrics = [t for t in story["turns"] if "metrics" in t]
    assert len(with_metrics) == sum("metrics" in m for m in messages)
    assert orjson.loads(cline.encode([story])) == raw


def test_time_model_and_metrics_of_the_contract():
    story = _story(SUCCESS)
    last = story["turns"][-1]
    assert last["ts"] == "2025-04-22T17:42:11.456Z"  # 1745343731456 ms
    assert last["model"] == "claude-sonnet-4-6" == story["agent"]["model"]  # modelInfo.id
    assert last["metrics"] == {
        "prompt_tokens": 21,
        "completion_tokens": 8,
        "cached_tokens": 3,
        "cost_usd": 0.13,
        "extra": {"cache_write_tokens": 1},
    }
    assert story["turns"][1]["reason"] == "I should read the README first before summarizing."
    assert story["turns"][1]["observation"]["results"][0]["is_error"] is False


def test_compactions_are_context_turns_and_files_are_media():
    compaction = _story(DATA / "sdk_fixtures" / "basic.compaction.json")
    (turn,) = [t for t in compaction["turns"] if t.get("kind") == "context"]
    assert turn["copied"] is True and turn["extra"]["cline"]["context"] == ["compaction"]
    assert "<SYSTEM_NOTICE>" in turn["msg"]
    summary = _story(DATA / "sdk_fixtures" / "agentic.compaction.json")
    assert [t["extra"]["cline"]["context"] for t in summary["turns"] if t.get("kind")] == [["compaction_summary"]]
    session = _story(SESSION)
    (media,) = session["turns"][1]["extra"]["media"]  # the file the user attached, as written
    assert media["type"] == "file" and media["path"].endswith("agent-sidebar.tsx")
    messages = pc.to_messages(pc.story_to_row(session))["messages"]
    assert [m["role"] for m in messages[:4]] == ["system", "user", "assistant", "tool"]


def test_the_manifest_is_no_conversation():
    manifest = {"version": 1, "session_id": "s1", "messages_path": "/x/s1.messages.json", "status": "completed"}
    assert detect(orjson.dumps(manifest)).NAME == "cline"
    with pytest.raises(NoConversationError):
        cline.decode(orjson.dumps(manifest), "sessions/s1/s1.json")


def test_chat_no_longer_claims_sdk_sessions():
    from pchronicle_datasets.formats import chat

    raw = orjson.loads(SUCCESS.read_bytes())
    assert not chat.sniff(raw) and cline.sniff(raw)
    assert chat.sniff({k: v for k, v in raw.items() if k != "updated_at"})  # no longer the SDK's: chat's


def test_a_system_prompt_of_blocks_comes_back_with_its_leftovers():
    raw = orjson.loads(SUCCESS.read_bytes())
    raw["system_prompt"] = [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]
    (story,) = cline.decode(orjson.dumps(raw), "s.json")
    assert story["turns"][0]["msg"] == "Be brief."
    assert orjson.loads(cline.encode([story])) == raw
