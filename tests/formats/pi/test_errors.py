"""Assistant messages no model answered with: a provider call that failed (``stopReason: "error"``, an empty
``content``, ``errorMessage``), one the user stopped (``stopReason: "aborted"``), and one OpenClaw wrote itself
(``provider: "openclaw"``: a gateway notice, ``model: "gateway-injected"``). The first is flagged ``api_error``
(``extra.pi.api_error``), the second counted in ``/meta/pi/interrupted`` (``pc.flags``: ``interrupted``), the
third a context turn; every source value stays where the same-source writer takes it. The OpenClaw file is written
in the shape of a real OpenClaw session of 2026-03-08 (tests/data/pi/README.md); the aborted message is real
(pi-mono's fixture)."""

from __future__ import annotations

from pathlib import Path

import orjson

import pchronicle_datasets as pc
from pchronicle_datasets.formats import pi

DATA = Path(__file__).parents[2] / "data" / "pi"
OPENCLAW = DATA / "openclaw-2026.3-errors.written.jsonl"
LARGE = DATA / "large-session.excerpt.jsonl"


def read(path: Path) -> tuple[list[dict], dict]:
    (doc,) = pi.decode(path.read_bytes(), path.name)
    pc.validate(doc)
    src = [orjson.loads(x) for x in path.read_bytes().splitlines() if x.strip()]
    assert [orjson.loads(x) for x in pi.encode([doc]).splitlines()] == src
    return src, doc


def test_a_failed_provider_call_is_flagged_and_openclaws_own_notice_is_context():
    src, doc = read(OPENCLAW)
    failed = [e for e in src if e.get("message", {}).get("stopReason") == "error"]
    assert len(failed) == 2 and all(e["message"]["content"] == [] for e in failed)
    turns = doc["turns"]
    errors = [t for t in turns if (t.get("extra") or {}).get("pi", {}).get("api_error")]
    assert [t["extra"]["pi"]["api_error"] for t in errors] == ["fetch failed", "fetch failed"]
    assert all(t["src"] == "agent" and t["msg"] == "" for t in errors)
    assert "api_error" in pc.flags(doc)
    (notice,) = [t for t in turns if t.get("model") == "gateway-injected"]
    assert notice["msg"].startswith("⚠️ Agent failed before reply")
    assert notice["copied"] is True and notice["kind"] == "context"
    assert notice["extra"] == {"pi": {"context": "gateway-injected"}}
    answers = [m for m in pc.to_messages(doc, drop_copied=True)["messages"] if m["role"] == "assistant"]
    assert not any("Agent failed before reply" in (m["content"] or "") for m in answers)
    # the answers of a model are unchanged: the parallel calls, their results, the text with its signature
    (calls,) = [t["tool_calls"] for t in turns if t.get("tool_calls")]
    assert [c["tcid"] for c in calls] == ["call_a|fc_1", "call_b|fc_2"] and all("result" in c for c in calls)
    assert turns[-1]["msg"] == "[[reply_to_current]] hi there" and "extra" not in turns[-1]


def test_a_message_the_user_stopped_is_counted_as_an_interrupt():
    src, doc = read(LARGE)
    aborted = [e for e in src if e.get("message", {}).get("stopReason") == "aborted"]
    assert len(aborted) == 1
    assert doc["meta"]["pi"]["interrupted"] == 1 and "interrupted" in pc.flags(doc)


def test_the_agents_model_is_the_first_a_model_answered_with():
    # A v2/v3 header names no model (v1's had modelId): /agent/model is the model of the first agent turn a model
    # wrote, not OpenClaw's own notice ("gateway-injected"); a v1 header's modelId still decides.
    _, doc = read(OPENCLAW)
    assert doc["agent"]["model"] == "qwen3.5:9b"
    _, v1 = read(LARGE)
    assert v1["agent"]["model"] == orjson.loads(LARGE.read_bytes().splitlines()[0])["modelId"]
