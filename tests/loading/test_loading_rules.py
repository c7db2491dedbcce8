"""The engine-neutral loading rules (``pchronicle_datasets/loading/``), and that every engine uses them."""

from __future__ import annotations

import gzip
import io

import orjson
import pytest

from pchronicle_datasets import builder
from pchronicle_datasets.errors import BadRecordError, FormatError
from pchronicle_datasets.formats import capability, get_format
from pchronicle_datasets.formats.base import Record, starts_json_lines
from pchronicle_datasets.loading.ids import document_ids
from pchronicle_datasets.loading.policy import BadRecords, check_policy, prepare_quarantine, refusal
from pchronicle_datasets.loading.ranges import byte_range, line_start, read_lines
from pchronicle_datasets.loading.split import split_kind
from pchronicle_datasets.quarantine import Quarantine, read_quarantine

ROWS = b"".join(orjson.dumps({"session_id": f"s{i}", "step_id": 1}) + b"\n" for i in range(50))
CHATS = b"".join(orjson.dumps({"messages": [{"role": "user", "content": f"q{i}"}]}) + b"\n" for i in range(50))


# ------------------------------------------------------------------------------------------- the split rule


def test_a_splittable_format_is_split_in_ranges_and_a_line_format_in_lines():
    assert split_kind(ROWS, "auto") == ("range", "openai-msg")
    assert split_kind(ROWS, "openai-msg") == ("range", "openai-msg")
    assert split_kind(ROWS, "openai-messages") == ("range", "openai-msg")  # an alias is the same format
    assert split_kind(CHATS, "auto") == ("lines", "chat")


def test_a_named_format_must_be_the_detected_one():
    """The one rule (it was two: the builder split a named format without detecting it). A file detected as
    another format is read whole, so the reader's error for its first record says which format it looks like."""
    assert split_kind(CHATS, "openai-msg") is None
    assert split_kind(ROWS, "chat") is None
    undetected = b'{"x": 1}\n{"x": 2}\n'
    assert split_kind(undetected, "openai-msg") is None


def test_what_is_never_split():
    assert split_kind(gzip.compress(ROWS), "auto") is None  # compressed: cannot be entered in the middle
    assert split_kind(b"[" + ROWS.replace(b"\n", b",")[:-1] + b"]\n", "auto") is None  # one JSON value
    assert split_kind(ROWS.split(b"\n")[0] + b"\n", "auto") is None  # one line: one value
    assert split_kind(b'{"session_id": "s", "step_id": 1}', "auto") is None  # no complete line


def test_the_builder_splits_by_the_same_rule(tmp_path, monkeypatch):
    monkeypatch.setattr(builder, "SPLIT_MIN", 16)
    monkeypatch.setattr(builder, "LINES_SPLIT_MIN", 16)
    rows, chats = tmp_path / "rows.jsonl", tmp_path / "chats.jsonl"
    rows.write_bytes(ROWS)
    chats.write_bytes(CHATS)
    assert builder._split_of(str(rows), "auto") == ("range", "openai-msg")
    assert builder._split_of(str(rows), "openai-msg") == ("range", "openai-msg")
    assert builder._split_of(str(chats), "openai-msg") is None  # named, but detected as chat
    assert builder._split_of(str(chats), "auto") == ("lines", "chat")
    assert builder._split_of(str(chats), "auto", max_record_size=1 << 10) is None  # a limit below the rule's head
    monkeypatch.setattr(builder, "LINES_SPLIT_MIN", len(CHATS))  # each kind has its own part size
    assert builder._split_of(str(chats), "auto") is None and builder._split_of(str(rows), "auto") is not None


def test_the_stream_reader_and_the_split_rule_agree_on_json_lines():
    from pchronicle_datasets.formats.base import as_source, parse_source

    for data, lines in ((ROWS, True), (CHATS, True), (b'{"a": 1}\n[2]\n', True), (b'{"a": 1}\n', False),
                        (b'{\n "a": 1\n}\n', False)):  # fmt: skip
        head = [raw for raw in data.split(b"\n")[:-1] if raw.strip()]
        whole, _ = parse_source(as_source(data), "f")
        assert starts_json_lines(head) is lines is (not whole), data


# ------------------------------------------------------------------------------------------- byte ranges


@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_line_aligned_ranges_hold_every_line_once(n):
    data = b"".join(b'{"k": %d, "pad": "%s"}\n' % (i, b"x" * (i % 13)) for i in range(40))
    f = io.BytesIO(data)
    got = b""
    for k in range(n):
        start, end = byte_range(f, len(data), k, n)
        assert start == 0 or data[start - 1 : start] == b"\n"
        got += read_lines(f, start, len(data) if end is None else end)[1]
    assert got == data


def test_a_line_belongs_to_the_part_it_starts_in():
    f = io.BytesIO(b"aaaa\nbbbb\ncccc\n")
    assert line_start(f, 5) == 5 and line_start(f, 6) == 10 and line_start(f, 14) == 15
    assert read_lines(f, 1, 6) == (5, b"bbbb\n")
    assert read_lines(f, 11, 15) == (15, b"")


# ------------------------------------------------------------------------------------------- document ids


