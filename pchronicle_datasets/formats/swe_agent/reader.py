"""One SWE-agent ``.traj`` object → one Storyline document (docs/formats/swe-agent.md): the turns are
``history``'s messages; ``trajectory`` step ``k`` is paired with the ``k``-th assistant message that has an
``action``, and its values equal to the message's map to the same Storyline fields (never written twice)."""

from __future__ import annotations

from typing import Any

from ...errors import FormatError
from ...jsonio import json_shape, json_type, try_loads
from ..layout import Layout, same, walkable
from ..residual import origin
from .fields import INFO, INVERSE, MODEL_PATH, NAME, ROLE_SRC, STATS, STEP_KEYS


def is_record(value: Any) -> bool:
    """An object whose ``trajectory`` holds SWE-agent steps (or is empty beside a ``history`` array and an
    ``info`` object), with a ``history`` array or an ``info`` object."""
    if not isinstance(value, dict) or not isinstance(value.get("trajectory"), list):
        return False
    traj = value["trajectory"]
    if not traj:
        return isinstance(value.get("history"), list) and isinstance(value.get("info"), dict)
    step = traj[0]
    return (
        isinstance(step, dict)
        and any(k in step for k in STEP_KEYS)
        and (isinstance(value.get("history"), list) or isinstance(value.get("info"), dict))
    )


def model_name(replay_config: Any) -> str | None:
    """``replay_config.agent.model.name`` (an object, or the JSON string older versions write).

    >>> model_name('{"agent": {"model": {"name": "gpt-4o"}}}'), model_name(None)
    ('gpt-4o', None)
    """
    if isinstance(replay_config, str):
        replay_config = try_loads(replay_config)[1]
    node = replay_config
    for key in MODEL_PATH:
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, str) and node else None


