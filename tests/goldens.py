"""Golden cases as data files: each case is an input file and its expected output side by side, under
``tests/data/<area>/`` (``<case>.input.<ext>`` and ``<case>.expected.json``), read by the library tests and
the CLI tests alike. A case name is its path under the area without the suffixes (``"minimal"``,
``"arguments/0"``); the layout of each area is described in its ``README.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

DATA = Path(__file__).resolve().parent / "data"


@dataclass(frozen=True)
class Golden:
    """One golden case: where its input is, its text, and the expected fragments it must give."""

    area: str
    name: str
    input_path: Path

    @property
    def text(self) -> str:
        return self.input_path.read_text(encoding="utf-8")

    @cached_property
    def expected(self) -> dict[str, Any]:
        path = DATA / self.area / f"{self.name}.expected.json"
        return json.loads(path.read_text(encoding="utf-8"))


def _case_name(area: str, path: Path) -> str:
    return path.relative_to(DATA / area).as_posix().split(".input.", 1)[0]


def names(area: str, family: str | None = None) -> list[str]:
    """The case names of ``area`` (only those under the folder ``family`` when given), sorted."""
    root = DATA / area / family if family else DATA / area
    return sorted(_case_name(area, p) for p in root.rglob("*.input.*"))


def members(area: str, family: str) -> list[str]:
    """The names of a family's cases without the family folder: ``members("openai_msg", "run")`` → ``["0", …]``."""
    return [name.split("/", 1)[1] for name in names(area, family)]


def load(area: str, name: str) -> Golden:
    """The golden case ``name`` of ``area``; its single input file is found whatever its extension."""
    folder = DATA / area / Path(name).parent
    [path] = sorted(folder.glob(f"{Path(name).name}.input.*"))
    return Golden(area, name, path)


def replay(inp: Any) -> dict[str, Any]:
    """A reference input (OpenAI messages, ``tests/data/sharegpt/*.input.json``) as a Storyline document, read
    through gateway rows: how the ShareGPT and training tests feed the reference converter's inputs."""
    import pchronicle_datasets as pc

    messages = inp if isinstance(inp, list) else inp["messages"]
    rows = []
    for i, message in enumerate(messages):
        if message["role"] == "assistant":
            rows.append({"session_id": "x", "step_id": len(rows) + 1, "messages": messages[:i], "response": message})
    [story] = pc.into_storyline("openai-msg", json.dumps(rows))
    if isinstance(inp, dict) and "tools" in inp:
        story["agent"]["tools"] = inp["tools"]
    pc.validate(story)
    return story
