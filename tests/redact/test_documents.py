"""Where redaction looks in a Storyline document (decoded values, every string, structure kept), what it
leaves alone (ids, links, times), opaque reasoning payloads, rows (`ds.map(pc.redact_row)`), the CLI's
`redact --check` and `convert --redact`, and the optional Presidio scan."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from datasets import Dataset

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.redact.walk import OPAQUE_PLACEHOLDER
from tests.redact.planted import EMAIL, GH_CLASSIC, GIT_SHA, HF, PNG_B64, SHA256, UUID

ROOT = Path(__file__).resolve().parents[2]
TEXT = f"use {GH_CLASSIC} and mail {EMAIL}"
BLOB = "EqQBCkYIBxgCKkA" + "Zm9vYmFy" * 8


def document() -> dict:
    """Every place a string can be, each carrying TEXT; ids and times that must not change."""
    return {
        "schema_version": "storyline/v1",
        "origin": {"format": "chat", "document_id": "/home/alicel/logs/s.jsonl"},
        "session": UUID,
        "run": "run-" + GIT_SHA,
        "agent": {
            "id": "agent-1",
            "model": "m",
            "tools": [{"type": "function", "function": {"name": "sh", "description": TEXT}}],
            "extra": {"note": TEXT},
        },
        "turns": [
            {"id": 1, "src": "system", "msg": TEXT, "ts": "2026-12-01T21:32:17Z"},
            {"id": 2, "src": "user", "msg": [{"type": "text", "text": TEXT}, {"type": "image", "data": PNG_B64}]},
            {
                "id": 3,
                "src": "agent",
                "msg": [
                    {"type": "thinking", "thinking": TEXT, "signature": BLOB},
                    {"type": "redacted_thinking", "data": BLOB},
                ],
                "reason": TEXT,
                "ts": 1764624737.5,
                "tool_calls": [
                    {"tcid": "call_" + SHA256[:24], "fn": "sh", "args": {"cmd": TEXT, "signature": "def f(x): ..."}},
                    # args as the model wrote them: JSON text, spacing and key order kept
                    {"tcid": "call_2", "fn": "sh", "args": '{"cmd":  "' + TEXT + '", "n": 1.50, "u": "caf\\u00e9"}'},
                ],
                "observation": {"results": [{"source_call_id": "call_" + SHA256[:24], "content": TEXT}]},
                "extra": {
                    "thoughtSignature": BLOB,
                    "encrypted_content": "gAAAAA" + BLOB,
                    # Claude Code's and Pi's shapes, short signatures as their fixtures write them
                    "content": [
                        {"type": "thinking", "thinking": "", "signature": "EqQBCkYIBxg"},
                        {"type": "thinking", "thinking": "x", "thinkingSignature": "native-signature"},
                        {"type": "signature_delta", "signature": "EqQBCgIYAh"},
                    ],
                },
            },
        ],
        "task": {"env": {"id": "env-1"}, "result": {"final_answer": TEXT}},
        "notes": TEXT,
        "extra": {"k": [TEXT]},
        "meta": {"m": TEXT},
        "unknown_fields": {
            "sources": {
                "chat": {
                    "source_document_id": "x",
                    "fields": {
                        "/vendor": TEXT,
                        "/message/content/0/signature": BLOB,
                        "/tool/args/signature": "def f(x): ...",  # code, not a payload
                        f"/home/alicel/{HF}": 1,
                    },
                }
            }
        },
        "parent": {"psid": "parent-" + UUID, "scid": "call_9", "ptid": 4, "rel": "spawn"},
        "children": ["child-" + UUID],
    }


def _strings(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.append(k)
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    return out


def test_every_string_of_a_document_is_redacted_and_it_stays_valid():
    story = document()
    before = copy.deepcopy(story)
    r = pc.Redactor(key="k")
    out = r.story(story, file="s.jsonl")
    assert story == before  # a copy: the input is not changed
    pc.validate(out)
    strings = _strings(out, [])
    for secret in (GH_CLASSIC, EMAIL, HF, "alicel", BLOB):
        assert not any(secret in s for s in strings), secret
    gh = r.placeholder("github-token", GH_CLASSIC)
    assert out["turns"][0]["msg"] == f"use {gh} and mail {r.placeholder('email', EMAIL)}"
    # ids, links, times and base64 images untouched
    assert out["session"] == UUID and out["run"] == before["run"] and out["children"] == before["children"]
    assert out["parent"] == before["parent"] and out["turns"][0]["ts"] == "2026-12-01T21:32:17Z"
    calls = out["turns"][2]["tool_calls"]
    assert calls[0]["tcid"] == before["turns"][2]["tool_calls"][0]["tcid"]
    assert out["turns"][2]["observation"]["results"][0]["source_call_id"] == calls[0]["tcid"]
    assert out["turns"][1]["msg"][1]["data"] == PNG_B64
    # JSON-text args: only the changed string literal is re-encoded
    assert calls[1]["args"] == '{"cmd":  "' + out["turns"][0]["msg"] + '", "n": 1.50, "u": "caf\\u00e9"}'
    # a tool argument named signature is code, not a payload
    assert calls[0]["args"]["signature"] == "def f(x): ..."
    # opaque payloads, wherever they are
    thinking, redacted = out["turns"][2]["msg"]
    assert thinking["signature"] == OPAQUE_PLACEHOLDER and redacted["data"] == OPAQUE_PLACEHOLDER
    extra = out["turns"][2]["extra"]
    assert extra["thoughtSignature"] == extra["encrypted_content"] == OPAQUE_PLACEHOLDER
    assert [c.get("signature", c.get("thinkingSignature")) for c in extra["content"]] == [OPAQUE_PLACEHOLDER] * 3
    fields = out["unknown_fields"]["sources"]["chat"]["fields"]
    assert fields["/message/content/0/signature"] == OPAQUE_PLACEHOLDER
    assert fields["/tool/args/signature"] == "def f(x): ..."
    assert out["origin"]["document_id"].startswith("/home/<REDACTED:user-name:")
    by_rule = r.report.by_rule()
    assert by_rule["opaque-reasoning"] == 8 and by_rule["github-classic-token"] >= 10
    assert set(r.report.by_file()) == {"s.jsonl"}
    assert "/turns/*/tool_calls/*/args" in r.report.by_field()


def test_residual_pointer_keys_and_their_counts_stay_consistent():
    from pchronicle_datasets.schema import compute_unknown_key_counts

    fields = {"/files/~1home~1alicel~1a": 1, "/home/bobby/0/x": 2, "/m/3/home/carol/~1y": 3}
    uf = {"sources": {"chat": {"source_document_id": "x", "fields": fields}}}
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}],
        "unknown_fields": uf,
        "unknown_key_counts": compute_unknown_key_counts(uf),
    }
    out = pc.redact(story, key="k")  # validated: the counts still match the fields
    assert not any(n in json.dumps(out) for n in ("alicel", "bobby", "carol"))
    assert out["unknown_key_counts"] == compute_unknown_key_counts(out["unknown_fields"])


def test_opaque_payloads_can_be_kept():
    out = pc.Redactor(pc.RedactionConfig(strip_opaque=False), key="k").story(document())
    assert out["turns"][2]["extra"]["thoughtSignature"] == BLOB


def test_a_pi_thinking_signature_that_names_the_reasoning_field_is_kept():
    """pi-ai writes, for OpenAI-compatible chat providers, the name of the field the reasoning came in as
    ``thinkingSignature`` (the real DeepSeek session of tests/data/pi/deepseek-v4-tree-fragment.excerpt.jsonl):
    not an opaque payload. A real signature beside it is still stripped."""
    story = {
        "schema_version": "storyline/v1",
        "session": "s",
        "agent": {"id": "pi"},
        "turns": [{"id": 1, "src": "agent", "msg": "ok"}],
        "unknown_fields": {
            "sources": {
                "pi": {
                    "source_document_id": "x",
                    "fields": {
                        "/1/message/content/0/thinkingSignature": "reasoning_content",
                        "/2/message/content/0/thinkingSignature": "Ep0ICkYIChgCKkB0GUMpLujiM15vDxpe",
                    },
                }
            }
        },
        "extra": {"content": [{"type": "thinking", "thinking": "x", "thinkingSignature": "reasoning_content"}]},
    }
    out = pc.redact(story, key="k")
    fields = out["unknown_fields"]["sources"]["pi"]["fields"]
    assert fields["/1/message/content/0/thinkingSignature"] == "reasoning_content"
    assert fields["/2/message/content/0/thinkingSignature"] == OPAQUE_PLACEHOLDER
    assert out["extra"]["content"][0]["thinkingSignature"] == "reasoning_content"


def test_a_kimi_cli_think_signature_is_stripped():
    """Kimi CLI's ``think`` parts keep the provider's signature in ``encrypted`` (kosong ``ThinkPart``): stripped
    as residual of a part read apart and inside a part kept whole; Kimi's own ``null`` stays."""
    import json

    from pchronicle_datasets.formats import into_storyline

    think = {"type": "think", "think": "a", "encrypted": "EqQBCkYIBRgCKkCs9tbuSj0Ve7N1"}
    text = "".join(
        json.dumps(r) + "\n"
        for r in [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [think, {"type": "text", "text": "ok"}]},
            {"role": "assistant", "content": [think, {**think, "think": "b"}]},
            {"role": "assistant", "content": [{"type": "think", "think": "c", "encrypted": None}]},
        ]
    )
    [story] = into_storyline("kimi-cli", text, document_id="h/s/context.jsonl")
    fields = pc.redact(story, key="k")["unknown_fields"]["sources"]["kimi-cli"]["fields"]
    assert fields["/1/content/0/encrypted"] == OPAQUE_PLACEHOLDER
    assert [fields[f"/2/content/{k}"]["encrypted"] for k in (0, 1)] == [OPAQUE_PLACEHOLDER] * 2
    assert fields["/3/content/0/encrypted"] is None


