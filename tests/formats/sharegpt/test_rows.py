"""``row_conversation`` (the common case read straight from a row) gives exactly what ``conversation`` gives.

The fast path writes the bytes of ``render`` itself, so these tests are what keeps the two in step: every row of
every test corpus and sample file, generated plain conversations (the rows it covers) and generated documents
of every shape (the rows it must leave to ``conversation``). A row it covers must also be one ``conversation``
converts with no loss but the one the fast path counts itself (a leading system prompt the generated one replaces).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets.features import training_view
from pchronicle_datasets.formats import detect
from pchronicle_datasets.formats.sharegpt import conversation
from pchronicle_datasets.losses import collect_losses
from pchronicle_datasets.render.sharegpt import content_json, json_string, tool_value, tools_prompt_of_json
from pchronicle_datasets.training.sharegpt_rows import row_conversation, table_elements
from tests.strategies import AWKWARD_STRINGS, TOOL_RESULTS, json_values, storylines

ROOT = Path(__file__).resolve().parents[3]
DATA = ROOT / "tests" / "data"
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
CORPORA = ROOT.parent / "shared" / "corpora"  # the real public files, when this checkout sits beside them


def general(row: dict) -> tuple[list[dict], pc.LossReport]:
    """What ``to_sharegpt`` gives for the row without the fast path, and the losses it reports."""
    with collect_losses(propagate=False) as report:
        return conversation(training_view(row)), report


def check(story: dict) -> bool:
    """The fast path on the document's row is None or the general path's output (with no loss); True if it
    covered the row. Both shapes of a row: from ``story_to_row`` (the document's fields only) and from Arrow
    (every column, absent ones None), as ``ds.map`` hands it over."""
    row = pc.story_to_row(story)
    table = pc.rows_to_table([row])
    arrow_row = table.to_pylist()[0]
    with collect_losses(propagate=False) as fast_report:
        fast = row_conversation(row)
    with collect_losses(propagate=False):
        assert row_conversation(arrow_row) == fast
    # The Arrow batch core (table_elements): the same elements read from the columns, None for the same rows.
    [found] = table_elements(table.to_batches()[0])
    assert (found[0] if found is not None else None) == fast
    if fast is None:
        assert not fast_report, fast_report.summary()  # a row it gives up on: nothing counted twice
        return False
    want, report = general(row)
    assert fast == want, story.get("session")
    # The one loss the fast path counts itself (a leading system prompt replaced), as the general path counts it.
    assert (fast_report.counts, fast_report.first) == (report.counts, report.first), report.summary()
    assert set(report.counts) <= {"system_prompt_replaced"}, report.summary()
    assert pc.to_sharegpt(row)["conversations"] == want
    assert pc.to_sharegpt(arrow_row)["conversations"] == want
    return True


def corpus_documents() -> list[tuple[str, list[dict]]]:
    files = [*SAMPLES.rglob("*.json*"), *DATA.rglob("*.json*")]
    if CORPORA.is_dir():
        files += CORPORA.rglob("*.json*")
    out = []
    for path in sorted(p for p in files if p.is_file() and not p.name.endswith((".expected.json", ".losses.json"))):
        data = path.read_bytes()
        try:
            fmt = detect(data, path.name).NAME
            stories = pc.into_storyline(fmt, data, document_id=path.name)
        except pc.PchronicleError:
            continue  # files made to be refused
        out.append((path.name, stories))
    return out


CORPUS = corpus_documents()


def test_every_corpus_row_is_rendered_as_conversation_renders_it():
    covered = total = 0
    for _name, stories in CORPUS:
        for story in stories:
            total += 1
            covered += check(story)
    assert total > 400
    assert covered > 100  # the fast path is not a dead branch: gateway captures and plain agent runs take it


def per_example(rows: list[dict], fn, **options) -> tuple[list[dict], pc.LossReport]:
    with collect_losses(propagate=False) as report:
        return [fn(row, **options) for row in rows], report


@pytest.mark.parametrize(("name", "stories"), CORPUS, ids=[name for name, _ in CORPUS])
def test_batches_give_what_each_row_gives(name, stories):
    """The batch core over a whole file's rows (one Arrow table, the rows the fast path leaves mixed with those it
    covers) gives, row for row, what the per-example function gives, and counts the same losses."""
    rows = [pc.story_to_row(s) for s in stories]
    table = pc.rows_to_table(rows)
    for fn, options in (
        (pc.to_sharegpt, {}),
        (pc.to_sharegpt, {"trainable": "last"}),
        (pc.to_sharegpt, {"dialect": "llamafactory"}),
        (pc.to_messages, {}),
    ):
        want, want_report = per_example(rows, fn, **options)
        with collect_losses(propagate=False) as report:
            got = fn(table, **options)
        assert isinstance(got, pa.Table)
        assert got.to_pylist() == want, (name, fn.__name__, options)
        assert report.counts == want_report.counts, (name, fn.__name__, options)
        assert report.first == want_report.first, (name, fn.__name__, options)
        # A record batch (Spark's mapInArrow) gives a record batch of the same rows.
        got_batch = fn(table.combine_chunks().to_batches()[0], **options)
        assert isinstance(got_batch, pa.RecordBatch) and got_batch.to_pylist() == want


def test_ds_map_batched_and_arrow_formatted_give_the_per_example_rows():
    """The README's call in its three forms over every corpus row at once: per example, ``batched=True`` (datasets
    passes a LazyBatch, read through its Arrow table) and ``with_format("arrow")`` (a pyarrow Table), in batches
    that cut files apart."""
    from datasets import Dataset

    rows = [pc.story_to_row(s) for _, stories in CORPUS for s in stories]
    ds = Dataset(pc.rows_to_table(rows))
    for fn, features in ((pc.to_sharegpt, pc.SHAREGPT_FEATURES), (pc.to_messages, pc.MESSAGES_FEATURES)):
        kw = {"remove_columns": ds.column_names, "features": features}
        want = ds.map(fn, **kw).to_list()
        assert ds.map(fn, batched=True, batch_size=37, **kw).to_list() == want
        assert ds.with_format("arrow").map(fn, batched=True, batch_size=37, **kw).with_format(None).to_list() == want
    # Without remove_columns, batched=True keeps the input columns beside the output, as for any map function.
    kept = ds.select(range(5)).map(pc.to_sharegpt, batched=True)
    assert kept.column_names == [*ds.column_names, "conversations"]


def test_strict_batches_raise_the_first_loss():
    story = {**BASE, "turns": [{"id": 1, "src": "system", "msg": "be brief"}, {"id": 2, "src": "user", "msg": "hi"}]}
    table = pc.rows_to_table([pc.story_to_row(story)])
    with pytest.raises(pc.FormatError) as err:
        pc.to_sharegpt(table, strict=True)
    assert err.value.pointer == "/turns/0/msg"
    with pytest.raises(pc.FormatError):
        pc.to_sharegpt(pc.story_to_row(story), strict=True)  # the single row too, fast path or not
    with collect_losses(propagate=False) as report:
        pc.to_sharegpt(table)
    assert report.counts == {"system_prompt_replaced": 1} and report.first_document == {"system_prompt_replaced": "s"}


def test_a_table_that_is_not_storyline_rows_is_refused():
    with pytest.raises(pc.FormatError, match="STORYLINE_FEATURES"):
        pc.to_sharegpt(pa.table({"conversations": ["x"]}))


def test_a_malformed_row_in_a_batch_is_refused_with_its_pointer():
    row = pc.story_to_row({**BASE, "turns": [{"id": 1, "src": "user", "msg": "hi"}]})
    row["turns"][0]["msg"] = '"unterminated'
    with pytest.raises(pc.FormatError) as err:
        pc.to_sharegpt(pc.rows_to_table([pc.story_to_row({**BASE, "turns": []}), row]))
    assert err.value.pointer == "/turns/0/msg"


# ------------------------------------------------------------------------------ generated plain conversations

_texts = st.one_of(st.sampled_from(AWKWARD_STRINGS), st.text(st.characters(codec="utf-8"), max_size=60))
_json_texts = st.one_of(
    st.sampled_from(
        (
            '{"n": 18446744073709551616}',  # beyond 64 bits: orjson would read a float, json an int
            "[-9223372036854775809, 1.5e+300]",
            '{"x": "e+", "y": 1e16}',
            '  {"padded": true}',
            "\u3000[1, 2]",
            '{"deep": ' * 300 + "1" + "}" * 300,  # deeper than json's recursion limit: kept as text
            "[NaN, Infinity]",
            '{"bad": }',
            "{" + '"k": "' + "x" * 900 + '"}',  # longer than orjson is trusted with
        )
    ),
    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)),
    json_values.map(json.dumps),
)
_contents = st.one_of(st.sampled_from(TOOL_RESULTS), _texts, _json_texts, json_values)


rare = st.integers(0, 19).map(bool)  # False one time in twenty


@st.composite
def plain_conversations(draw: st.DrawFn) -> dict:
    """A document of the shape the fast path covers (user and agent turns, calls answered by id, sometimes on the
    call itself), with the odd turn outside it."""
    turns: list[dict] = []
    if draw(st.booleans()):
        turns.append({"id": 1, "src": "system", "msg": draw(_texts)})
    waiting: list[str] = []
    n = 0
    for t in range(draw(st.integers(1, 6))):
        # Now and then (one turn in twenty or so) something outside the fast path's case.
        src = draw(
            st.sampled_from(("user", "agent", "agent")) if draw(rare) else st.sampled_from(("system", "developer"))
        )
        turn: dict = {"id": 10 + t, "src": src, "msg": draw(_texts if draw(rare) else json_values)}
        if draw(st.booleans()) and (src == "agent" or not draw(rare)):
            turn["reason"] = draw(st.one_of(st.sampled_from(("", " \n", "Let me think.", "<think>x")), _texts))
        if waiting and draw(st.booleans()):
            ids = draw(st.lists(st.sampled_from(waiting), min_size=1, max_size=3))
            turn["observation"] = {"results": [{"source_call_id": i, "content": draw(_contents)} for i in ids]}
        if src == "agent" and draw(st.booleans()):
            calls = []
            for _ in range(draw(st.integers(0, 3))):
                n += 1
                args = st.dictionaries(_texts, json_values, max_size=3) if draw(rare) else json_values
                call = {"tcid": f"c{n}", "fn": draw(st.sampled_from(("ls", "read_file", "é"))), "args": draw(args)}
                if draw(st.integers(0, 4)) == 0:
                    call["result"] = draw(_contents)
                calls.append(call)
                waiting.append(call["tcid"])
            turn["tool_calls"] = calls
        turns.append(turn)
    story = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": turns}
    if draw(st.booleans()):
        story["agent"]["tools"] = draw(
            st.sampled_from(
                (
                    [{"type": "function", "function": {"name": "ls", "parameters": {}}}],
                    [{"name": "ls"}, 7],  # an entry that is no function: dropped and counted
                    [],
                    None,
                )
            )
        )
    return story


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(plain_conversations())
def test_generated_plain_conversations(story):
    pc.validate(story)
    check(story)


def test_the_plain_strategy_mostly_takes_the_fast_path():
    covered = []

    @settings(max_examples=200, deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])
    @given(plain_conversations())
    def run(story):
        covered.append(check(story))

    run()
    assert sum(covered) > len(covered) // 5


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(storylines())
def test_generated_documents_of_every_shape(story):
    check(story)


# --------------------------------------------------------------------------------------- what it leaves alone

BASE = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}}
CALL = {"tcid": "c1", "fn": "ls", "args": {}}


@pytest.mark.parametrize(
    "turns",
    [
        [{"id": 1, "src": "agent", "msg": "<REASONING_SCRATCHPAD>x</REASONING_SCRATCHPAD>"}],
        [{"id": 1, "src": "user", "msg": "a"}, {"id": 2, "src": "system", "msg": "later"}],
        [{"id": 1, "src": "developer", "msg": "d"}],
        [{"id": 1, "src": "agent", "msg": "", "tool_calls": [{**CALL, "args": "not json"}]}],
        [
            {"id": 1, "src": "agent", "msg": "", "tool_calls": [CALL]},
            {"id": 2, "src": "agent", "msg": "", "observation": {"results": [{"content": "no id"}]}},
        ],
        [{"id": 1, "src": "user", "msg": [{"type": "image_url", "image_url": {"url": "x"}}]}],
        [{"id": 1, "src": "user", "msg": "a", "reason": "why"}],
    ],
    ids=["scratchpad", "later-system", "developer", "string-arguments", "result-without-id", "image", "user-reason"],
)
def test_rows_outside_the_common_case_are_left_to_conversation(turns):
    story = {**BASE, "turns": turns}
    row = pc.story_to_row(story)
    assert row_conversation(row) is None
    want, _ = general(row)
    assert pc.to_sharegpt(row)["conversations"] == want


def _results(*ids: str) -> dict:
    return {"results": [{"source_call_id": i, "content": f"out of {i}"} for i in ids]}


@pytest.mark.parametrize(
    "second_observation",
    [_results("c1"), _results("c1", "c2"), _results("c2", "c1"), _results("c2")],
    ids=["earlier-call-only", "earlier-and-own", "own-and-earlier", "own-only"],
)
def test_results_on_a_turn_that_makes_calls_are_placed_as_linking_places_them(second_observation):
    """An OpenAI-style capture puts the results of a turn's calls on the next turn, which makes calls of its own:
    those results follow their call; once the turn holds a result of its own calls, all its results follow it
    (``linking.place_results``). The fast path covers both, and gives what conversation gives."""
    story = {
        **BASE,
        "turns": [
            {"id": 1, "src": "user", "msg": "go"},
            {"id": 2, "src": "agent", "msg": "", "tool_calls": [CALL]},
            {
                "id": 3,
                "src": "agent",
                "msg": "next",
                "tool_calls": [{"tcid": "c2", "fn": "cat", "args": {"p": "a"}}],
                "observation": second_observation,
            },
            {"id": 4, "src": "agent", "msg": "done"},
        ],
    }
    assert check(story)  # covered, and equal to the general path (check asserts it)


def test_renamed_call_ids_and_sharegpt_documents_are_left_to_conversation():
    renamed = {
        **BASE,
        "meta": {"source_call_ids": {"c1": "qwen_tc_0"}},
        "turns": [
            {"id": 1, "src": "agent", "msg": "", "tool_calls": [CALL]},
            {
                "id": 2,
                "src": "agent",
                "msg": "",
                "observation": {"results": [{"source_call_id": "c1", "content": "x"}]},
            },
        ],
    }
    assert row_conversation(pc.story_to_row(renamed)) is None
    assert '"tool_call_id": "qwen_tc_0"' in pc.to_sharegpt(pc.story_to_row(renamed))["conversations"][2]["value"]
    [shared] = pc.into_storyline("sharegpt", '[{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]')
    assert row_conversation(pc.story_to_row(shared)) is None


def test_a_malformed_row_is_refused_as_before():
    row = pc.story_to_row({**BASE, "turns": [{"id": 1, "src": "user", "msg": "hi"}]})
    row["turns"][0]["msg"] = '"unterminated'
    with pytest.raises(pc.FormatError) as err:
        pc.to_sharegpt(row)
    assert err.value.pointer == "/turns/0/msg"


def test_a_json_result_beyond_64_bits_keeps_its_integer():
    story = {
        **BASE,
        "turns": [
            {"id": 1, "src": "agent", "msg": "", "tool_calls": [CALL]},
            {
                "id": 2,
                "src": "agent",
                "msg": "",
                "observation": {
                    "results": [{"source_call_id": "c1", "content": '{"n": 18446744073709551616, "f": 2.5e-05}'}]
                },
            },
        ],
    }
    row = pc.story_to_row(story)
    assert row_conversation(row) is not None
    value = pc.to_sharegpt(row)["conversations"][2]["value"]
    assert '"content": {"n": 18446744073709551616, "f": 2.5e-05}' in value


# ------------------------------------------------------------------------------------- the render primitives


@given(st.text())  # every code point, lone surrogates included
def test_json_string_is_json_dumps(text):
    assert json_string(text) == json.dumps(text, ensure_ascii=False)


def reference_content(content):
    """What the reference puts in a ``<tool_response>``: ``json.dumps`` of the output, parsed when its stripped
    text starts with { or [ and ``json.loads`` takes it."""
    want = content
    if isinstance(content, str) and content.strip().startswith(("{", "[")):
        try:
            want = json.loads(content)
        except (ValueError, RecursionError):
            want = content
    return json.dumps(want, ensure_ascii=False)


@given(st.one_of(_contents, st.text()))
def test_content_json_is_the_reference_rule(content):
    assert content_json(content) == reference_content(content)


@pytest.mark.parametrize("space", sorted(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()))
def test_json_after_any_space_that_strip_removes(space):
    for content in (space + '{"a": 1}', space + "[]", space * 2 + "[1]"):
        assert content_json(content) == reference_content(content)
        assert tool_value([("c", "ls", content)]) == render_tool_value([("c", "ls", content)])


def render_tool_value(results):
    return "\n".join(
        f'<tool_response>\n{{"tool_call_id": {json.dumps(c)}, "name": {json.dumps(n)}, "content": '
        f"{reference_content(v)}}}\n</tool_response>"
        for c, n, v in results
    )


def test_the_tools_prompt_cache_follows_the_text():
    a = '[{"type": "function", "function": {"name": "a"}}]'
    b = '[{"type": "function", "function": {"name": "b"}}]'
    for text in (a, b, a, None, None, b, "[]"):
        tools = None if text is None else json.loads(text)
        assert tools_prompt_of_json(text) == (pc.formats.sharegpt.system_prompt(tools), ())
