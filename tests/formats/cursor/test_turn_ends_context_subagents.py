"""Cursor's turn ends, its own user lines and its subagents' transcripts (docs/formats/cursor.md, "Decisions").

No public transcript with a licence holds an aborted turn, a ``<dynamic_tools>`` line or a ``subagents/`` folder
(tests/data/cursor/README.md): the lines here are written in the shapes the tools that read real transcripts quote —
``{"type":"turn_ended","status":"error","error":"User aborted request"}`` and ``status: "aborted"`` (herdr's
transcript tests), a user line ``<dynamic_tools>\\n…\\n</dynamic_tools>`` (entireio/cli's cursor tests, a Markdown
export of a real session), ``agent-transcripts/<id>/subagents/<id>.jsonl`` (herdr, a Rust reader's docs)."""

from __future__ import annotations

import json
import os

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import from_storyline, into_storyline

PARENT = "e43d3c8e-3c1f-4eb9-a7fe-777ee1ea7902"
CHILD = "5b1d9a70-2c4e-4f7b-9d3a-0c6e8f1a2b3c"
CATALOG = (
    "<dynamic_tools>\nYou have access to tools through dynamic namespaces, e.g. MCP servers, using `GetDynamicTools`"
    " and `CallDynamicTool`.\n</dynamic_tools>"
)


def ask(q):
    text = f"<timestamp>Monday, Sep 28, 2026, 6:05 AM (UTC+2)</timestamp>\n<user_query>\n{q}\n</user_query>"
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def said(text, *tools):
    parts = [{"type": "text", "text": f"{text}\n\n[REDACTED]"}]
    parts += [{"type": "tool_use", "name": name, "input": {"command": "ls"}} for name in tools]
    return {"role": "assistant", "message": {"content": parts}}


def user_text(text):
    return {"role": "user", "message": {"content": [{"type": "text", "text": text}]}}


def ended(status="success", error=None):
    return {"type": "turn_ended", "status": status, **({"error": error} if error else {})}