def test_every_engine_names_files_the_same_way():
    urls = ["file:///data/a/x.jsonl", "file:///data/b/y.jsonl"]
    assert document_ids(urls) == ["a/x.jsonl", "b/y.jsonl"]
    assert builder._document_ids({"train": ["/data/a/x.jsonl"], "test": ["/data/b/y.jsonl"]}, None) == {
        "train": ["a/x.jsonl"],
        "test": ["b/y.jsonl"],
    }
    assert document_ids(["s3://bucket/data/x.jsonl"], "s3://bucket") == ["data/x.jsonl"]
    assert document_ids(["zip://inner.jsonl::/data/a.zip", "/data/b.jsonl"]) == ["inner.jsonl", "/data/b.jsonl"]


# ------------------------------------------------------------------------------------------- the policy


def test_the_refusal_names_file_line_pointer_and_kind():
    err = refusal(FormatError("not JSON", pointer="/x", line=3), "cap.jsonl")
    assert isinstance(err, BadRecordError) and isinstance(err, FormatError)
    assert (err.document_id, err.line, err.pointer) == ("cap.jsonl", 3, "/x")
    assert str(err).startswith("/x: not JSON [FormatError] in cap.jsonl line 3. To load the rest,")
    assert str(err).endswith('pass on_bad_records="skip"')  # what to do
    assert refusal(FormatError("bad", document_id="other.jsonl"), "cap.jsonl").document_id == "other.jsonl"


def test_the_policy_refuses_or_sets_aside(tmp_path):
    assert check_policy("skip") == "skip"
    with pytest.raises(ValueError, match="on_bad_records"):
        check_policy("warn")
    rec = Record(2, b"{", error=FormatError("not JSON", line=2))
    with pytest.raises(BadRecordError, match=r"not JSON \[FormatError\] in f\.jsonl line 2"):
        BadRecords("error", Quarantine(None)).take("f.jsonl", rec)
    path = tmp_path / "q" / "bad.jsonl"
    path.parent.mkdir()
    path.write_bytes(b'{"run": "old"}\n{"run": "cut')
    assert prepare_quarantine(path) == len(b'{"run": "cut')
    skip = BadRecords("skip", Quarantine(path))
    skip.take("f.jsonl", rec)
    assert skip.count == 1
    assert [e.get("file") for e in read_quarantine(path)] == [None, "f.jsonl"]


def test_prepare_quarantine_creates_the_folder(tmp_path):
    target = tmp_path / "new" / "deeper" / "bad.jsonl"
    assert prepare_quarantine(target) == 0
    assert target.parent.is_dir() and not target.exists()


def test_bad_record_error_keeps_its_old_import_path():
    import pchronicle_datasets as pc

    assert pc.BadRecordError is builder.BadRecordError is BadRecordError


# ------------------------------------------------------------------------------------------- regrouping


def test_regrouping_is_a_capability_that_gives_the_readers_documents():
    """Spark regroups rows through the capability the registry gives: the same document as the reader's."""
    fmt = capability("openai-msg", "regrouping")
    assert fmt is get_format("openai-msg") and capability("chat", "regrouping") is None
    rows = [
        {
            "session_id": "s",
            "step_id": 1,
            "messages": [{"role": "user", "content": "hi"}],
            "response": {"role": "assistant", "content": "hello"},
        },
        {
            "session_id": "s",
            "step_id": 2,
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
                {"role": "user", "content": "more"},
            ],
            "response": {"role": "assistant", "content": "done"},
        },
        {"step_id": 3},
    ]
    raws = [orjson.dumps(r) for r in rows]
    keys = [fmt.group_of(i, row, i + 1, raw, "cap.jsonl") for i, (row, raw) in enumerate(zip(rows, raws, strict=True))]
    assert keys[:2] == ["s", "s"] and isinstance(keys[2], Record) and keys[2].error.line == 3
    story = fmt.build_group("s", [(i, rows[i], i + 1, raws[i]) for i in range(2)], "cap.jsonl")
    [expected] = [r.story for r in fmt.iter_records(b"\n".join(raws[:2]) + b"\n", "cap.jsonl")]
    assert story == expected


def test_spark_names_files_as_the_loader_does():
    pytest.importorskip("pyspark", reason="the `spark` extra")
    from pchronicle_datasets.spark.plan import document_ids as spark_ids

    urls = ["file:///data/a/x.jsonl", "file:///data/b/y.jsonl"]
    assert spark_ids(urls) == document_ids(urls) == ["a/x.jsonl", "b/y.jsonl"]


# ------------------------------------------------------------------------------------------- the contract


def test_register_refuses_half_a_capability():
    import types

    from pchronicle_datasets.formats import register

    def fake(**members):
        module = types.SimpleNamespace(
            NAME="half",
            ALIASES=(),
            EXTENSION=".jsonl",
            OUTPUT="file",
            PER_DOCUMENT=False,
            sniff=lambda sample: False,
            iter_records=lambda data, document_id=None: iter(()),
            decode=lambda data, document_id=None: [],
            encode=lambda stories: "",
        )
        for key, value in members.items():
            setattr(module, key, value)
        return module

    with pytest.raises(TypeError, match="group_of \\(regrouping\\) needs build_group"):
        register(fake(group_of=lambda *a: "s"))
    with pytest.raises(TypeError, match="SPLITTABLE is True or False"):
        register(fake(SPLITTABLE="yes"))
    with pytest.raises(TypeError, match="HINTS is the /meta key"):
        register(fake(HINTS=""))
    assert capability(fake(SPLITTABLE=False), "splittable") is None
    with pytest.raises(ValueError, match="unknown capability"):
        capability("chat", "teleport")
