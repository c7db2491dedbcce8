"""The conversation of a session file: the ``parentUuid`` chain that ends at its last message.

Claude Code appends every record with ``uuid`` and ``parentUuid``; a rewind (editing an earlier prompt, or
``/rewind``) starts a new branch from an earlier record, and the abandoned branch stays in the file before it.
The conversation is the chain from the last ``user``/``assistant`` record back to the root, followed across
compactions (a ``compact_boundary`` has no ``parentUuid`` but a ``logicalParentUuid``) and across a context reset
(a new root that is no message, such as the ``SessionStart`` hook record plan mode writes when it clears the
context to implement a plan: the conversation before it goes on there).

A record whose ``uuid`` is already on the conversation is a copy, not part of it (a session resumed elsewhere
writes its last message again, same ``uuid`` and ``message.id``: a real 2.1.12 resume of a 2.1.7 session does);
it stays residual as the records off the conversation do.

The chain alone is not the whole conversation: an assistant response is written one line per content block, and
with parallel tool calls each ``tool_result`` line is the child of *its* ``tool_use`` line, so the chain runs
through one of them only. The conversation therefore also holds every fragment of a response on the chain (same
``message.id``) and every result line that answers a call of the chain and hangs from the chain, and every
message the user typed mid-turn (an ``attachment`` record, ``fields.queued_prompt``) that hangs from it: one on
an abandoned branch is not.

>>> lines = [
...     (0, {"type": "user", "uuid": "u1", "parentUuid": None, "message": {"content": "hi"}}),
...     (1, {"type": "assistant", "uuid": "a1", "parentUuid": "u1", "message": {"id": "m1", "content": [
...         {"type": "tool_use", "id": "t1"}]}}),
...     (2, {"type": "assistant", "uuid": "a2", "parentUuid": "a1", "message": {"id": "m1", "content": [
...         {"type": "tool_use", "id": "t2"}]}}),
...     (3, {"type": "user", "uuid": "r2", "parentUuid": "a2", "message": {"content": [
...         {"type": "tool_result", "tool_use_id": "t2"}]}}),
...     (4, {"type": "user", "uuid": "r1", "parentUuid": "a1", "message": {"content": [
...         {"type": "tool_result", "tool_use_id": "t1"}]}}),
...     (5, {"type": "assistant", "uuid": "a3", "parentUuid": "r1", "message": {"id": "m2", "content": []}}),
... ]
>>> conversation(lines)
[0, 1, 2, 3, 4, 5]
>>> conversation(lines + [(6, {"type": "user", "uuid": "u2", "parentUuid": None, "message": {"content": "again"}})])
[6]
"""

from __future__ import annotations

from typing import Any

from .fields import queued_prompt

__all__ = ["conversation", "is_message_record"]


def is_message_record(value: Any) -> bool:
    """A ``user``/``assistant`` record with a ``message`` object and a ``uuid``."""
    return (
        isinstance(value, dict)
        and value.get("type") in ("user", "assistant")
        and isinstance(value.get("message"), dict)
        and isinstance(value.get("uuid"), str)
    )


def _uid(value: Any, key: str) -> str | None:
    v = value.get(key) if isinstance(value, dict) else None
    return v if isinstance(v, str) and v else None


def _message_id(value: dict) -> str | None:
    mid = value["message"].get("id")
    return mid if isinstance(mid, str) and mid else None


def _blocks(value: dict, kind: str, key: str) -> set[str]:
    content = value["message"].get("content")
    if not isinstance(content, list):
        return set()
    return {b[key] for b in content if isinstance(b, dict) and b.get("type") == kind and isinstance(b.get(key), str)}


def _hangs_from(value: dict, on: set, by_uuid: dict[str, tuple[int, Any]]) -> bool:
    """Whether the record hangs from the conversation: its parent is on it, or is reached from it through records
    that are no message (progress lines: a parallel call's fragment written after the hook or agent progress of
    the call before it is the child of that progress line)."""
    uid, seen = _uid(value, "parentUuid"), set()
    while uid is not None and uid not in seen:
        if uid in on:
            return True
        seen.add(uid)
        parent = by_uuid.get(uid)
        if parent is None or is_message_record(parent[1]):
            return False
        uid = _uid(parent[1], "parentUuid")
    return False


def conversation(lines: list[tuple[int, Any]]) -> list[int]:
    """The line indices of the conversation, in file order (see the module docs); ``[]`` when the file has no
    message record."""
    by_uuid: dict[str, tuple[int, Any]] = {}
    leaf = None
    for index, value in lines:
        uid = _uid(value, "uuid")
        if uid is not None and uid not in by_uuid:
            by_uuid[uid] = (index, value)
        if is_message_record(value):
            leaf = (index, value)
    if leaf is None:
        return []
    chain: set[int] = set()
    node: tuple[int, Any] | None = leaf
    while node is not None and node[0] not in chain:
        chain.add(node[0])
        parent = _uid(node[1], "parentUuid") or _uid(node[1], "logicalParentUuid")
        if parent is not None and parent in by_uuid:
            node = by_uuid[parent]
        elif not is_message_record(node[1]):
            # A root that is no message (the SessionStart hook of plan mode's "clear context and implement"), or
            # one whose parent is not in the file (a compact_boundary whose logicalParentUuid names a record Claude
            # Code never wrote, measured in real 2.1.39 and 2.1.42 files), starts a new segment of the same session:
            # the conversation before it continues there.
            node = next((iv for iv in reversed(lines) if iv[0] < node[0] and is_message_record(iv[1])), None)
        else:
            node = None
    members = {index for index, _ in lines if index in chain}
    on = {_uid(v, "uuid") for i, v in lines if i in members} - {None}
    messages = [(i, v) for i, v in lines if is_message_record(v)]
    changed = True
    while changed:  # fragments of a response on the chain, and the results of its calls that hang from it
        changed = False
        responses = {_message_id(v) for i, v in messages if i in members and v["type"] == "assistant"} - {None}
        calls = set().union(*(_blocks(v, "tool_use", "id") for i, v in messages if i in members))
        for i, v in messages:
            if i in members or v["uuid"] in on:
                continue  # (a record whose uuid is on the conversation already is a copy: a resumed session
                # writes its last message again, with the same uuid and message id; it is not a fragment)
            joins = v["type"] == "assistant" and _message_id(v) in responses
            answers = v["type"] == "user" and (ids := _blocks(v, "tool_result", "tool_use_id")) and ids <= calls
            if (joins or answers) and _hangs_from(v, on, by_uuid):
                members.add(i)
                on.add(v["uuid"])
                changed = True
    for i, v in lines:  # messages typed mid-turn: on the chain already (the next response's parent), or hanging from it
        uid = _uid(v, "uuid")
        if i in members or queued_prompt(v) is None or uid in on:
            continue
        if _hangs_from(v, on, by_uuid):
            members.add(i)
            if uid is not None:
                on.add(uid)
    return sorted(members)
