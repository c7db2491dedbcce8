"""Which agent started a subagent (docs/formats/kimi-code.md, "Which agent started it"): the session's
``state.json`` names it (``agents[<agent>].parentAgentId``), the folder layout cannot (every agent lies beside
``main`` under ``agents/``). The real session has one subagent started by ``main``; a nested one (a user's agent
profile with the ``Agent`` tool) is written into a copy of it, as Kimi Code's ``SessionSubagentHost`` records it."""

from __future__ import annotations

import json
import shutil

import datasets
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.errors import FormatError
from pchronicle_datasets.formats import kimi_code
from pchronicle_datasets.formats.base import documents
from pchronicle_datasets.sidecars import pair
from tests.formats.kimi_code.cases import SESSIONS, SUBAGENT, TOOLS, WORK_DIR

STATE = SESSIONS / WORK_DIR / TOOLS / "state.json"
JOURNAL = SESSIONS / WORK_DIR / TOOLS / "agents" / SUBAGENT / "wire.jsonl"


def nested(tmp_path):
    """A copy of the sessions folder where agent-0 has started agent-1 (its journal a copy of agent-0's), as Kimi
    Code's state.json records it: ``{"type": "sub", "parentAgentId": "agent-0"}``."""
    home = tmp_path / "sessions"
    shutil.copytree(SESSIONS, home)
    session = home / WORK_DIR / TOOLS
    (session / "agents" / "agent-1").mkdir()
    shutil.copy(JOURNAL, session / "agents" / "agent-1" / "wire.jsonl")
    state = json.loads((session / "state.json").read_text())
    state["agents"]["agent-1"] = {"homedir": "/k/agents/agent-1", "type": "sub", "parentAgentId": SUBAGENT}
    (session / "state.json").write_text(json.dumps(state))
    return home


def test_the_real_subagent_was_started_by_main():
    # by hand: the real state.json names main as agent-0's starter, what the layout says already
    assert json.loads(STATE.read_text())["agents"][SUBAGENT]["parentAgentId"] == "main"
    name = f"{WORK_DIR}/{TOOLS}/agents/{SUBAGENT}/wire.jsonl"
    assert kimi_code.sidecar_of(name) == f"{WORK_DIR}/{TOOLS}/state.json"
    (doc,) = documents(kimi_code.iter_records(JOURNAL.read_bytes(), name, sidecar=STATE.read_bytes()))
    assert doc["parent"] == {"psid": TOOLS, "rel": "subagent"}
    # the state pairs with every other agent's journal, never with main's (which it says nothing of)
    names = [name, f"{WORK_DIR}/{TOOLS}/agents/main/wire.jsonl", f"{WORK_DIR}/{TOOLS}/state.json"]
    assert pair(names) == ([0, 1], {0: 2})


def test_a_nested_subagent_names_the_subagent_that_started_it(tmp_path):
    home = nested(tmp_path)
    ds = datasets.load_dataset("pchronicle", "auto", data_dir=str(home), split="train", cache_dir=str(tmp_path / "c"))
    stories = {row["session"]: pc.row_to_story(row) for row in ds}
    first, second = f"{TOOLS}/agents/{SUBAGENT}", f"{TOOLS}/agents/agent-1"
    assert stories[first]["parent"] == {"psid": TOOLS, "rel": "subagent"}
    assert stories[second]["parent"] == {"psid": first, "rel": "subagent"}
    # the CLI, given the journal's path, reads the state beside it (sidecars.read_sidecar)
    alone = home / WORK_DIR / TOOLS / "agents" / "agent-1" / "wire.jsonl"
    out = tmp_path / "agent-1.storyline.jsonl"
    assert main(["convert", str(alone), "--from", "kimi-code", "--to", "storyline", "-o", str(out)]) == 0
    assert json.loads(out.read_text().splitlines()[0])["parent"] == {"psid": first, "rel": "subagent"}
    # the same-source writer gives the journal back unchanged: the link is derived
    (doc,) = kimi_code.decode(alone.read_bytes(), f"{WORK_DIR}/{TOOLS}/agents/agent-1/wire.jsonl")
    assert kimi_code.encode([doc]) == kimi_code.encode([stories[second]])


def test_without_a_state_the_layout_links_and_a_broken_one_is_refused():
    name = f"{WORK_DIR}/{TOOLS}/agents/agent-1/wire.jsonl"
    (doc,) = kimi_code.decode(JOURNAL.read_bytes(), name)
    assert doc["parent"] == {"psid": TOOLS, "rel": "subagent"}
    with pytest.raises(FormatError, match=r"state\.json"):
        documents(kimi_code.iter_records(JOURNAL.read_bytes(), name, sidecar=b"{not json"))
