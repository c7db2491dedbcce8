"""Which turns to train (``trainable=``) and why a conversation may not belong in a training set (``flags``).

``trainable``: ``"all"`` (every assistant message, today's output), ``"last"`` (the last assistant message: LLaMA-
Factory's ``mask_history``, NeMo's ``train_on_last_turn_only``), ``"final_answer"`` (the last assistant message
without a tool call; none when the conversation has none). ``mask_tool_arguments=True`` also leaves out the
assistant messages whose only content is a call. The marks are computed on the rendered output, so
``to_messages`` and ``to_sharegpt`` agree message for message (one assistant message / ``gpt`` element per agent
turn). A policy never trains the message of a copied agent turn (``copied: true``: a fork's copy of its parent's
answers, an API error the harness wrote; ``copied_answers``): "last" is the last one the conversation itself gave.

>>> train_marks([("user", False, False), ("assistant", True, True), ("tool", False, False),
...              ("assistant", False, False)], "final_answer")
[False, False, False, True]
>>> train_marks([("user", False, False), ("assistant", True, True), ("assistant", False, False)], "all",
...             mask_tool_arguments=True)
[False, False, True]
>>> train_marks([("user", False, False), ("assistant", False, False), ("user", False, False),
...              ("assistant", False, False)], "last", copied=[False, True])
[False, True, False, False]
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..features import is_row, row_to_story
from ..formats.base import INTERRUPTED
from ..linking import answered_by_provider, place_results
from ..markup_tags import EMPTY_THINK, THINK, TOOL_CALL

__all__ = [
    "FLAGS",
    "TRAINABLE",
    "check_trainable",
    "copied_answers",
    "flags",
    "message_marks",
    "sharegpt_marks",
    "train_marks",
]

TRAINABLE = ("all", "last", "final_answer")

#: Every flag ``flags`` can give, in the order it gives them.
FLAGS = (
    "incomplete",
    "failed",
    "api_error",
    "injected",
    "compaction",
    "subagent",
    "tool_call_unanswered",
    "interrupted",
)

# ``/task/result/status`` values that say the task failed (lower-cased).
_FAILED_STATUS = frozenset({"failed", "failure", "fail", "error", "errored", "timeout", "timed_out", "cancelled"})
# ``extra.<format>.context`` values of the context turns harness readers write (Claude Code: isMeta lines, hook
# output and reminders → "meta"; isCompactSummary → "compact_summary").
# ``injected``: text a hook, a skill or a command expansion put in the conversation, not the user's words and not
# what the harness writes in every session. Claude Code's isMeta lines are such text (command caveats, skill
# bodies, expanded slash commands); Codex's are a hook's prompt (``<hook_prompt>``), a hook's or an app's
# additional context (``<external_context>``, and a developer message tagged ``hooks.…``), a skill's body
# (``<skill>``). Codex's environment context and AGENTS.md start every session: not flagged.
_INJECTED = frozenset({"meta", "hook_prompt", "external_context", "skill"})
_INJECTED_PREFIX = "hooks."  # codex-cli 0.15x ``content_item_kinds`` of what a hook added (hooks.additional_context)
_COMPACTION = frozenset({"compact_summary"})
# The key of a context turn's ``extra`` that the Codex and Pi readers write for a compaction: Codex's ``compacted``
# lines and ``compaction`` items, Pi's ``compaction`` entries (their summary is the turn's message).
_COMPACTION_EXTRA = "compaction"
# ``/parent/rel`` values of a child document that is no subagent: a compaction sidechain (its own flag), and a
# session branched from another one (``"fork"``: Claude Code's ``forkedFrom``, Codex's ``forked_from_id``), the
# user's own conversation whose copied history is marked ``copied`` turn by turn.
_NOT_SUBAGENT = frozenset({"compaction", "fork"})
_CALL_BLOCK = re.compile(re.escape(TOOL_CALL[0]) + r".*?" + re.escape(TOOL_CALL[1]) + r"\n?", re.S)


def check_trainable(trainable: str) -> None:
    if trainable not in TRAINABLE:
        raise ValueError(f'trainable is "all", "last" or "final_answer", got {trainable!r}')


def copied_answers(story: Mapping[str, Any], *, drop_copied: bool = False) -> list[bool]:
    """One flag per assistant message a rendering of ``story`` gives (one per agent turn, in order; the copied ones
    left out when ``drop_copied``): whether its turn is a copy (``copied: true``), which no policy trains.

    >>> copied_answers({"turns": [{"src": "user"}, {"src": "agent", "copied": True}, {"src": "agent"}]})
    [True, False]
    """
    return [
        bool(t.get("copied"))
        for t in story.get("turns") or ()
        if isinstance(t, Mapping) and t.get("src") == "agent" and not (drop_copied and t.get("copied"))
    ]


def train_marks(
    kinds: list[tuple[str, bool, bool]],
    trainable: str,
    *,
    mask_tool_arguments: bool = False,
    copied: list[bool] | None = None,
) -> list[bool]:
    """One mark per message: trained or not. ``kinds``: ``(role, has_call, call_only)`` per message, the role
    ``"assistant"`` for the model's messages; ``copied``: one flag per assistant message (``copied_answers``), the
    copies never trained (a count that does not match is an error: the rendering broke its one message per turn)."""
    check_trainable(trainable)
    agent = [i for i, (role, _, _) in enumerate(kinds) if role == "assistant"]
    if copied is not None:
        if len(copied) != len(agent):
            raise ValueError(f"{len(agent)} assistant message(s) rendered for {len(copied)} agent turn(s)")
        agent = [i for i, copy in zip(agent, copied, strict=True) if not copy]
    if trainable == "last":
        agent = agent[-1:]
    elif trainable == "final_answer":
        agent = [i for i in agent if not kinds[i][1]][-1:]
    if mask_tool_arguments:
        agent = [i for i in agent if not kinds[i][2]]
    chosen = set(agent)
    return [i in chosen for i in range(len(kinds))]


def message_marks(
    messages: list[Mapping[str, Any]],
    trainable: str,
    *,
    mask_tool_arguments: bool = False,
    copied: list[bool] | None = None,
):
    """``train_marks`` of ``to_messages``' messages: a call-only message has calls, no text, no reasoning."""
    kinds = []
    for m in messages:
        calls = bool(m.get("tool_calls"))
        only = calls and not (m.get("content") or "").strip() and not (m.get("reasoning_content") or "").strip()
        kinds.append((m.get("role"), calls, only))
    return train_marks(kinds, trainable, mask_tool_arguments=mask_tool_arguments, copied=copied)


