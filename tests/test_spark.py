"""The Spark engine gives the local loader's rows: samples, a corpus of many files, one big openai-msg file
split into ranges with interleaved sessions, both bad-record policies, conversions and writers.

One local[2] session serves the whole module; the module is skipped when pyspark or Java is missing.
"""

from __future__ import annotations

import collections
import gzip
import json
import random
import shutil
import uuid
from pathlib import Path

import orjson
import pytest

pytest.importorskip("pyspark", reason="the Spark tests need the `spark` extra (pip install -e '.[test,spark]')")
if shutil.which("java") is None:
    pytest.skip("the Spark tests need Java 17+ on PATH", allow_module_level=True)

from datasets import Dataset, load_dataset

import pchronicle_datasets as pc
import pchronicle_datasets.spark as pcs
from pchronicle_datasets.hub import card_text
from pchronicle_datasets.quarantine import read_quarantine
from pchronicle_datasets.spark.plan import plan_files, plan_links
from pchronicle_datasets.spark.records import NO_CONVERSATION
from pchronicle_datasets.training.output_features import MESSAGES_FEATURES, SHAREGPT_FEATURES, decode_messages
from tests.hub_fake import fake_hub

pytestmark = [
    pytest.mark.filterwarnings("ignore::FutureWarning"),  # pyspark's pandas 3 warning
    pytest.mark.filterwarnings("ignore::DeprecationWarning"),
]

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"


@pytest.fixture(scope="session")
def spark():
    session = pcs.local_session("local[2]")
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


def _key(story: dict) -> bytes:
    return orjson.dumps(story, option=orjson.OPT_SORT_KEYS)


def _stories(rows) -> list[dict]:
    return [pc.row_to_story(r if isinstance(r, dict) else r.asDict(recursive=True)) for r in rows]


def local_stories(files, fmt: str, tmp_path: Path, **options) -> list[dict]:
    ds = load_dataset(
        "pchronicle",
        fmt,
        data_files=[str(f) for f in files],
        split="train",
        cache_dir=str(tmp_path / f"cache-{uuid.uuid4().hex}"),
        **options,
    )
    return [pc.row_to_story(row) for row in ds]


def same(a: list[dict], b: list[dict]) -> bool:
    """Equal documents, in any order."""
    return sorted(map(_key, a)) == sorted(map(_key, b))


# ------------------------------------------------------------------------------------------ corpora


def _interleaved_capture(path: Path, copies: int, seed: int = 7) -> Path:
    """Copies of the sample capture's sessions under new ids, rows shuffled across sessions (each session's
    rows keep their order), with blank lines here and there: a gateway log of concurrent sessions."""
    rows = [orjson.loads(line) for line in CAPTURE.read_bytes().splitlines() if line.strip()]
    queues = [[{**row, "session_id": f"{row['session_id']}-{k}"} for row in rows] for k in range(copies)]
    by_session: dict[str, list[dict]] = {}
    for queue in queues:
        for row in queue:
            by_session.setdefault(row["session_id"], []).append(row)
    pending = list(by_session.values())
    rng = random.Random(seed)
    lines: list[bytes] = []
    while pending:
        session = rng.choice(pending)
        lines.append(orjson.dumps(session.pop(0)))
        if rng.random() < 0.05:
            lines.append(b"   ")
        if not session:
            pending.remove(session)
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.fixture(scope="module")
def big_capture(tmp_path_factory) -> Path:
    return _interleaved_capture(tmp_path_factory.mktemp("big") / "gateway.jsonl", copies=6)


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    """40 files of the three formats, some gzip-compressed, in nested folders."""
    root = tmp_path_factory.mktemp("corpus")
    stories = pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id="c.jsonl")
    stories += pc.into_storyline(
        "sharegpt", (SAMPLES / "sharegpt" / "trajectory_samples.jsonl").read_bytes(), document_id="t.jsonl"
    )
    stories += pc.into_storyline("storyline", (SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl").read_bytes())
    for i in range(40):
        story = json.loads(json.dumps(stories[i % len(stories)]))
        story["session"] = f"{story['session']}-{i}"
        # Each document in its source format: a Storyline file of a capture holds `session_id` and `step_id` in
        # its export hints, which the byte sniffers of `auto` also take for openai-msg (ambiguous for the local
        # loader too, until detection reads structure).
        fmt = story["origin"]["format"] if story["origin"]["format"] in ("openai-msg", "sharegpt") else "storyline"
        text = pc.from_storyline(fmt, [story]).encode()
        folder = root / f"batch{i % 4}"
        folder.mkdir(exist_ok=True)
        if i % 5 == 0:
            (folder / f"f{i:02d}.jsonl.gz").write_bytes(gzip.compress(text))
        else:
            (folder / f"f{i:02d}.jsonl").write_bytes(text)
    return root


# ------------------------------------------------------------------------------------------ reading


@pytest.mark.parametrize(
    ("folder", "fmt"), [("openai_msg", "openai-msg"), ("sharegpt", "sharegpt"), ("storyline", "storyline")]
)
def test_shipped_samples_equal_the_local_loader(spark, tmp_path, folder, fmt):
    files = sorted((SAMPLES / folder).iterdir())
    got = pcs.read(spark, [str(f) for f in files], fmt).rows.collect()
    assert same(_stories(got), local_stories(files, fmt, tmp_path))
    assert len(got) > 0


def test_an_openhands_conversation_folder_is_one_document(spark, tmp_path):
    """A folder of OpenHands conversations (base_state.json, events/event-*.json: sidecars.groups) is one row per
    conversation, as the local loader reads it: through the read and through the data source."""
    folder = ROOT / "tests" / "data" / "openhands_sdk" / "conversations"
    got = _stories(pcs.read(spark, str(folder)).rows.collect())
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "cache"))
    assert got == [pc.row_to_story(row) for row in ds] and len(got) == 1
    pcs.register(spark)
    assert _stories(spark.read.format("pchronicle").load(str(folder)).collect()) == got