class _Reader:
    def __init__(self, value: dict, document_id: str | None, line: int | None, session: str) -> None:
        self.value = value
        self.document_id = document_id
        self.line = line
        self.session = session
        self.lay = Layout(NAME, document_id, INVERSE)
        self.turns: list[dict[str, Any]] = []
        self.pairs: list[tuple[int, int, bool]] = []  # (turn, history index, call made from the action text)
        self.by_id: dict[str, tuple[int, int]] = {}
        self.latest: dict[str, str] = {}  # a source call id → the Storyline id of its latest call (renamed repeats)
        self.tcids: set[str] = set()
        self.answered: set[str] = set()

    def error(self, pointer: str, reason: str) -> FormatError:
        return FormatError(reason, pointer=pointer, document_id=self.document_id, line=self.line)

    def tcid(self, wanted: str) -> str:
        tcid, n = wanted, 1
        while tcid in self.tcids:
            n += 1
            tcid = f"{wanted}-{n}"
        self.tcids.add(tcid)
        return tcid

    def read(self) -> dict[str, Any]:
        value, lay = self.value, self.lay
        story: dict[str, Any] = {"schema_version": "storyline/v1", "origin": origin(NAME, self.document_id)}
        story["session"] = self.session
        story["agent"] = {"id": NAME, "name": NAME}
        history = value.get("history")
        if isinstance(history, list):
            if not history:
                lay.keep("/history", history)
            for i, msg in enumerate(history):
                self.message(f"/history/{i}", msg)
        elif "history" in value:
            lay.keep("/history", history)
        traj = value.get("trajectory")
        if isinstance(traj, list):
            if not traj:
                lay.keep("/trajectory", traj)
            for k, step in enumerate(traj):
                self.step(k, step)
        elif "trajectory" in value:
            lay.keep("/trajectory", traj)
        if not self.turns and not isinstance(value.get("info"), dict):
            # nothing but empty arrays: nothing of SWE-agent's to read (a run that ended at once still has info)
            raise self.error("/history", "a SWE-agent trajectory with no message, no step and no info holds nothing")
        story["turns"] = self.turns
        task: dict[str, Any] = {}
        for key, val in value.items():
            if key in ("history", "trajectory"):
                continue
            if key == "_storyline" and lay.kept.take_envelope(val):
                continue
            if key == "environment" and isinstance(val, str) and val:
                task["env"] = {"name": val}
                lay.map("/environment", val, "/task/env/name", val)
            elif key == "info" and walkable(val) and isinstance(val, dict):
                self.info(val, task, story)
            else:
                lay.keep(f"/{key}", val)
        model = model_name(value.get("replay_config"))
        if model is not None:
            story["agent"]["model"] = model
        if task:
            story["task"] = task
        story["meta"] = {NAME: lay.hints("object")}
        return lay.kept.finish(story)

    def info(self, info: dict, task: dict, story: dict) -> None:
        self.lay.info(info, story, task, INFO, STATS)

    def message(self, ptr: str, msg: Any) -> None:
        lay = self.lay
        if not (isinstance(msg, dict) and isinstance(msg.get("role"), str) and msg["role"] and walkable(msg)):
            raise self.error(ptr, f"a history message is an object with a string role, got {json_shape(msg)}")
        role = msg["role"]
        if role == "tool" and self.result(ptr, msg):
            return
        if role == "user" and self.shown(ptr, msg):
            return
        t = len(self.turns)
        turn: dict[str, Any] = {"id": t + 1, "src": ROLE_SRC.get(role, role)}
        lay.map(f"{ptr}/role", role, f"/turns/{t}/src", turn["src"], "role")
        turn["msg"] = msg.get("content")
        if "content" in msg:
            lay.map(f"{ptr}/content", msg["content"], f"/turns/{t}/msg", msg["content"])
        used = {"role", "content"}
        if role == "assistant":
            if "thought" in msg and "content" in msg and same(msg["thought"], msg["content"]):
                lay.map(f"{ptr}/thought", msg["thought"], f"/turns/{t}/msg", turn["msg"])
                used.add("thought")
            calls: list[dict[str, Any]] = []
            text_call = False
            if isinstance(msg.get("tool_calls"), list) and msg["tool_calls"]:
                used.add("tool_calls")
                for c, call in enumerate(msg["tool_calls"]):
                    entry = lay.openai_call(
                        f"{ptr}/tool_calls/{c}", call, f"/turns/{t}/tool_calls/{len(calls)}", self.tcids
                    )
                    if entry is not None:
                        self.by_id[entry["tcid"]] = (t, len(calls))
                        self.latest[call["id"]] = entry["tcid"]
                        calls.append(entry)
            elif isinstance(msg.get("action"), str):
                # The text protocol: the action SWE-agent parsed from the response is run in its shell.
                used.add("action")
                text_call = True
                calls.append(
                    {
                        "tcid": self.tcid(f"action-{ptr.rsplit('/', 1)[1]}"),
                        "fn": "bash",
                        "args": {"command": msg["action"]},
                    }
                )
                lay.map(f"{ptr}/action", msg["action"], f"/turns/{t}/tool_calls/0/args/command", msg["action"])
            if calls:
                turn["tool_calls"] = calls
            if isinstance(msg.get("action"), str):
                self.pairs.append((t, int(ptr.rsplit("/", 1)[1]), text_call))
        lay.rest(msg, ptr, used)
        self.turns.append(turn)

    def result(self, ptr: str, msg: dict) -> bool:
        """A ``tool`` message answering one call by ``tool_call_ids``: a result on the calling turn. False when
        it answers no call (it is then a turn of source ``tool``)."""
        ids = msg.get("tool_call_ids")
        if not (isinstance(ids, list) and len(ids) == 1 and isinstance(ids[0], str)):
            return False
        tcid = self.latest.get(ids[0])  # a repeated id answers its latest call
        if tcid is None or tcid in self.answered:
            return False
        self.answered.add(tcid)
        t, _ = self.by_id[tcid]
        at = self.lay.result_message(ptr, msg, self.turns[t], t, tcid, "tool_role")
        self.lay.map(
            f"{ptr}/tool_call_ids/0", ids[0], f"{at}/source_call_id", tcid, None if tcid == ids[0] else "renamed_id"
        )
        self.lay.rest(msg, ptr, ("role", "content", "tool_call_ids"))
        return True

    def shown(self, ptr: str, msg: dict) -> bool:
        """The text protocol: the ``user`` message right after an assistant message whose action was run shows
        the model that action's output. It is the result of the action's call, as the ``tool`` message is with
        function calling (and the step's raw ``observation`` then stays residual, as it does there): read as a
        user turn too, its text came twice, a tool message and a user message, in every training example."""
        if not self.pairs:
            return False
        t, i, text_call = self.pairs[-1]
        turn = self.turns[t] if t == len(self.turns) - 1 else None
        if not (text_call and turn is not None and i == int(ptr.rsplit("/", 1)[1]) - 1 and "observation" not in turn):
            return False
        tcid = turn["tool_calls"][0]["tcid"]
        self.answered.add(tcid)
        self.lay.result_message(ptr, msg, turn, t, tcid, "shown_role")
        self.lay.rest(msg, ptr, ("role", "content"))
        return True

    def step(self, k: int, step: Any) -> None:
        lay = self.lay
        ptr = f"/trajectory/{k}"
        if not (isinstance(step, dict) and walkable(step)):
            raise self.error(ptr, f"a trajectory step is an object, got {json_type(step)}")
        used: set[str] = set()
        if k < len(self.pairs):
            t, _, text_call = self.pairs[k]
            turn = self.turns[t]
        else:
            # A step no history message stands for: its own agent turn.
            t, text_call = len(self.turns), isinstance(step.get("action"), str)
            turn = {"id": t + 1, "src": "agent", "msg": ""}
            text = next((step[key] for key in ("response", "thought") if isinstance(step.get(key), str)), None)
            if text is not None:
                turn["msg"] = text
            if text_call:
                turn["tool_calls"] = [
                    {"tcid": self.tcid(f"step-{k}"), "fn": "bash", "args": {"command": step["action"]}}
                ]
                lay.map(f"{ptr}/action", step["action"], f"/turns/{t}/tool_calls/0/args/command", step["action"])
                used.add("action")
            self.turns.append(turn)
        for key in ("response", "thought"):
            if key in step and same(step[key], turn["msg"]):
                lay.map(f"{ptr}/{key}", step[key], f"/turns/{t}/msg", turn["msg"])
                used.add(key)
        calls = turn.get("tool_calls") or []
        if text_call and calls:
            if "action" not in used and same(step.get("action"), calls[0]["args"].get("command")):
                lay.map(f"{ptr}/action", step["action"], f"/turns/{t}/tool_calls/0/args/command", step["action"])
                used.add("action")
            if "observation" in step and "observation" not in turn:
                turn["observation"] = {
                    "results": [{"content": step["observation"], "source_call_id": calls[0]["tcid"]}]
                }
                lay.map(
                    f"{ptr}/observation",
                    step["observation"],
                    f"/turns/{t}/observation/results/0/content",
                    step["observation"],
                )
                used.add("observation")
        if isinstance(step.get("state"), dict) and "env" not in turn:
            turn["env"] = {"state": step["state"]}
            lay.map(f"{ptr}/state", step["state"], f"/turns/{t}/env/state", step["state"])
            used.add("state")
        lay.rest(step, ptr, used)


def read_traj(value: Any, document_id: str | None, line: int | None, session: str) -> dict[str, Any]:
    """The Storyline document of one parsed ``.traj`` object; ``FormatError`` with its pointer when it has none."""
    if not (isinstance(value, dict) and walkable(value)):
        raise FormatError(
            f"a SWE-agent trajectory is an object with trajectory and history, got {json_type(value)}",
            document_id=document_id,
            line=line,
        )
    if not (isinstance(value.get("trajectory"), list) or isinstance(value.get("history"), list)):
        # Without either there is nothing of SWE-agent's to read: the whole object would be residual.
        raise FormatError(
            "a SWE-agent trajectory has a trajectory array of steps or a history array of messages",
            pointer="/trajectory",
            document_id=document_id,
            line=line,
        )
    return _Reader(value, document_id, line, session).read()
