"""The role/text record ↔ Storyline tables (docs/formats/role-text.md is their prose), held once for reader and
writer.

>>> SRC_ROLE["agent"], ROOT["target"], RESULT_KEYS["correct"]
('ai', ('/task/result/correct', <class 'bool'>), 'target')
"""

from __future__ import annotations

NAME = "role-text"

#: entry role → Storyline ``src`` (every other role is its own source: system, user, …); and back
ROLE_SRC = {"ai": "agent"}
SRC_ROLE = {"agent": "ai"}
#: How the same-source writer gives back a value the pointer map derived (``formats/layout.py``): by rule name.
INVERSE = {"role": lambda src: SRC_ROLE.get(src, src)}
#: root key → (Storyline pointer, the JSON type it must have to be mapped)
ROOT = {
    "instance_id": ("/session", str),
    "model_name": ("/agent/model", str),
    "target": ("/task/result/correct", bool),
    "exit_status": ("/task/result/status", str),
    "generated_patch": ("/task/result/final_answer", str),
}
#: ``/task/result`` key → the root key the writer gives it (``ROOT``'s result rows, in their order)
RESULT_KEYS = {
    pointer.rsplit("/", 1)[1]: key for key, (pointer, _) in ROOT.items() if pointer.startswith("/task/result/")
}

#: What the writer for documents of other formats writes (``layout.report_unwritten`` counts every other value).
WRITTEN = {
    "": ("session", "turns", "task", "unknown_fields"),
    "agent": ("id", "model"),
    "task": ("/task/result/correct", "/task/result/status", "/task/result/final_answer"),
    "turn": ("id", "src", "msg"),
}