def test_a_kimi_code_think_signature_is_stripped():
    """Kimi Code's ``content.part`` events carry kosong ``think`` parts: their ``encrypted`` stripped as the residual
    ``…/event/part/encrypted`` of a part read apart and inside parts kept whole."""
    import json

    from pchronicle_datasets.formats import into_storyline

    think = {"type": "think", "think": "a", "encrypted": "EqQBCkYIBRgCKkCs9tbuSj0Ve7N1"}

    def part(step: str, p: dict) -> dict:
        return {"type": "context.append_loop_event", "event": {"type": "content.part", "stepUuid": step, "part": p}}

    user = {"role": "user", "content": [{"type": "text", "text": "hi"}], "origin": {"kind": "user"}}
    text = "".join(
        json.dumps(r) + "\n"
        for r in [
            {"type": "context.append_message", "message": user},
            part("s1", think),
            part("s1", {"type": "text", "text": "ok"}),
            part("s2", think),
            part("s2", {**think, "think": "b"}),
        ]
    )
    [story] = into_storyline("kimi-code", text, document_id="w/s/agents/main/wire.jsonl")
    fields = pc.redact(story, key="k")["unknown_fields"]["sources"]["kimi-code"]["fields"]
    assert fields["/1/event/part/encrypted"] == OPAQUE_PLACEHOLDER
    assert [fields[f"/{i}/event/part"]["encrypted"] for i in (3, 4)] == [OPAQUE_PLACEHOLDER] * 2