def text_of(lines):
    return "".join(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n" for line in lines)


def read(lines, name=f"agent-transcripts/{PARENT}/{PARENT}.jsonl"):
    [story] = into_storyline("cursor", text_of(lines), document_id=name)
    return story


@pytest.mark.parametrize(
    ("end", "interrupted"),
    [
        (ended("error", "User aborted request"), 1),
        (ended("aborted"), 1),
        (ended("success"), 0),
        (ended("error", "You've hit your usage limit"), 0),  # not the user's stop
    ],
)
def test_a_turn_the_user_stopped_is_counted_as_interrupted(end, interrupted):
    story = read([ask("run the tests"), said("Running them.", "Shell"), end])
    assert story["meta"]["cursor"].get("interrupted", 0) == interrupted
    assert ("interrupted" in pc.flags(story)) == bool(interrupted)
    assert [t["src"] for t in story["turns"]] == ["user", "agent"]  # the line itself stays residual, whole
    assert from_storyline("cursor", [story]) == text_of([ask("run the tests"), said("Running them.", "Shell"), end])


@pytest.mark.parametrize(
    ("end", "api_errors"),
    [
        # Its provider's words (a real Cursor 3.23 Free-plan line as a reader of real transcripts quotes it).
        (ended("error", "You've hit your usage limit Get Cursor Pro for more Agent usage."), 1),
        (ended("error"), 1),  # an error without its words: still not the user's stop
        (ended("error", "User aborted request"), 0),  # the user's stop: interrupted, not api_error
        (ended("aborted"), 0),
        (ended("success"), 0),
    ],
)
def test_a_turn_cursor_ended_in_error_is_an_api_error(end, api_errors):
    lines = [ask("run the tests"), said("Running them.", "Shell"), end]
    story = read(lines)
    assert story["meta"]["cursor"].get("counts", {}).get("turn_ended/api_error", 0) == api_errors
    assert ("api_error" in pc.flags(story)) == bool(api_errors)
    assert from_storyline("cursor", [story]) == text_of(lines)  # the line stays residual: the same file back
    # Only the end of a turn counts: an error logged after a successful end is not the turn's.
    assert "api_error" not in pc.flags(read([ask("go"), said("Done."), ended(), end]))


def test_an_abort_logged_after_the_turn_ended_is_no_interruption():
    lines = [ask("go"), said("Done."), ended(), ended("error", "User aborted request")]
    assert "interrupted" not in read(lines)["meta"]["cursor"]
    lines = [ask("go"), said("Done."), ended(), ask("again"), said("On it.", "Shell"), ended("aborted")]
    assert read(lines)["meta"]["cursor"]["interrupted"] == 1


@pytest.mark.parametrize("tag", ["dynamic_tools", "available_subagent_types", "agent_skills"])
def test_a_user_line_cursor_wrote_itself_is_a_context_turn(tag):
    catalog = CATALOG if tag == "dynamic_tools" else f"<{tag}>\n…\n</{tag}>"
    lines = [ask("ship it"), user_text(catalog), said("Shipping.", "Shell"), ended()]
    story = read(lines)
    query, injected = story["turns"][:2]
    assert "copied" not in query and query["msg"] == [{"type": "text", "text": "ship it"}]
    assert injected["copied"] is True and injected["kind"] == "context"
    assert injected["extra"] == {"cursor": {"context": tag}}
    assert injected["msg"] == [{"type": "text", "text": catalog}]
    assert "injected" not in pc.flags(story)  # a tool catalog is no reason to leave a conversation out (not "meta")
    kept = pc.to_messages(story, arguments="object")["messages"]
    assert [m["content"] for m in kept if m["role"] == "user"] == ["ship it", catalog]  # the model read it
    dropped = pc.to_messages(story, arguments="object", drop_copied=True)["messages"]
    assert [m["content"] for m in dropped if m["role"] == "user"] == ["ship it"]
    assert from_storyline("cursor", [story]) == text_of(lines)


def test_the_user_s_own_words_that_mention_a_tag_stay_theirs():
    story = read([ask("<dynamic_tools> what is this block?"), said("A tool catalog.")])
    assert "copied" not in story["turns"][0]
    story = read([user_text("please look at <dynamic_tools> in the prompt"), said("Sure.")])
    assert "copied" not in story["turns"][0]


def test_a_subagent_transcript_is_linked_to_its_parent(tmp_path):
    folder = tmp_path / "projects" / "Users-me-app" / "agent-transcripts" / PARENT
    (folder / "subagents").mkdir(parents=True)
    (folder / f"{PARENT}.jsonl").write_text(
        text_of([ask("audit the repo"), said("Delegating.", "Task"), said("The audit found nothing."), ended()])
    )
    (folder / "subagents" / f"{CHILD}.jsonl").write_text(
        text_of([user_text("Audit the repo for unused files."), said("Looking.", "Glob"), said("None.")])
    )
    os.environ["HF_DATASETS_OFFLINE"] = "1"
    from datasets import load_dataset

    ds = load_dataset("pchronicle", "auto", data_dir=str(tmp_path), split="train", cache_dir=str(tmp_path / "c"))
    rows = {row["session"]: row for row in ds}
    assert set(rows) == {PARENT, CHILD}
    assert {k: v for k, v in rows[CHILD]["parent"].items() if v is not None} == {"psid": PARENT, "rel": "subagent"}
    assert rows[PARENT]["children"] == [CHILD]
    assert rows[PARENT]["parent"] is None
    assert pc.flags(rows[CHILD]) == ["subagent", "tool_call_unanswered"]
    msgs = ds.map(pc.to_messages, batched=True, remove_columns=ds.column_names, features=pc.MESSAGES_FEATURES)
    by_session = dict(zip(ds["session"], msgs["messages"], strict=True))
    assert [m["content"] for m in by_session[CHILD]] == ["Audit the repo for unused files.", "Looking.", "None."]
    # a child read alone keeps its link; written back, it is its file
    child = folder / "subagents" / f"{CHILD}.jsonl"
    [story] = into_storyline("cursor", child.read_bytes(), document_id=str(child.relative_to(tmp_path)))
    assert story["parent"] == {"psid": PARENT, "rel": "subagent"}
    assert from_storyline("cursor", [story]) == child.read_text()
