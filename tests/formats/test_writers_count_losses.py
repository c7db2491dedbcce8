"""A writer that gives another format's document a file of its own counts every field the file cannot hold.

Read back, the file of a real session (Claude Code, Codex, Pi, opencode, Gemini CLI, Qwen Code) written in another
format lacks whole Storyline fields (turn times, models, token usage, the task's environment…). Each such field must be
a kind of the loss report (``not in <format>: <pointer>``). Before, the Copilot CLI, opencode and ShareGPT
writers said nothing of them, and the Codex, Pi, Gemini CLI, Cursor, Claude Code and role/text writers counted
some (a turn's metrics) but not others (the task, the agent's model and name, a turn's model, kind or copy flag,
a time that is not text).
"""

from __future__ import annotations

from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.formats import get_format
from pchronicle_datasets.losses import collect_losses

DATA = Path(__file__).resolve().parents[1] / "data"
#: Real sessions of harnesses, the cline one modelled on a real history (tests/data/*/README.md says which).
SOURCES = {
    "claude-code": next((DATA / "claude_code" / "entire_2.1.36_compact").rglob("*.jsonl")),
    "codex": sorted((DATA / "codex").rglob("*.jsonl"))[0],
    # not before-compaction.excerpt.jsonl: a branch whose every turn is its parent's copy (docs/formats/pi.md,
    # "Forks"), which a request/response format writes no row of (its loss is no_agent_turn)
    "pi": DATA / "pi" / "large-session.excerpt.jsonl",
    "opencode": sorted((DATA / "opencode").rglob("*.json"))[0],
    "gemini-cli": sorted((DATA / "gemini_cli").rglob("*.json"))[0],
    "qwen-code": sorted((DATA / "qwen_code").rglob("chats/*.jsonl"))[0],
    "kimi-cli": sorted((DATA / "kimi_cli" / "kimi-home").rglob("context.jsonl"))[0],
    "kimi-code": sorted((DATA / "kimi_code" / "kimi-code-home").rglob("wire.jsonl"))[0],
    "openhands-sdk": DATA / "openhands_sdk" / "goal_events.jsonl",
    "cline": DATA / "cline" / "tasks" / "1777073170000" / "api_conversation_history.json",
    "goose": DATA / "goose" / "20260805_3.json",
}


def _write(fmt: str, stories: list[dict]) -> tuple[str, set[str]]:
    with collect_losses(propagate=False) as report:
        module = get_format(fmt)
        text = (
            module.encode_folder(stories)[module.FOLDER_FILES[0]]
            if fmt == "sharegpt"
            else pc.from_storyline(fmt, stories)
        )
    return text, set(report.counts)


def _gone(story: dict, back: dict) -> list[str]:
    """The pointers (``/turns/*/ts``…) of the fields ``story`` has that no part of ``back`` has at all."""
    gone = [f"/{key}" for key in story if key not in back and key not in ("origin", "meta", "unknown_key_counts")]
    gone += [f"/agent/{key}" for key in story["agent"] if key not in back["agent"]]
    turn_keys = {key for turn in back["turns"] for key in turn}
    if any("result" in call for turn in back["turns"] for call in turn.get("tool_calls") or ()):
        turn_keys.add("observation")  # the results read back on their calls (these files keep a result with it)
    gone += sorted({f"/turns/*/{key}" for turn in story["turns"] for key in turn if key not in turn_keys})
    return gone


@pytest.mark.parametrize(
    "fmt",
    [
        "copilot-cli",
        "opencode",
        "sharegpt",
        "codex",
        "pi",
        "gemini-cli",
        "cursor",
        "chat",
        "mini-swe-agent",
        "swe-agent",
        "openhands",
        "role-text",
        "atif",
        "openai-msg",
        "claude-code",
        "cline",
        "qwen-code",
        "kimi-cli",
        "kimi-code",
        "openhands-sdk",
        "goose",
    ],
)
@pytest.mark.parametrize("source", sorted(SOURCES))
def test_every_field_the_file_cannot_hold_is_counted(source, fmt):
    if source == fmt:
        pytest.skip("a document read from a format is written back as its source (tests/formats/<format>)")
    path = SOURCES[source]
    stories = pc.into_storyline(source, path.read_bytes(), document_id=path.name)[:1]
    text, kinds = _write(fmt, stories)
    [back] = pc.into_storyline(fmt, text, document_id="written")
    gone = _gone(stories[0], back)
    if source == "claude-code":  # ATIF holds every field of it; every other format drops some (token usage…)
        assert bool(gone) is (fmt != "atif"), gone
    named = {"/turns/*/observation": "tool results"}  # Cursor's kind for the results it cannot hold
    for pointer in gone:
        if pointer == "/unknown_fields":
            continue  # another format's residual rides in the _storyline envelope, or is counted by name
        kind = (f"not in {fmt}: {pointer}", f"not in {fmt}: {named.get(pointer, pointer)}")
        assert any(k.startswith(kind) for k in kinds), (pointer, sorted(kinds))