def test_user_names_in_ids_are_replaced_consistently():
    story = {
        "schema_version": "storyline/v1",
        "session": "/home/alicel/s.jsonl#1",
        "agent": {"id": "a"},
        "turns": [{"id": 1, "src": "user", "msg": "hi"}],
        "parent": {"psid": "/home/alicel/s.jsonl#1"},
    }
    out = pc.redact(story, key="k")
    assert "alicel" not in json.dumps(out) and out["session"] == out["parent"]["psid"]


def test_redact_row_in_dataset_map():
    story = document()
    ds = Dataset(pc.rows_to_table([pc.story_to_row(story)]))
    out = ds.map(pc.redact_row, fn_kwargs={"key": "k"}, features=ds.features)
    assert out.features == pc.STORYLINE_FEATURES
    assert pc.row_to_story(out[0]) == pc.redact(story, key="k")
    # Training rows (to_sharegpt output) are redacted string by string.
    train = ds.map(pc.to_sharegpt, remove_columns=ds.column_names)
    red = train.map(pc.redact_row, fn_kwargs={"key": "k"}, features=train.features)
    assert GH_CLASSIC not in json.dumps(red.to_list()) and GH_CLASSIC in json.dumps(train.to_list())


def test_redact_check_and_convert_redact(tmp_path, capsys):
    path = tmp_path / "doc.storyline.json"
    path.write_text(json.dumps(document()))
    assert main(["redact", "--check", str(path)]) == 1
    out = capsys.readouterr().out
    assert "github-classic-token" in out and str(path) in out and "/turns/*/msg" in out
    for secret in (GH_CLASSIC, EMAIL, HF, "alicel"):
        assert secret not in out  # never a value, not even in a pointer through a key
    assert "/unknown_fields/sources/chat/fields/(key)" in out
    assert main(["redact", "--check", "--json", str(path), "--disable-rule", "email"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert "email" not in report["by_rule"] and report["entries"][0]["pointers"]

    clean = tmp_path / "clean.storyline.json"
    doc = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}}
    clean.write_text(json.dumps({**doc, "turns": [{"id": 1, "src": "user", "msg": f"{EMAIL} in /home/alicel"}]}))
    assert main(["redact", "--check", str(clean), "--allow-email", "acme-corp.io"]) == 1  # the path
    assert main(["redact", "--check", str(clean), "--allow-email", "acme-corp.io", "--disable-rule", "user-path"]) == 0
    capsys.readouterr()

    out_file = tmp_path / "out.storyline.jsonl"
    assert main(["convert", str(path), "--to", "storyline", "-o", str(out_file), "--redact", "--redact-key", "k"]) == 0
    written = out_file.read_text()
    assert GH_CLASSIC not in written and pc.Redactor(key="k").placeholder("github-token", GH_CLASSIC) in written
    err = capsys.readouterr().err
    assert "redaction:" in err
    assert main(["convert", str(path), "--to", "storyline", "-o", str(out_file)]) == 0
    assert GH_CLASSIC in out_file.read_text()  # convert redacts only when asked


def test_pii_scan_with_presidio():
    pytest.importorskip("presidio_analyzer", reason="the `pii` extra (presidio-analyzer) is not installed")
    r = pc.Redactor(pc.RedactionConfig(pii=True), key="k")
    out = r.text("call me at +1 212-555-0187 or pay with 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00")
    assert "212-555-0187" not in out and "4111 1111 1111 1111" not in out and "3704 0044" not in out
    assert "<REDACTED:phone-number:" in out and "<REDACTED:credit-card:" in out
    assert r.report.by_rule() == {"pii-phone-number": 1, "pii-credit-card": 1, "pii-iban-code": 1}
    # ids, times and hashes are not phone numbers
    near = f"at 1755856800.5, id {UUID}, commit {GIT_SHA}, sha256 {SHA256}"
    assert r.text(near) == near


def test_pii_without_presidio_says_what_to_install(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_presidio(name, *args, **kwargs):
        if name.startswith("presidio_analyzer"):
            raise ImportError(name)
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_presidio)
    with pytest.raises(pc.RedactionError, match=r"pchronicle-datasets\[pii\]"):
        pc.Redactor(pc.RedactionConfig(pii=True))