def test_an_opencode_database_with_its_log_is_one_row_per_session(spark, tmp_path):
    """A SQLite database (OpenCode's, with the write-ahead log a running OpenCode keeps beside it: a real one, written
    by SQLite, tests/formats/opencode/test_database.py) is read whole, one row per session, as the local loader reads
    it: through the read and through the data source."""
    from tests.formats.opencode.test_database import DB, with_logged_session

    folder = tmp_path / "share"
    with_logged_session(DB, folder)
    got = _stories(pcs.read(spark, str(folder)).rows.collect())
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "cache"))
    assert got == [pc.row_to_story(row) for row in ds] and len(got) == 4 and got[3]["session"] == "ses_inthelog"
    pcs.register(spark)
    assert _stories(spark.read.format("pchronicle").load(str(folder)).collect()) == got


def test_the_data_source_reads_like_the_loader(spark, tmp_path):
    pcs.register(spark)
    df = spark.read.format("pchronicle").option("format", "openai-msg").load(str(CAPTURE))
    assert df.schema == pcs.read(spark, str(CAPTURE)).rows.schema
    assert _stories(df.collect()) == local_stories([CAPTURE], "openai-msg", tmp_path)  # same order too


def test_a_corpus_of_many_files_with_auto_detection(spark, corpus, tmp_path):
    files = sorted(p for p in corpus.rglob("*") if p.is_file())
    got = pcs.read(spark, str(corpus)).rows.collect()
    assert len(got) == 40
    assert same(_stories(got), local_stories(files, "auto", tmp_path))
    assert {s["origin"]["document_id"] for s in _stories(got)} >= {"batch0/f00.jsonl.gz", "batch1/f01.jsonl"}


def test_a_big_capture_is_split_and_its_sessions_regrouped(spark, big_capture, tmp_path):
    split = big_capture.stat().st_size // 7
    parts = plan_files([str(big_capture)], "openai-msg", split_size=split)
    assert len(parts) >= 7 and {p.kind for p in parts} == {"range"}
    got = pcs.read(spark, str(big_capture), "openai-msg", split_size=split).rows.collect()
    local = local_stories([big_capture], "openai-msg", tmp_path)
    assert len(got) == 18
    assert _stories(got) == local  # the same documents, in the local reader's order


