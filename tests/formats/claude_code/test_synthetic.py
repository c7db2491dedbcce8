"""Assistant records Claude Code writes itself (``"model": "<synthetic>"``): an API error it shows in place of an
answer (``isApiErrorMessage: true``, "API Error: 500 …") and the filler it puts after a local command ("No response
requested."). No model wrote them, so they are context turns (``extra.claude_code.context: "synthetic"``, left out
by ``drop_copied``), an API error is flagged (``pc.flags``: ``api_error``), and ``/agent/model`` is the model of
the first turn a model wrote. Real excerpts of entireio/cli's checkpoints (tests/data/claude_code/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pchronicle_datasets as pc
from pchronicle_datasets.formats import claude_code

from .test_reader import decode, rec

DATA = Path(__file__).resolve().parents[2] / "data" / "claude_code"
API_ERROR = DATA / "entire_2.1.17_api_error" / "a032db5a-df02-44d7-ab1e-fb024213ecc4.excerpt.jsonl"
FILLER = DATA / "entire_2.1.15_synthetic" / "0cf3db51-1c73-43bb-8d05-dc02739514a5.excerpt.jsonl"


def read(path: Path) -> tuple[list[dict], dict]:
    (doc,) = claude_code.decode(path.read_bytes(), path.name)
    pc.validate(doc)
    src = [json.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    assert [json.loads(x) for x in claude_code.encode([doc]).splitlines()] == src  # written back as it was
    return src, doc


def test_an_api_error_claude_code_showed_is_a_flagged_context_turn():
    src, doc = read(API_ERROR)
    (line,) = [v for v in src if v.get("isApiErrorMessage") is True]
    assert line["message"]["model"] == "<synthetic>" and line["error"] == "unknown" and line["version"] == "2.1.17"
    (turn,) = [t for t in doc["turns"] if t["msg"].startswith("API Error: 500")]
    assert turn["src"] == "agent" and turn["copied"] is True and turn["kind"] == "context"
    assert turn["extra"]["claude_code"] == {"context": "synthetic", "api_error": "unknown"}
    assert "api_error" in pc.flags(doc)
    # The model never saw it: the user asks about it next, and the model answers it got none.
    after = [t["msg"] for t in doc["turns"][doc["turns"].index(turn) + 1 :] if t["src"] == "user"]
    assert after[0] == "I thinkt you got an API error?"
    kept = [m["content"] for m in pc.to_messages(doc, drop_copied=True)["messages"] if m["role"] == "assistant"]
    assert not any(isinstance(c, str) and c.startswith("API Error") for c in kept)
    assert doc["agent"]["model"] == "claude-sonnet-4-5-20250929"


def test_the_filler_after_a_local_command_is_context_and_no_model_of_the_agent():
    src, doc = read(FILLER)
    (line,) = [v for v in src if v.get("message", {}).get("model") == "<synthetic>"]
    assert line["isApiErrorMessage"] is False and line["message"]["content"][0]["text"] == "No response requested."
    (turn,) = [t for t in doc["turns"] if t["msg"] == "No response requested."]
    assert turn["copied"] is True and turn["extra"]["claude_code"] == {"context": "synthetic"}
    assert "api_error" not in pc.flags(doc)
    # the first agent turn is Claude Code's, not a model's: the agent's model is the one that answered after it
    assert doc["agent"]["model"] == "claude-opus-4-5-20251101"


def test_a_model_answer_is_unchanged():
    doc = decode([
        rec("user", "u", None, "hi"),
        rec("assistant", "a", "u", [{"type": "text", "text": "hello"}], m={"model": "claude-opus-4-6"},
            isApiErrorMessage=False),
    ])  # fmt: skip
    turn = doc["turns"][1]
    assert "copied" not in turn and "extra" not in turn and doc["agent"]["model"] == "claude-opus-4-6"