def sharegpt_marks(
    conversations: list[Mapping[str, Any]],
    trainable: str,
    *,
    mask_tool_arguments: bool = False,
    copied: list[bool] | None = None,
):
    """``train_marks`` of ``to_sharegpt``'s elements: a ``gpt`` value with a ``<tool_call>`` block has a call; it
    is call-only when nothing but the blocks and an empty ``<think>`` is left."""
    kinds = []
    for c in conversations:
        value = c.get("value") or ""
        calls = c.get("from") == "gpt" and TOOL_CALL[0] in value
        rest = _CALL_BLOCK.sub("", value) if calls else value
        if rest.startswith(EMPTY_THINK):
            rest = rest[len(EMPTY_THINK) :]
        only = calls and not rest.strip() and THINK[0] not in rest
        kinds.append(("assistant" if c.get("from") == "gpt" else c.get("from"), calls, only))
    return train_marks(kinds, trainable, mask_tool_arguments=mask_tool_arguments, copied=copied)


def _context(turn: Mapping[str, Any]) -> str | None:
    """``extra.<format>.context`` of a context turn (``copied: true``), or None."""
    if not turn.get("copied"):
        return None
    extra = turn.get("extra")
    for value in extra.values() if isinstance(extra, Mapping) else ():
        if isinstance(value, Mapping) and isinstance(value.get("context"), str):
            return value["context"]
    return None


def _compaction_turn(turn: Mapping[str, Any]) -> bool:
    """A context turn a compaction wrote (``_COMPACTION_EXTRA`` in its ``extra``: Codex, Pi)."""
    extra = turn.get("extra")
    return turn.get("kind") == "context" and isinstance(extra, Mapping) and _COMPACTION_EXTRA in extra


def _api_error(story: Mapping[str, Any], turn: Mapping[str, Any]) -> bool:
    extra = turn.get("extra")
    for value in extra.values() if isinstance(extra, Mapping) else ():
        if isinstance(value, Mapping) and (value.get("api_error") or value.get("isApiErrorMessage")):
            return True
    return turn.get("kind") == "api_error"