def test_split_size_does_not_change_the_documents(spark, big_capture):
    whole = _stories(pcs.read(spark, str(big_capture), "openai-msg").rows.collect())
    for split in (big_capture.stat().st_size // 3,):
        assert _stories(pcs.read(spark, str(big_capture), "openai-msg", split_size=split).rows.collect()) == whole


def test_gzip_files_are_one_partition(tmp_path, big_capture):
    packed = tmp_path / "gateway.jsonl.gz"
    packed.write_bytes(gzip.compress(big_capture.read_bytes()))
    assert [p.kind for p in plan_files([str(packed)], "openai-msg", split_size=1000)] == ["whole"]


# ------------------------------------------------------------------------------------------ split line files

DATA = ROOT / "tests" / "data"
# Formats whose records are one per line: a big file is split into parts, each read in place (plan "lines").
LINE_FORMATS = ("storyline", "chat", "atif", "sharegpt")


def _line_records(fmt: str) -> list[bytes]:
    """Shipped records of a format, one per line (JSON Lines)."""
    if fmt == "storyline":
        return [x for x in (SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl").read_bytes().splitlines() if x]
    if fmt == "atif":
        return [orjson.dumps(orjson.loads(f.read_bytes())) for f in sorted((DATA / "atif").glob("*.trajectory.json"))]
    if fmt == "sharegpt":  # records are named by their place in the file (t.jsonl#n): real agents' records
        files = [
            SAMPLES / "sharegpt" / "trajectory_samples.jsonl",
            DATA / "sharegpt" / "hermeswith_trajectory_samples.jsonl",
        ]
        return [x for f in files for x in f.read_bytes().splitlines() if x]
    lines = [x for f in sorted((DATA / "chat").glob("*.input.jsonl")) for x in f.read_bytes().splitlines() if x]
    # Records without an id are named by their place in the file (chat.jsonl#n): drop some ids, add bare arrays.
    out = []
    for i, raw in enumerate(lines):
        record = orjson.loads(raw)
        if i % 3 == 0:
            record.pop("id", None)
        out.append(orjson.dumps(record))
    bare = [{"role": "user", "content": "a bare conversation"}, {"role": "assistant", "content": "ok"}]
    out.append(orjson.dumps(bare))
    return out


def _line_file(path: Path, fmt: str, bad: dict[int, bytes], copies: int = 6) -> tuple[Path, dict[int, bytes]]:
    """Copies of a format's records as one JSON Lines file with blank lines here and there, and the lines of
    ``bad`` put at those places (0-based among the records); returns the file and each bad line's number."""
    records = _line_records(fmt) * copies
    for at in sorted(bad):
        records.insert(at, bad[at])
    lines, numbers = [], {}
    for i, raw in enumerate(records):
        if i % 7 == 3:
            lines.append(b"  ")
        lines.append(raw)
        if i in bad:
            numbers[len(lines)] = raw
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path, numbers


# Bad records of every kind the line stage finds: not JSON, not a record of the format, a record that breaks a rule.
_BAD = {
    "storyline": {5: b"{not json", 17: b"[1, 2]", 30: b'{"schema_version": "storyline/v1", "session": 1}'},
    "chat": {4: b"{not json", 40: b"42", 61: b'{"messages": "none"}'},
    "atif": {3: b"{not json", 11: b'{"schema_version": "ATIF-v1.5"}', 25: b"[]"},
    "sharegpt": {2: b"{not json", 19: b'{"conversations": [{"role": "user", "content": "hi"}]}', 33: b"42"},
}


@pytest.fixture(scope="module")
def line_files(tmp_path_factory) -> dict[str, tuple[Path, dict[int, bytes]]]:
    root = tmp_path_factory.mktemp("lines")
    copies = {"chat": 30}  # the chat records are small: more of them, for a file of several parts
    return {fmt: _line_file(root / f"{fmt}.jsonl", fmt, _BAD[fmt], copies.get(fmt, 6)) for fmt in LINE_FORMATS}


def _local_quarantine(path: Path, fmt: str, tmp_path: Path) -> tuple[list[dict], list[dict]]:
    """The local loader's documents and quarantine entries (less the run id) under the skip policy."""
    quarantine = tmp_path / f"local-{uuid.uuid4().hex}.jsonl"
    stories = local_stories([path], fmt, tmp_path, on_bad_records="skip", quarantine_file=str(quarantine))
    entries = [{k: v for k, v in json.loads(x).items() if k != "run"} for x in quarantine.read_text().splitlines()]
    return stories, entries


def _by_line(entries) -> list[dict]:
    return sorted(entries, key=lambda e: (e["line"], e["pointer"]))


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_the_data_source_splits_line_files_and_keeps_every_bad_record(spark, line_files, tmp_path, fmt):
    path, bad = line_files[fmt]
    split = path.stat().st_size // 5
    local, expected = _local_quarantine(path, fmt, tmp_path)
    assert len(expected) == len(bad) == 3 and len(local) > 10
    pcs.register(spark)
    folder = tmp_path / "q"

    def reader(**options):  # a DataFrameReader keeps every option it is given: one per load
        options = {"format": fmt, "splitSize": split, "on_bad_records": "skip", "quarantine": str(folder), **options}
        return spark.read.format("pchronicle").options(**options)

    df = reader().load(str(path))
    assert df.rdd.getNumPartitions() >= 5  # one file, several tasks
    assert same(_stories(df.collect()), local)
    # Each bad record, from the middle of a part, with the whole file's physical line number.
    written = [json.loads(x) for f in sorted(folder.glob("part-*.jsonl")) for x in f.read_text().splitlines()]
    assert _by_line(written) == _by_line(expected)
    assert sorted(e["line"] for e in written) == sorted(bad)
    assert {f.name for f in folder.glob("part-*.jsonl")} <= {f"part-00000-{k:05d}.jsonl" for k in range(6)}
    only_bad = reader(output="bad_records").load(str(path)).collect()
    assert _by_line(r.asDict() for r in only_bad) == _by_line(expected)
    # Read again whole: the quarantine folder then holds that read's file only, not the parts' of the first.
    assert len(reader(splitSize=1 << 40).load(str(path)).collect()) == len(local)
    assert [f.name for f in folder.glob("part-*.jsonl")] == ["part-00000.jsonl"]
    assert _by_line(json.loads(x) for x in (folder / "part-00000.jsonl").read_text().splitlines()) == _by_line(expected)
    # pchronicle_datasets.spark.read plans the same parts and gives the same.
    got = pcs.read(spark, str(path), fmt, on_bad_records="skip", split_size=split).cache()
    assert _stories(got.rows.collect()) == local  # in the local reader's order
    assert _by_line(r.asDict() for r in got.bad_records.collect()) == _by_line(expected)


@pytest.mark.parametrize("fmt", LINE_FORMATS)
def test_the_data_source_fails_on_a_bad_line_inside_a_part_naming_it(spark, tmp_path, fmt):
    good = _line_records(fmt) * 6
    at = len(good) // 2  # in the middle of the file, so of a part
    path, bad = _line_file(tmp_path / f"{fmt}.jsonl", fmt, {at: b"{not json"})
    (line,) = bad
    with pytest.raises(Exception, match=rf"in {fmt}\.jsonl line {line}\b") as local_error:
        local_stories([path], fmt, tmp_path)
    pcs.register(spark)
    df = spark.read.format("pchronicle").option("format", fmt).option("splitSize", path.stat().st_size // 5)
    with pytest.raises(Exception, match=rf"in {fmt}\.jsonl line {line}\b") as info:
        df.load(str(path)).collect()
    assert "BadRecordError" in str(info.value)
    assert str(local_error.value.__cause__ or local_error.value).split(" [")[0] in str(info.value)


def test_the_data_source_reads_auto_detected_parts(spark, line_files, tmp_path):
    paths = [line_files[fmt][0] for fmt in LINE_FORMATS]
    pcs.register(spark)
    df = spark.read.format("pchronicle").options(splitSize=100_000, output="records", on_bad_records="skip")
    df = df.load(str(paths[0].parent))
    parts = plan_files([str(paths[0].parent)], "auto", split_size=100_000)
    assert {p.format for p in parts} == set(LINE_FORMATS) and df.rdd.getNumPartitions() == len(parts) > 6
    rows = [r.asDict(recursive=True) for r in df.collect()]
    assert sum(1 for r in rows if r["_bad"] is not None) == sum(len(_BAD[fmt]) for fmt in LINE_FORMATS)
    docs = [{k: v for k, v in r.items() if not k.startswith("_")} for r in rows if r["_bad"] is None]
    expected = [s for p in paths for s in _local_quarantine(p, "auto", tmp_path)[0]]
    assert same(_stories(docs), expected)


def test_what_the_data_source_does_not_split(spark, big_capture, line_files, tmp_path, caplog):
    # openai-msg: rows regrouped by session, which a Data Source cannot do: one task, and a warning saying so.
    with caplog.at_level("WARNING", logger="pchronicle_datasets"):
        parts = plan_files([str(big_capture)], "openai-msg", split_size=1000, regroup=False)
    assert [p.kind for p in parts] == ["whole"]
    assert "pchronicle_datasets.spark.read splits it" in caplog.text and "gateway.jsonl" in caplog.text
    pcs.register(spark)
    df = spark.read.format("pchronicle").option("format", "openai-msg").option("splitSize", 1000)
    df = df.load(str(big_capture))
    assert df.rdd.getNumPartitions() == 1
    assert _stories(df.collect()) == local_stories([big_capture], "openai-msg", tmp_path)
    # Compressed files cannot be entered in the middle.
    packed = tmp_path / "storyline.jsonl.gz"
    packed.write_bytes(gzip.compress(line_files["storyline"][0].read_bytes()))
    assert [p.kind for p in plan_files([str(packed)], "storyline", split_size=1000)] == ["whole"]
    # A named format the file's first lines are not detected as: read whole, so its error says what it looks like.
    assert [p.kind for p in plan_files([str(line_files["chat"][0])], "storyline", split_size=1000)] == ["whole"]


# ------------------------------------------------------------------------------------------ bad records


def _bad_capture(path: Path) -> Path:
    """Good sessions around every kind of bad record the line stage and the session stage find."""
    good = CAPTURE.read_bytes().splitlines()
    bad = [
        b"{not json",
        b"[1, 2]",
        b'{"step_id": 1, "messages": []}',
        b'{"session_id": "dup", "step_id": 1, "response": {"role": "assistant", "content": "a"}}',
        b'{"session_id": "dup", "step_id": 1, "response": {"role": "assistant", "content": "b"}}',
    ]
    lines = good[:5] + bad[:3] + good[5:9] + bad[3:] + good[9:]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


@pytest.mark.parametrize("split", [None, 20_000])
def test_skip_keeps_every_bad_record_with_its_place(spark, tmp_path, split):
    bad = _bad_capture(tmp_path / "bad.jsonl")
    quarantine = tmp_path / "q.jsonl"
    local = local_stories([bad], "openai-msg", tmp_path, on_bad_records="skip", quarantine_file=str(quarantine))
    # the local entries, less the run id of the local run
    expected = [
        {k: v for k, v in json.loads(line).items() if k != "run"} for line in quarantine.read_text().splitlines()
    ]
    got = pcs.read(spark, str(bad), "openai-msg", on_bad_records="skip", **({"split_size": split} if split else {}))
    got = got.cache()
    assert _stories(got.rows.collect()) == local
    entries = [r.asDict() for r in got.bad_records.collect()]
    assert sorted(entries, key=lambda e: e["line"]) == sorted(expected, key=lambda e: e["line"])
    assert {e["pointer"] for e in entries} == {
        "",  # not JSON
        "/session_steps/6",  # not an object
        "/session_steps/7/session_id",  # no session
        "/session_steps/13/step_id",  # a step repeated within a session (found after the shuffle)
    }
    assert len(entries) == 4 and all(e["file"] == "bad.jsonl" for e in entries)
    folder = tmp_path / "quarantine"
    assert got.write_quarantine(str(folder)) == 4
    written = [json.loads(x) for f in folder.glob("*.json") for x in f.read_text().splitlines()]
    assert sorted(e["line"] for e in written) == sorted(e["line"] for e in expected)
    # A folder that exists is refused (a mistyped path must not replace data); overwrite is asked for by name.
    with pytest.raises(Exception, match=r"PATH_ALREADY_EXISTS|already exists"):
        got.write_quarantine(str(folder))
    assert got.write_quarantine(str(folder), mode="overwrite") == 4
    assert len([x for f in folder.glob("*.json") for x in f.read_text().splitlines()]) == 4


@pytest.mark.parametrize("split", [None, 20_000])
def test_error_fails_the_job_naming_file_line_and_pointer(spark, tmp_path, split):
    bad = _bad_capture(tmp_path / "bad.jsonl")
    got = pcs.read(spark, str(bad), "openai-msg", **({"split_size": split} if split else {}))
    with pytest.raises(Exception, match=r"in bad\.jsonl line \d+") as info:
        got.rows.collect()
    assert "BadRecordError" in str(info.value) or "FormatError" in str(info.value)


def test_the_data_source_quarantines_or_refuses_to_lose(spark, tmp_path):
    bad = _bad_capture(tmp_path / "bad.jsonl")
    pcs.register(spark)
    reader = spark.read.format("pchronicle").option("format", "openai-msg").option("on_bad_records", "skip")
    with pytest.raises(Exception, match="needs a quarantine folder"):
        reader.load(str(bad)).collect()
    folder = tmp_path / "q"
    rows = reader.option("quarantine", str(folder)).load(str(bad)).collect()
    assert len(rows) == 3
    entries = [json.loads(x) for x in (folder / "part-00000.jsonl").read_text().splitlines()]
    assert len(entries) == 4
    only_bad = reader.option("output", "bad_records").load(str(bad)).collect()
    assert sorted(r["line"] for r in only_bad) == sorted(e["line"] for e in entries)


def _capture_with_a_long_line(path: Path, size: int = 8192) -> Path:
    rows = [
        {"session_id": sid, "step_id": 1, "messages": [{"role": "user", "content": content}],
         "response": {"role": "assistant", "content": "ok"}}
        for sid, content in (("a", "hi"), ("b", "x" * size), ("c", "hi"))
    ]  # fmt: skip
    path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    return path


@pytest.mark.parametrize("split", [None, 1000])
def test_max_record_size_refuses_the_line_as_the_local_loader_does(spark, tmp_path, split):
    cap = _capture_with_a_long_line(tmp_path / "cap.jsonl")
    options = {"split_size": split} if split else {}
    got = pcs.read(spark, str(cap), "openai-msg", on_bad_records="skip", max_record_size=4096, **options).cache()
    assert [s["session"] for s in _stories(got.rows.collect())] == ["a", "c"]
    [entry] = [r.asDict() for r in got.bad_records.collect()]
    assert (entry["line"], entry["error_type"], entry["record"]) == (2, "RecordTooLargeError", None)
    assert "max_record_size (4,096 bytes)" in entry["error"]
    with pytest.raises(Exception, match=r"max_record_size \(4,096 bytes\).* in cap\.jsonl line 2"):
        pcs.read(spark, str(cap), "openai-msg", max_record_size=4096, **options).rows.collect()
    assert len(pcs.read(spark, str(cap), "openai-msg", **options).rows.collect()) == 3  # the default reads it


def test_max_decompressed_size_stops_a_bomb_in_spark_too(spark, tmp_path):
    """A bzip2 of 16 MiB of whitespace: zero documents by default, the local loader's error with a 1 MiB limit
    (both through pcs.read and the data source's option)."""
    import bz2

    bomb = tmp_path / "bomb.jsonl.bz2"
    bomb.write_bytes(bz2.compress(b" " * (16 << 20), 9))
    assert pcs.read(spark, str(bomb)).rows.count() == 0
    with pytest.raises(Exception, match="decompresses to more than 1,048,576 bytes"):
        pcs.read(spark, str(bomb), max_decompressed_size=1 << 20).rows.collect()
    pcs.register(spark)
    reader = spark.read.format("pchronicle").option("maxDecompressedSize", str(1 << 20))
    with pytest.raises(Exception, match=r"DecompressionLimitError\] in bomb\.jsonl\.bz2"):
        reader.load(str(bomb)).collect()
    with pytest.raises(Exception, match="maxRecordSize must be a positive whole number of bytes"):
        spark.read.format("pchronicle").option("maxRecordSize", "0").load(str(bomb)).collect()


def test_the_spark_cli_ends_with_the_tasks_error(monkeypatch, capsys):
    """A failed job's error reaches the user as the local engine's message and exit status 1, not a Java trace."""
    from pchronicle_datasets.spark import cli as spark_cli

    trace = (
        "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n  File ...\n"
        "pchronicle_datasets.errors.BadRecordError: (root): the bzip2 data decompresses to more than 64 bytes "
        "[DecompressionLimitError] in b.bz2\n SQLSTATE: 38000."
    )

    def failing(args):
        raise RuntimeError(trace)

    monkeypatch.setattr(spark_cli, "_convert", failing)
    with pytest.raises(SystemExit) as stop:
        spark_cli.convert(None)
    assert stop.value.code == (
        "pchronicle-datasets: (root): the bzip2 data decompresses to more than 64 bytes [DecompressionLimitError] "
        "in b.bz2"
    )
    monkeypatch.setattr(spark_cli, "_convert", lambda args: (_ for _ in ()).throw(RuntimeError("other")))
    with pytest.raises(RuntimeError, match="other"):  # anything else is not hidden
        spark_cli.convert(None)


# ------------------------------------------------------------------------------------------ converting


@pytest.fixture(scope="module")
def sample_rows(spark):
    files = [str(p) for d in ("openai_msg", "sharegpt", "storyline") for p in sorted((SAMPLES / d).glob("*.json*"))]
    return pcs.read(spark, files).rows.cache()


def test_to_sharegpt_equals_the_local_map_function(spark, sample_rows):
    rows = [r.asDict(recursive=True) for r in sample_rows.collect()]
    expected = [pc.to_sharegpt(row) for row in rows]
    got = [r.asDict(recursive=True) for r in pcs.to_sharegpt(sample_rows).collect()]
    assert got == expected
    assert pcs.to_sharegpt(sample_rows).schema == pcs.SHAREGPT_SCHEMA
    kept = pcs.to_sharegpt(sample_rows, keep_system_prompt=True).collect()
    assert [r.asDict(recursive=True) for r in kept] == [pc.to_sharegpt(row, keep_system_prompt=True) for row in rows]


def test_to_messages_equals_the_local_map_function(spark, sample_rows):
    rows = [r.asDict(recursive=True) for r in sample_rows.collect()]
    got = [decode_messages(r.asDict(recursive=True)) for r in pcs.to_messages(sample_rows).collect()]
    assert got == [pc.to_messages(row, arguments="object") for row in rows]
    assert any(out["tools"] for out in got) and any("tool_calls" in m for out in got for m in out["messages"])


# ------------------------------------------------------------------------------------------ writing


def test_parquet_loads_with_datasets_and_from_spark(spark, sample_rows, tmp_path):
    expected = sorted(map(_key, _stories(sample_rows.collect())))
    pcs.write_parquet(sample_rows, str(tmp_path / "rows"))
    ds = load_dataset(
        "parquet",
        data_files=str(tmp_path / "rows" / "*.parquet"),
        features=pc.STORYLINE_FEATURES,
        split="train",
        cache_dir=str(tmp_path / "c1"),
    )
    assert ds.features == pc.STORYLINE_FEATURES
    assert sorted(map(_key, _stories(ds))) == expected
    from_spark = Dataset.from_spark(sample_rows, features=pc.STORYLINE_FEATURES, cache_dir=str(tmp_path / "c2"))
    assert sorted(map(_key, _stories(from_spark))) == expected

    pcs.write_parquet(pcs.to_messages(sample_rows), str(tmp_path / "messages"))
    messages = load_dataset(
        "parquet",
        data_files=str(tmp_path / "messages" / "*.parquet"),
        features=MESSAGES_FEATURES,
        split="train",
        cache_dir=str(tmp_path / "c3"),
    )
    assert messages.features == MESSAGES_FEATURES and messages.num_rows == len(expected)


def _records_of(text: str) -> list[bytes]:
    """The records of a JSON Lines export, or of an openai-msg envelope: its rows, and its root fields."""
    lines = text.splitlines()
    if len(lines) == 1 and "session_steps" in (whole := orjson.loads(lines[0])):
        root = {k: v for k, v in whole.items() if k != "session_steps"}
        return [orjson.dumps(row) for row in whole["session_steps"]] + [orjson.dumps(root)]
    return [line.encode() for line in lines]


@pytest.mark.parametrize("fmt", ["storyline", "openai-msg", "sharegpt"])
def test_project_formats_are_written_in_part_files(spark, sample_rows, tmp_path, fmt):
    # Documents that share a session id are renamed by the openai-msg writer within one output file (a counted
    # loss), so part files and one export name them differently: this test keeps the distinct sessions.
    counts = collections.Counter(r["session"] for r in sample_rows.select("session").collect())
    rows = sample_rows.filter(~sample_rows.session.isin([s for s, n in counts.items() if n > 1]))
    stories = _stories(rows.collect())
    written = pcs.write_format(rows.repartition(3), str(tmp_path / "out"), fmt)
    assert 1 < len(written) <= 3 and sum(n for _, n in written) == len(stories)
    parts = [Path(f.removeprefix("file:")).read_text() for f, _ in written]
    # Each document's records are its own: together the part files hold what one local export holds.
    assert sorted(r for text in parts for r in _records_of(text)) == sorted(
        _records_of(pc.from_storyline(fmt, stories))
    )
    if fmt == "storyline":
        again = [s for f, _ in written for s in pc.into_storyline("storyline", Path(f).read_bytes())]
        assert same(again, stories)


def test_push_to_hub_through_parquet(spark, sample_rows, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    train = pcs.to_sharegpt(sample_rows)
    with fake_hub() as hub:
        pcs.push_to_hub(
            train,
            "org/agent-sft",
            conversion="openai-msg → to_sharegpt (Spark)",
            token="hf_test_token",
            redact=pc.Redactor(key="k"),  # redaction is on by default (issue #24): a known key
        )
    assert set(hub.files) == {"README.md", "data/train-00000-of-00001.parquet"}
    ds = load_dataset(str(hub.write(tmp_path / "repo")), split="train", cache_dir=str(tmp_path / "c"))
    assert ds.features == SHAREGPT_FEATURES
    pushed = [pc.redact_row(r.asDict(recursive=True), key="k") for r in train.collect()]
    assert sorted(map(_key, ds.to_list())) == sorted(map(_key, pushed))
    assert card_text("openai-msg → to_sharegpt (Spark)") in hub.files["README.md"].decode()


def test_cli_converts_with_the_spark_engine(spark, big_capture, tmp_path):
    from pchronicle_datasets.cli import main

    out = tmp_path / "rows"
    argv = ["convert", str(big_capture), "--from", "openai-msg", "--to", "parquet", "-o", str(out)]
    assert main([*argv, "--engine", "spark", "--master", "local[2]"]) == 0
    ds = load_dataset("parquet", data_files=str(out / "*.parquet"), split="train", cache_dir=str(tmp_path / "c"))
    assert same(_stories(ds), local_stories([big_capture], "openai-msg", tmp_path))


def _spark_convert(*argv: str) -> int:
    from pchronicle_datasets.cli import main

    return main(["convert", *argv, "--engine", "spark", "--master", "local[2]"])


def test_cli_spark_refuses_a_folder_holding_other_files(spark, tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _spark_convert(str(CAPTURE), "--to", "parquet", "-o", str(out)) == 1
    err = capsys.readouterr().err
    assert f"cannot write {out}: the folder holds 'notes.txt'" in err and "write to a new or empty folder" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"] and (out / "notes.txt").read_text() == "mine"


def test_cli_spark_refuses_an_input_as_output(spark, tmp_path, capsys):
    cap = tmp_path / "cap.jsonl"
    cap.write_bytes(CAPTURE.read_bytes())
    for target in ("storyline", "parquet"):
        assert _spark_convert(str(cap), "--to", target, "-o", str(cap)) == 1
        assert f"cannot write {cap}: it is the input" in capsys.readouterr().err
    # A glob pattern (the Spark engine takes them) that matches a file inside the output folder.
    assert _spark_convert(str(tmp_path / "*.jsonl"), "--to", "storyline", "-o", str(tmp_path)) == 1
    assert "it holds the input" in capsys.readouterr().err
    assert cap.read_bytes() == CAPTURE.read_bytes()


def _wrote(err: str) -> int:
    [count] = [int(line.split()[1]) for line in err.splitlines() if line.startswith("wrote ")]
    return count


@pytest.mark.parametrize("target", ["storyline", "parquet"])
def test_cli_spark_a_second_run_replaces_the_first_whole(spark, tmp_path, capsys, target):
    copies = []
    for i in range(3):  # three files: three partitions, three part files
        copies.append(tmp_path / f"in{i}.jsonl")
        copies[-1].write_bytes(CAPTURE.read_bytes().replace(b'"session_id": "', f'"session_id": "{i}-'.encode()))
    out = tmp_path / "out"
    assert _spark_convert(*map(str, copies), "--to", target, "-o", str(out)) == 0
    assert _wrote(capsys.readouterr().err) == 9
    assert _spark_convert(str(copies[0]), "--to", target, "-o", str(out)) == 0
    printed = _wrote(capsys.readouterr().err)
    if target == "parquet":
        held = load_dataset("parquet", data_files=str(out / "*.parquet"), split="train", cache_dir=str(tmp_path / "c"))
        stories = _stories(held)
    else:
        stories = [s for f in sorted(out.glob("part-*")) for s in pc.into_storyline("storyline", f.read_bytes())]
    assert printed == len(stories) == 3  # the folder holds what this run wrote: no stale part file
    assert same(stories, local_stories([copies[0]], "openai-msg", tmp_path))
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_cli_spark_appends_to_an_existing_quarantine_file(spark, tmp_path, capsys):
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(CAPTURE.read_bytes() + b"{not json\n")
    q = tmp_path / "q.jsonl"
    earlier = b'{"run": "earlier", "file": "x.jsonl", "line": 1, "pointer": "", "error": "e", "record": "r"}\n'
    q.write_bytes(earlier)
    argv = [str(bad), "--from", "openai-msg", "--to", "storyline", "-o", str(tmp_path / "out")]
    assert _spark_convert(*argv, "--on-bad-records", "skip", "--quarantine", str(q)) == 0
    err = capsys.readouterr().err
    assert q.is_file() and q.read_bytes().startswith(earlier)  # an append-only log: never a folder, never emptied
    [old, new] = list(read_quarantine(q))
    assert old["run"] == "earlier"
    assert new["file"].endswith("bad.jsonl") and new["line"] == 15 and new["record"] == "{not json"
    assert new["run"] != "earlier" and f"quarantined to {q} (run {new['run']})" in err


# ------------------------------------------------------------------------------------------ planning (no Spark)

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from pchronicle_datasets.spark.plan import count_lines, range_bytes  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from([b'{"session_id": "a", "step_id": 1}', b"", b"  ", b'{"x": "\xc3\xa9"}']), max_size=30
    ),
    final_newline=st.booleans(),
    split=st.integers(min_value=1, max_value=80),
)
def test_ranges_hold_every_line_once(tmp_path_factory, lines, final_newline, split):
    """Whatever the cut points, the ranges' bytes put together are the file, and their counts are its lines."""
    data = b'{"session_id": "a", "step_id": 1}\n' + b"\n".join(lines) + (b"\n" if final_newline else b"")
    path = tmp_path_factory.mktemp("r") / "cap.jsonl"
    path.write_bytes(data)
    parts = plan_files([str(path)], "openai-msg", split_size=split)
    chunks = [range_bytes(p) for p in parts] if parts[0].kind == "range" else [data]
    assert b"".join(chunks) == data
    total = [count_lines(c) for c in chunks]
    pieces = data.split(b"\n")
    expected_lines = len(pieces) - (1 if pieces[-1] == b"" else 0)
    assert sum(t[0] for t in total) == expected_lines
    assert sum(t[1] for t in total) == sum(1 for raw in pieces if raw and not raw.isspace())


_CHAT_LINES = [
    b'{"messages": [{"role": "user", "content": "hi"}]}',
    b'{"id": "c1", "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}',
    b'[{"role": "user", "content": "bare"}]',
    b"{not json",
    b"7",
    b"",
    b" \t",
]


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(st.sampled_from(_CHAT_LINES), min_size=2, max_size=30),
    split=st.integers(min_value=1, max_value=400),
)
def test_parts_read_in_place_give_the_whole_files_records(tmp_path_factory, lines, split):
    """Whatever the cut points, blank lines and bad lines, the parts of a chat file give its records: the same
    documents (named by their place), the same bad records with the same lines."""
    from pchronicle_datasets.spark.plan import Part, count_parts, line_range, with_offsets
    from pchronicle_datasets.spark.records import lines_tables, whole_file_tables

    data = b"\n".join([_CHAT_LINES[0], _CHAT_LINES[2], *lines]) + b"\n"
    path = tmp_path_factory.mktemp("p") / "chat.jsonl"
    path.write_bytes(data)
    parts = plan_files([str(path)], "chat", split_size=split)
    parts = with_offsets(parts, count_parts(parts))
    got = []
    for part in parts:
        tables = (
            whole_file_tables(part, "chat", "skip", data)
            if part.kind == "whole"
            else lines_tables(part, "skip", *line_range(part))
        )
        got += [row for table in tables for row in table.to_pylist()]
    whole = whole_file_tables(Part(str(path), "chat.jsonl", 0, "whole"), "chat", "skip", data)
    expected = [row for table in whole for row in table.to_pylist()]
    assert [{k: v for k, v in r.items() if k != "_pos"} for r in got] == [
        {k: v for k, v in r.items() if k != "_pos"} for r in expected
    ]
    assert [r["_pos"] for r in got] == sorted(r["_pos"] for r in got)  # file order


@pytest.mark.parametrize("policy", ["error", "skip"])
def test_a_file_that_holds_no_conversation_is_set_apart_not_bad(spark, tmp_path, policy):
    # As the local loader does (loading.policy, tests/loading/test_no_conversation.py): a Claude Code summary
    # file (the real session's own two summary lines) beside its session is left out and named, under either policy.
    session = ROOT / "tests" / "data" / "claude_code" / "entire_2.0.76" / "488c5296-fc78-4fdf-8cfd-f1cae9454bd0.jsonl"
    folder = tmp_path / "-home-me-app"
    folder.mkdir()
    shutil.copy(session, folder / session.name)
    (folder / "11111111-2222-4333-8444-555555555555.jsonl").write_bytes(
        b"".join(session.read_bytes().splitlines(True)[:2])
    )
    got = pcs.read(spark, str(folder), "auto", on_bad_records=policy).cache()
    assert [r.origin.document_id for r in got.rows.collect()] == [session.name]
    assert got.bad_records.count() == 0
    assert [r.file for r in got.no_conversation.collect()] == ["11111111-2222-4333-8444-555555555555.jsonl"]
    # The data source: the documents only, and no bad record (none quarantined under skip).
    source = spark.read.format("pchronicle").option("on_bad_records", policy)
    if policy == "skip":
        source = source.option("quarantine", str(tmp_path / "quarantine"))
    assert [r.origin.document_id for r in source.load(str(folder)).collect()] == [session.name]
    bad = spark.read.format("pchronicle").option("on_bad_records", policy).option("output", "bad_records")
    assert bad.load(str(folder)).count() == 0
    # output="records" (what read() reads) keeps it as the one _bad entry of its kind, which read() sets apart.
    records = spark.read.format("pchronicle").option("on_bad_records", policy).option("output", "records")
    kept = [r._bad for r in records.load(str(folder)).collect() if r._bad is not None]
    assert [(r.file, r.error_type) for r in kept] == [("11111111-2222-4333-8444-555555555555.jsonl", NO_CONVERSATION)]


# ------------------------------------------------------------------------------------------ session folders


def _claude_project(root: Path) -> Path:
    """A Claude Code ``projects`` folder as it lies on disk: the showcase session with its subagent and the
    subagent's ``.meta.json`` sidecar (the call that started it), a tool output kept apart
    (``<session>/tool-results/toolu_01X.txt``) and the project's ``sessions-index.json``."""
    project = root / "projects" / "-ws-app"
    shutil.copytree(ROOT / "tests" / "data" / "claude_code" / "showcase", project)
    session = next(p for p in project.iterdir() if p.is_dir())
    (session / "tool-results").mkdir()
    (session / "tool-results" / "toolu_01X.txt").write_text("a tool output too big for the conversation\n")
    (project / "sessions-index.json").write_text('{"version": 1, "entries": []}\n')
    return root / "projects"


def folder_stories(folder: Path, tmp_path: Path, **options) -> list[dict]:
    cache = str(tmp_path / f"cache-{uuid.uuid4().hex}")
    ds = load_dataset("pchronicle", "auto", data_dir=str(folder), split="train", cache_dir=cache, **options)
    return [pc.row_to_story(row) for row in ds]


def _notes(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("pchronicle: left out")]


@pytest.mark.parametrize("policy", ["error", "skip"])
def test_a_session_folder_is_listed_as_the_local_loader_lists_it(spark, tmp_path, caplog, policy):
    # Every file below the folder was read: the subagent's .meta.json as a document of its own (so the child
    # lost parent.scid, which its reader takes from the sidecar), the tool output and sessions-index.json as
    # bad records (under "error" the job failed on them). Now the folder's rules are the local loader's.
    folder = _claude_project(tmp_path)
    expected = folder_stories(folder, tmp_path, on_bad_records=policy)
    caplog.clear()
    got = pcs.read(spark, str(folder), "auto", on_bad_records=policy).cache()
    stories = _stories(got.rows.collect())
    assert (
        [s["origin"]["document_id"] for s in stories]
        == [s["origin"]["document_id"] for s in expected]
        == [
            "-ws-app/55550000-0000-4000-8000-000000000001.jsonl",
            "-ws-app/55550000-0000-4000-8000-000000000001/subagents/agent-showcol1.jsonl",
        ]
    )
    assert stories == expected
    assert stories[1]["parent"]["scid"] == "toolu_sc_showcol1"
    assert got.bad_records.count() == 0 and got.no_conversation.count() == 0
    assert _notes(caplog) == [
        "pchronicle: left out 1 file that holds no session: -ws-app/sessions-index.json (the index of the "
        "project's sessions Claude Code keeps for its resume picker)"
    ]  # once, on the driver
    # Claude Code's links are in each file (the parent's toolUseResult.agentId, the child's sidecar), not in the
    # other files of the load: the format has no parent_of, so the local loader's session_links add none.
    sid = "55550000-0000-4000-8000-000000000001"
    assert stories[0]["children"] == [f"{sid}/agent-showcol1", f"{sid}/agent-showcol2"]
    assert plan_links(plan_files([str(folder)]), "auto") == {}
    # The data source plans the same way.
    source = spark.read.format("pchronicle").option("on_bad_records", policy)
    if policy == "skip":
        source = source.option("quarantine", str(tmp_path / "quarantine"))
    assert _stories(source.load(str(folder)).collect()) == expected
    bad = spark.read.format("pchronicle").option("on_bad_records", policy).option("output", "bad_records")
    assert bad.load(str(folder)).count() == 0


def test_a_subagent_file_named_alone_gets_the_sidecar_beside_it(spark, tmp_path):
    # As the local loader's read_sidecar: a subagent file given alone (or by a glob) still says which call
    # started it; files named or matched are read whatever their name, the index files among them left out.
    folder = _claude_project(tmp_path)
    pattern = str(folder / "-ws-app" / "*" / "*" / "*")
    expected = local_stories([pattern], "auto", tmp_path)
    got = _stories(pcs.read(spark, pattern).rows.collect())
    assert got == expected and [s["parent"]["scid"] for s in got] == ["toolu_sc_showcol1"]
    child = next(folder.glob("*/*/subagents/agent-showcol1.jsonl"))
    alone = _stories(spark.read.format("pchronicle").load(str(child)).collect())
    assert alone == local_stories([child], "auto", tmp_path) and alone[0]["parent"] == got[0]["parent"]


def test_a_real_openclaw_sessions_folder_as_the_local_loader_reads_it(spark, tmp_path, caplog):
    # The real folder holds a session, OpenClaw's own trace and pointer files beside it (index files) and the
    # copies OpenClaw keeps of the session (`<id>.jsonl.bak-…`, `<id>.jsonl.reset.…`): one session, no bad record.
    folder = ROOT / "tests" / "data" / "pi" / "openclaw" / "agents" / "main" / "sessions"
    expected = folder_stories(folder, tmp_path)
    caplog.clear()
    got = pcs.read(spark, str(folder)).cache()
    assert _stories(got.rows.collect()) == expected
    assert [s["session"] for s in expected] == ["a4ecf754-58c6-4d18-b047-12a40e604950"]
    assert got.bad_records.count() == 0
    notes = _notes(caplog)
    assert len(notes) == 2 and "whose name holds a reader's extension without ending with it" in notes[0]
    assert notes[1].startswith("pchronicle: left out 2 files that hold no session: ")


# ------------------------------------------------------------------------------------------ subagent links

CODEX = ROOT / "tests" / "data" / "codex"
CODEX_PARENT = "019c8a59-e9dd-71f0-9ae3-4079fe9726a9"


def _codex_sessions(root: Path) -> Path:
    """The Codex parent/child pair of tests/formats/codex/test_rollout.py as Codex lays them out: the subagent's
    rollout names its parent (``session_meta.parent_thread_id``), the parent's (zstd-compressed) names no child."""
    import zstandard

    folder = root / "sessions" / "2026" / "03" / "01"
    folder.mkdir(parents=True)
    shutil.copy(CODEX / "rollback-subagent.written.jsonl", folder)
    parent = CODEX / f"rollout-2026-02-23T12-54-34-{CODEX_PARENT}.excerpt.jsonl"
    (folder / (parent.name + ".zst")).write_bytes(zstandard.ZstdCompressor().compress(parent.read_bytes()))
    return root / "sessions"


@pytest.mark.parametrize("policy", ["error", "skip"])
def test_a_codex_parent_lists_its_subagent_as_the_local_loader_does(spark, tmp_path, policy):
    # The parent's /children come from the other files of the load (session_links.py): the tasks read one file
    # each, so Spark gave the parent children=None where load_dataset gives ["child-0001"]. Now the driver
    # computes the links at planning (plan.plan_links) and the tasks add them as the local loader does.
    folder = _codex_sessions(tmp_path)
    expected = folder_stories(folder, tmp_path, on_bad_records=policy)
    assert {s["session"]: s.get("children") for s in expected}[CODEX_PARENT] == ["child-0001"]
    got = pcs.read(spark, str(folder), "auto", on_bad_records=policy).cache()
    assert _stories(got.rows.collect()) == expected
    assert got.bad_records.count() == 0
    # The data source plans in its own process and reads in others: the links travel with its reader.
    source = spark.read.format("pchronicle").option("on_bad_records", policy)
    if policy == "skip":
        source = source.option("quarantine", str(tmp_path / "quarantine"))
    assert _stories(source.load(str(folder)).collect()) == expected
    # Under the format's name too.
    named = load_dataset("pchronicle", "codex", data_dir=str(folder), split="train", cache_dir=str(tmp_path / "c"))
    codex_rows = [pc.row_to_story(row) for row in named]
    assert _stories(pcs.read(spark, str(folder), "codex", on_bad_records=policy).rows.collect()) == codex_rows
    assert _stories(source.option("format", "codex").load(str(folder)).collect()) == codex_rows


def test_a_codex_child_read_alone_keeps_its_parent_and_a_parent_alone_lists_no_children(spark, tmp_path):
    folder = _codex_sessions(tmp_path)
    for path in sorted(folder.rglob("*.jsonl*")):
        expected = local_stories([path], "auto", tmp_path)
        assert _stories(pcs.read(spark, str(path)).rows.collect()) == expected
        assert _stories(spark.read.format("pchronicle").load(str(path)).collect()) == expected
        (story,) = expected
        assert story.get("children") is None and (story["session"] == CODEX_PARENT) == (story.get("parent") is None)
