"""A dataset row whose JSON text holds an integer beyond 64 bits is refused with the pointer of the value.

Rows this project writes cannot hold one (readers refuse it, RFC-0001 validation too), but a Storyline dataset
written by another tool, or rows built by hand, can. orjson reads such an integer as a float, so ``row_to_story``,
``to_messages`` and ``to_sharegpt`` (every form of its map, whose fast path reads the row's JSON text itself) wrote
``1.2345678901234568e+23`` where the source had ``123456789012345678901234``: a value changed without a word.
"""

from __future__ import annotations

import copy

import pytest
from datasets import Dataset

import pchronicle_datasets as pc

BIG = "123456789012345678901234"
STORY = {
    "schema_version": "storyline/v1",
    "session": "s",
    "agent": {"id": "a", "tools": [{"name": "f", "parameters": {"type": "object"}}]},
    "turns": [
        {"id": 1, "src": "user", "msg": "hi"},
        {
            "id": 2,
            "src": "agent",
            "msg": "",
            "tool_calls": [{"tcid": "c1", "fn": "f", "args": {"n": 1}, "result": {"r": 1}}],
            "observation": {"results": [{"source_call_id": "c1", "content": {"size": 1}}]},
        },
        {"id": 3, "src": "agent", "msg": "done"},
    ],
}


def _row_with(where: str) -> tuple[dict, str]:
    """A row of ``STORY`` whose JSON text at ``where`` holds ``BIG``, and the pointer of that value."""
    row = pc.story_to_row(copy.deepcopy(STORY))
    if where == "args":
        row["turns"][1]["tool_calls"][0]["args"] = '{"n": ' + BIG + "}"
        return row, "/turns/1/tool_calls/0/args/n"
    if where == "result":
        row["turns"][1]["tool_calls"][0]["result"] = '{"r": ' + BIG + "}"
        return row, "/turns/1/tool_calls/0/result/r"
    if where == "observation":
        row["turns"][1]["observation"] = '{"results": [{"source_call_id": "c1", "content": {"size": ' + BIG + "}}]}"
        return row, "/turns/1/observation/results/0/content/size"
    row["agent"]["tools"] = '[{"name": "f", "parameters": {"type": "object", "maximum": ' + BIG + "}}]"
    return row, "/agent/tools/0/parameters/maximum"


PLACES = ["args", "result", "observation", "tools"]


@pytest.mark.parametrize("where", PLACES)
def test_row_to_story_refuses_with_the_pointer(where):
    row, pointer = _row_with(where)
    with pytest.raises(pc.FormatError) as err:
        pc.row_to_story(row)
    assert err.value.pointer == pointer
    assert BIG in err.value.reason and "64-bit" in err.value.reason


@pytest.mark.parametrize("where", PLACES)
@pytest.mark.parametrize("fn", [pc.to_sharegpt, pc.to_messages], ids=["to_sharegpt", "to_messages"])
def test_map_functions_refuse_the_row_in_every_form(where, fn):
    row, pointer = _row_with(where)
    with pytest.raises(pc.FormatError) as err:
        fn(row)
    assert err.value.pointer == pointer
    ds = Dataset(pc.rows_to_table([pc.story_to_row(copy.deepcopy(STORY)), row]))
    for batched, view in ((False, ds), (True, ds), (True, ds.with_format("arrow"))):
        with pytest.raises(pc.FormatError) as err:
            view.map(fn, batched=batched, remove_columns=ds.column_names)
        assert err.value.pointer == pointer, (batched, view.format)


def test_a_big_float_and_the_text_e_plus_still_render_as_they_read():
    """What the fast path now checks (a value written with "e+") sends a row with a genuine big float, or "e+" in a
    text, to the general path, which renders it the same."""
    story = copy.deepcopy(STORY)
    story["turns"][1]["tool_calls"][0]["args"] = {"n": 1.5e300, "note": "x e+ y"}
    story["turns"][1]["observation"]["results"][0]["content"] = {"size": 9.3e18, "op": "a+b e+c"}
    row = pc.story_to_row(story)
    from pchronicle_datasets.render.sharegpt import conversation

    want = conversation(story)
    assert pc.to_sharegpt(row)["conversations"] == want
    ds = Dataset(pc.rows_to_table([row]))
    out = ds.map(pc.to_sharegpt, batched=True, remove_columns=ds.column_names, features=pc.SHAREGPT_FEATURES)
    assert out[0]["conversations"] == want
    assert "1.5e+300" in want[2]["value"] and "9.3e+18" in want[3]["value"]