def _failed(story: Mapping[str, Any]) -> bool:
    task = story.get("task")
    result = task.get("result") if isinstance(task, Mapping) else None
    if not isinstance(result, Mapping):
        return False
    status = result.get("status")
    return (
        result.get("correct") is False
        or (isinstance(status, str) and status.strip().lower() in _FAILED_STATUS)
        or result.get("error") not in (None, "", {}, [])
    )


def _meta_api_errors(story: Mapping[str, Any]) -> bool:
    """A harness that keeps its API-error records as residual counts them in ``/meta/<format>/counts``
    (Claude Code: ``system/api_error``)."""
    meta = story.get("meta")
    for value in meta.values() if isinstance(meta, Mapping) else ():
        counts = value.get("counts") if isinstance(value, Mapping) else None
        if isinstance(counts, Mapping) and any(str(k).endswith("api_error") and v for k, v in counts.items()):
            return True
    return False


def _meta_interrupted(story: Mapping[str, Any]) -> bool:
    """A harness reader counts the times the user stopped the agent in ``/meta/<format>/interrupted``
    (``formats.base.INTERRUPTED``: Claude Code's interrupt messages, Codex's ``turn_aborted`` events)."""
    meta = story.get("meta")
    return any(
        isinstance(value, Mapping) and type(value.get(INTERRUPTED)) is int and value[INTERRUPTED] > 0
        for value in (meta.values() if isinstance(meta, Mapping) else ())
    )


def flags(example: Mapping[str, Any]) -> list[str]:
    """Why a conversation may not belong in a training set (``FLAGS`` order; empty: none), for a Storyline
    document or a row of ``STORYLINE_FEATURES``: ``ds.filter(lambda ex: not pc.flags(ex))``. The rule of each
    flag, and the formats that produce it: ``docs/training.md`` ("Flags").

    >>> import pchronicle_datasets as pc
    >>> story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"},
    ...          "task": {"result": {"correct": False}}, "turns": [
    ...     {"id": 1, "src": "user", "msg": "ls"},
    ...     {"id": 2, "src": "agent", "msg": "", "tool_calls": [{"tcid": "c1", "fn": "ls", "args": {}}]}]}
    >>> pc.flags(story)
    ['failed', 'tool_call_unanswered']
    >>> pc.flags(pc.story_to_row({**story, "task": {"result": {"correct": True}}, "turns": story["turns"][:1]}))
    ['incomplete']
    """
    story = row_to_story(example) if is_row(example) else example
    turns = [t for t in story.get("turns") or [] if isinstance(t, Mapping)]
    out = []
    roles = []
    for turn in turns:
        roles.append(turn.get("src"))
        obs = turn.get("observation")
        if (isinstance(obs, Mapping) and obs.get("results")) or any(
            isinstance(c, Mapping) and "result" in c for c in turn.get("tool_calls") or []
        ):
            roles.append("result")
    if "agent" not in roles or roles[-1] == "result":
        out.append("incomplete")
    if _failed(story):
        out.append("failed")
    if _meta_api_errors(story) or any(_api_error(story, t) for t in turns):
        out.append("api_error")
    contexts = {_context(t) for t in turns}
    if contexts & _INJECTED or any(c.startswith(_INJECTED_PREFIX) for c in contexts if c):
        out.append("injected")
    parent = story.get("parent")
    rel = parent.get("rel") if isinstance(parent, Mapping) else None
    if contexts & _COMPACTION or rel == "compaction" or any(_compaction_turn(t) for t in turns):
        out.append("compaction")
    if isinstance(parent, Mapping) and rel not in _NOT_SUBAGENT:
        out.append("subagent")
    if _unanswered(story, turns):
        out.append("tool_call_unanswered")
    if _meta_interrupted(story):
        out.append("interrupted")
    return out


def _unanswered(story: Mapping[str, Any], turns: list[Mapping[str, Any]]) -> bool:
    # A call the provider ran inside the response (a hosted web search) has its results there, never in a record.
    calls = {
        c["tcid"]
        for t in turns
        for c in t.get("tool_calls") or []
        if isinstance(c, Mapping) and "tcid" in c and not answered_by_provider(c)
    }
    if not calls:
        return False
    try:
        placed, _ = place_results({"turns": turns})
    except (KeyError, TypeError, AttributeError):  # a malformed document: validate() names the problem
        return False
    answered = {cid for results in placed.values() for cid, _, _ in results}
    return not calls <= answered
