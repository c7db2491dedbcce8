"""The ATIF ↔ Storyline field tables (docs/formats/atif.md is their prose), held once for reader and writer.

Each table maps an ATIF key to ``(Storyline key, kind)``: ``kind`` is the Storyline type the value must have
to be mapped (``"any"``, ``"str"``, ``"nestr"``, ``"int"``, ``"bool"``, ``"time"``); a value of another type
stays residual under its ATIF pointer, so nothing is dropped and the document stays valid.

>>> STEP["reasoning_content"]
('reason', 'str')
>>> SCHEMA.fullmatch("ATIF-v1.5") is not None, SCHEMA.fullmatch("ATIF-v2.0") is not None
(True, False)
>>> SCHEMA.fullmatch("1.4") is not None, BARE.fullmatch("ATIF-v1.4") is not None
(True, False)
"""

from __future__ import annotations

import re

NAME = "atif"
# RFC-0001: unknown versions fail closed; every 1.x file shares the Trajectory/Step shape (1.6 added
# content parts, 1.7 trajectory_id and embedded subagents, 1.8 audio parts).
# Some harnesses write the version without its prefix ("schema_version": "1.4"): read as ATIF 1.N, with a note
# (/meta/atif/note, which `inspect` shows), and written back as it was.
SCHEMA = re.compile(r"(?:ATIF-v)?1\.[0-9]+")
BARE = re.compile(r"1\.[0-9]+")
WRITTEN_SCHEMA = "ATIF-v1.8"  # what the writer stamps on documents not read from ATIF
HINTS = "atif"  # /meta/atif: export hints of a document read from ATIF (where it was, what was derived)
ENVELOPE = "_storyline"  # /extra/_storyline of a written trajectory: what ATIF cannot hold
SOURCES = ("system", "user", "agent")  # ATIF StepSource

# root keys besides schema_version, agent, steps and subagent_trajectories (handled by the reader itself)
ROOT = {
    "session_id": ("session", "nestr"),
    "trajectory_id": ("trajectory", "nestr"),
    "notes": ("notes", "str"),
    "final_metrics": ("final_metrics", "any"),
    "continued_trajectory_ref": ("continued_trajectory_ref", "str"),
    "extra": ("extra", "any"),
}
AGENT = {
    "name": ("name", "str"),
    "version": ("ver", "str"),
    "model_name": ("model", "str"),
    "tool_definitions": ("tools", "any"),
    "extra": ("extra", "any"),
}
STEP = {
    "step_id": ("id", "int"),
    "source": ("src", "nestr"),
    "message": ("msg", "any"),
    "timestamp": ("ts", "time"),
    "model_name": ("model", "str"),
    "reasoning_effort": ("effort", "any"),
    "reasoning_content": ("reason", "str"),
    "observation": ("observation", "any"),
    "metrics": ("metrics", "any"),
    "extra": ("extra", "any"),
    "llm_call_count": ("nllm", "int"),
    "is_copied_context": ("copied", "bool"),
}
CALL = {
    "tool_call_id": ("tcid", "nestr"),
    "function_name": ("fn", "nestr"),
    "arguments": ("args", "any"),
    "extra": ("extra", "any"),
}
# Keys without which a step or call gives no Storyline turn or call: missing or mistyped, they are errors.
STEP_REQUIRED = ("step_id", "source", "message")
CALL_REQUIRED = ("tool_call_id", "function_name", "arguments")

# The reverse tables, for the writer.
STEP_BACK = {short: key for key, (short, _) in STEP.items()}
CALL_BACK = {short: key for key, (short, _) in CALL.items()}
AGENT_BACK = {short: key for key, (short, _) in AGENT.items()}
ROOT_BACK = {short: key for key, (short, _) in ROOT.items()}
AGENT_ONLY = ("model", "effort", "reason", "tool_calls", "metrics")  # ATIF: only on source="agent" steps
