"""Issue 12, "Diagnostics that say what to do": ``inspect`` groups bad records by reason and exits 1; detection
says what a file looks like and which ``--from`` reads it; a named format that refuses a file detection gives
to another says which; errors of pretty-printed whole files name the pointer, not a line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main

ATIF = Path(__file__).parent / "data" / "atif" / "harbor_golden_terminus2_timeout.trajectory.json"


def _lines(*records) -> str:
    return "".join(json.dumps(r) + "\n" for r in records)


def test_inspect_groups_bad_records_by_reason_and_exits_1(tmp_path, capsys):
    good = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "yo"}]}
    path = tmp_path / "mixed.jsonl"
    path.write_text(
        _lines(
            good,
            {"conversations": [{"from": "bing", "value": "a"}]},
            {"conversations": [{"from": "human", "value": "a"}, "x"]},
            {"conversations": [{"from": "bard", "value": "a"}]},
        )
    )
    assert main(["inspect", str(path)]) == 1
    out = capsys.readouterr().out
    assert "bad records: 3" in out
    [roles, element] = [line for line in out.splitlines() if line.lstrip()[:1].isdigit() and "first:" in line]
    assert roles.split()[0] == "2" and "/conversations/*/from: the ShareGPT reader does not know the role" in roles
    assert f"(first: {path} line 2 at /conversations/0/from)" in roles
    assert element.split()[0] == "1" and f"(first: {path} line 3 at /conversations/1)" in element
    assert main(["inspect", "--json", str(path)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(g["count"], g["pointer"], g["first"]["line"]) for g in report["bad_records_by_reason"]] == [
        (2, "/conversations/*/from", 2),
        (1, "/conversations/*", 3),
    ]


def test_inspect_of_good_files_exits_0(tmp_path, capsys):
    path = tmp_path / "good.jsonl"
    path.write_text(_lines({"conversations": [{"from": "human", "value": "hi"}]}))
    assert main(["inspect", str(path)]) == 0


def test_detection_says_what_the_file_looks_like_and_that_no_format_reads_it(tmp_path):
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("auto", '{"history": [1], "schema_version": "v9"}', document_id="x.json")
    text = str(err.value)
    assert 'a JSON object with keys history, schema_version; schema_version "v9"' in text
    assert "no format reads it" in text


def test_detection_names_the_from_that_reads_a_file_it_does_not_claim():
    # An empty conversation beside a "messages" key: ShareGPT's sniff leaves it to chat, chat does not read it,
    # and the ShareGPT reader does.
    text = '{"conversations": [], "messages": "kept"}'
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("auto", text, document_id="x.json")
    assert "read it with --from sharegpt" in str(err.value)
    [story] = pc.into_storyline("sharegpt", text, document_id="x.json")
    assert story["unknown_fields"]["sources"]["sharegpt"]["fields"] == {"/messages": "kept"}


def test_a_named_format_that_refuses_another_formats_file_says_which_and_names_no_line(capsys):
    """The issue's case: an ATIF trajectory read with --from openai-msg was reported at "line 1"."""
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("openai-msg", ATIF.read_bytes(), document_id="t.json")
    assert err.value.line is None and "line 1" not in str(err.value)
    assert "this file looks like atif" in str(err.value) and "read it with --from atif" in str(err.value)
    assert 'schema_version "ATIF-v1.5"' in str(err.value)
    assert main(["validate", "--from", "openai-msg", str(ATIF)]) == 1
    out = capsys.readouterr().out
    assert "--from atif" in out and " line " not in out


def test_errors_in_a_pretty_printed_array_of_records_name_the_record_pointer():
    records = [
        {"conversations": [{"from": "human", "value": "hi"}]},
        {"conversations": [{"from": "human", "value": "hi"}, {"role": "user", "content": "x"}]},
    ]
    text = json.dumps(records, indent=2)
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("sharegpt", text, document_id="data.json")
    assert err.value.pointer == "/1/conversations/1" and err.value.line is None
    assert "--from chat" in str(err.value)


def test_a_pretty_printed_single_record_error_names_no_line():
    text = json.dumps({"conversations": [{"from": "nobody", "value": "x"}]}, indent=2)
    with pytest.raises(pc.FormatError) as err:
        pc.into_storyline("sharegpt", text, document_id="one.json")
    assert (err.value.pointer, err.value.line) == ("/conversations/0/from", None)
