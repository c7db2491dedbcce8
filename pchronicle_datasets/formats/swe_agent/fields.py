"""The SWE-agent ``.traj`` ↔ Storyline tables (docs/formats/swe-agent.md is their prose), held once for reader and
writer.

>>> SRC_ROLE["agent"], INFO["exit_status"], INVERSE["role"]("agent")
('assistant', 'status', 'assistant')
"""

from __future__ import annotations

NAME = "swe-agent"

#: ``history`` role → Storyline ``src`` (every other role is its own source); and back
ROLE_SRC = {"assistant": "agent"}
SRC_ROLE = {"agent": "assistant"}
#: How the same-source writer gives back a value the pointer map derived (``formats/layout.py``): by rule name.
#: ``shown_role``: the text protocol's ``user`` message that shows the model an action's output, a result (below).
INVERSE = {"role": lambda src: SRC_ROLE.get(src, src), "tool_role": lambda _: "tool", "shown_role": lambda _: "user"}
#: The keys of a ``trajectory`` step (a record's first step has one of them).
STEP_KEYS = ("action", "observation", "response", "thought")
#: ``info`` key → ``/task/result`` key (non-empty strings); ``info.model_stats`` is ``/final_metrics``.
INFO = {"exit_status": "status", "submission": "final_answer"}
STATS = "model_stats"
#: Where ``replay_config`` names the model (an object, or the JSON string older versions write).
MODEL_PATH = ("agent", "model", "name")

#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("turns", "task", "final_metrics", "unknown_fields"),
    "agent": ("id", "name", "model"),
    "task": ("/task/env/name", "/task/result/status", "/task/result/final_answer"),
    "turn": ("id", "src", "msg", "tool_calls", "observation"),
    "call": ("tcid", "fn", "args"),
    "result": ("content", "source_call_id"),
}
