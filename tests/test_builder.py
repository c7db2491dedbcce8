"""The ``datasets`` builder (issue 5, "The builder"): ``load_dataset("pchronicle", <format or "auto">, …)``.

Every load uses a fresh cache under ``tmp_path`` and runs offline. Inputs are the package's samples (the gateway
capture: 14 rows in 3 sessions; the Storyline goldens) or files written in ``tmp_path`` from them. The expected
rows are always the format modules' own reading of the same bytes (``pc.into_storyline``), so these tests check
what the builder adds: I/O, detection, decompression, ``origin.document_id``, splits, shards, streaming and the
bad-record policy.
"""

from __future__ import annotations

import bz2
import gzip
import itertools
import json
import logging
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import datasets
import fsspec
import pytest
import zstandard
from datasets.exceptions import DatasetGenerationError

import pchronicle_datasets as pc
from pchronicle_datasets import BadRecordError, FormatError
from pchronicle_datasets.formats import iter_records

SAMPLES = Path(pc.__file__).resolve().parent / "samples"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
ENVELOPE = SAMPLES / "openai_msg" / "gateway_capture_envelope.json"
GOLDENS = SAMPLES / "storyline" / "harbor_goldens.storyline.jsonl"
ONE_STORY = SAMPLES / "storyline" / "harbor_golden_openhands_hello-world.storyline.json"
CAPTURE_LINES = CAPTURE.read_bytes().splitlines(keepends=True)
SESSIONS = ["openhands-fncall-session", "openhands-nonfncall-session", "openhands-litellm-log-session"]
FORMATS = ["openai-msg", "sharegpt", "storyline"]  # what auto detection tries, by canonical name
SMALL_DOC = {
    "schema_version": "storyline/v1",
    "session": "s1",
    "agent": {"id": "bot"},
    "turns": [{"id": 1, "src": "user", "msg": "hi"}],
}
_loads = itertools.count()


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


# ------------------------------------------------------------------------------------------------ helpers


def load(tmp_path: Path, data_files: Any = None, config: str = "auto", **kwargs: Any):
    """``load_dataset("pchronicle", config, …)`` with a cache of its own under ``tmp_path / "cache"``."""
    cache = tmp_path / "cache" / str(next(_loads))
    return datasets.load_dataset("pchronicle", config, data_files=data_files, cache_dir=str(cache), **kwargs)


def rows_of(ds) -> list[dict[str, Any]]:
    return list(ds)


def stories_of(ds) -> list[dict[str, Any]]:
    return [pc.row_to_story(row) for row in ds]


def doc_ids(ds) -> list[str]:
    return [row["origin"]["document_id"] for row in ds]


def write(path: Path, data: bytes | str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def capture_with(replacements: dict[int, bytes]) -> bytes:
    """The gateway capture with some 1-based lines replaced."""
    lines = list(CAPTURE_LINES)
    for number, text in replacements.items():
        lines[number - 1] = text.rstrip(b"\n") + b"\n"
    return b"".join(lines)


def row_with(number: int, **changes: Any) -> bytes:
    """Line ``number`` of the capture with some keys changed."""
    row = json.loads(CAPTURE_LINES[number - 1])
    row.update(changes)
    return json.dumps(row).encode("utf-8")


def renamed_capture(suffix: str) -> bytes:
    """The capture with every session id suffixed, so several copies give distinct rows."""
    out = []
    for line in CAPTURE_LINES:
        row = json.loads(line)
        row["session_id"] += suffix
        out.append(json.dumps(row).encode("utf-8") + b"\n")
    return b"".join(out)


def small_docs(prefix: str, n: int) -> bytes:
    """Storyline JSON Lines of ``n`` small documents without ``origin`` (they get their file's)."""
    return b"".join(json.dumps({**SMALL_DOC, "session": f"{prefix}{i}"}).encode() + b"\n" for i in range(n))


def good_records(fmt: str, data: bytes, document_id: str) -> list[dict]:
    """The documents the hub's reader gives for ``data``, bad records left out (what skip mode keeps)."""
    return [rec.story for rec in iter_records(fmt, data, document_id) if rec.error is None]


def sharegpt_text() -> str:
    stories = pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id="gateway_capture.jsonl")
    stories += pc.into_storyline("storyline", GOLDENS.read_bytes())
    return pc.from_storyline("sharegpt", stories)


def read_quarantine(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


# ------------------------------------------------------------------------------------------- registration


def test_import_registers_the_packaged_module():
    from datasets import packaged_modules

    assert "pchronicle" in packaged_modules._PACKAGED_DATASETS_MODULES
    module, code_hash = packaged_modules._PACKAGED_DATASETS_MODULES["pchronicle"]
    assert module == "pchronicle_datasets.builder"
    assert isinstance(code_hash, str) and code_hash
    pc.register()  # idempotent
    assert packaged_modules._PACKAGED_DATASETS_MODULES["pchronicle"] == (module, code_hash)


def test_config_names_are_auto_and_every_format_name_and_alias(tmp_path):
    builder = datasets.load_dataset_builder("pchronicle", data_files=str(CAPTURE), cache_dir=str(tmp_path / "cache"))
    names = [config.name for config in builder.BUILDER_CONFIGS]
    assert names == ["auto", *pc.format_names()]
    formats = {"openai-msg", "openai-messages", "sharegpt", "agent-jsonl", "storyline", "atif", "harbor"}
    harnesses = {"gemini-cli", "opencode", "copilot-cli", "cursor", "codex", "codex-rollout", "pi", "pi-session"}
    harnesses |= {"claude", "claude-code", "cline", "cline-task", "qwen", "qwen-code", "kimi", "kimi-cli"}
    harnesses |= {"goose", "goose-session"}
    harnesses |= {"kimi-code", "kimi-code-wire"}
    research = {"swe-agent", "swe-agent-traj", "mini-swe", "mini-swe-agent", "openhands", "openhands-events"}
    research |= {"openhands-sdk", "openhands-v1", "openhands-agent-sdk"}
    harnesses |= research | {"role-text", "nebius"}
    assert set(names) == {"auto", *formats, "chat", "openai-chat", "messages", *harnesses}
    assert builder.config.name == "auto"  # the default
    assert builder.config.on_bad_records == "error"
    assert builder.info.features == pc.STORYLINE_FEATURES


def test_unknown_config_name_errors_listing_known_names(tmp_path):
    with pytest.raises(ValueError) as info:
        load(tmp_path, str(CAPTURE), "anthropic-msg")
    message = str(info.value)
    assert "anthropic-msg" in message
    for name in ["auto", *pc.format_names()]:
        assert name in message


@pytest.mark.parametrize(
    ("option", "value"),
    [("on_bad_records", "Skip"), ("on_bad_records", "ignore"), ("batch_size", 0)],
)
def test_invalid_options_are_rejected(tmp_path, option, value):
    # PchronicleConfig.__post_init__ validates these, but datasets sets config kwargs with setattr on a copy
    # of a predefined config: the check has to hold through load_dataset too.
    with pytest.raises(ValueError, match=option):
        load(tmp_path, str(CAPTURE), **{option: value})


# ---------------------------------------------------------------------------------------------------- rows


def _row_cases(tmp_path: Path) -> dict[str, tuple[str, Path]]:
    return {
        "openai-msg-jsonl": ("openai-msg", CAPTURE),
        "openai-msg-envelope": ("openai-msg", ENVELOPE),
        "storyline-jsonl": ("storyline", GOLDENS),
        "storyline-json": ("storyline", ONE_STORY),
        "sharegpt": ("sharegpt", write(tmp_path / "train.sharegpt.jsonl", sharegpt_text())),
    }


@pytest.mark.parametrize(
    "case", ["openai-msg-jsonl", "openai-msg-envelope", "storyline-jsonl", "storyline-json", "sharegpt"]
)
@pytest.mark.parametrize("named", [True, False], ids=["named", "auto"])
def test_rows_are_the_format_modules_documents(tmp_path, case, named):
    fmt, path = _row_cases(tmp_path)[case]
    want = pc.into_storyline(fmt, path.read_bytes(), document_id=path.name)
    assert want  # the fixture holds documents
    ds = load(tmp_path, str(path), fmt if named else "auto", split="train")
    assert ds.features == pc.STORYLINE_FEATURES
    assert ds.num_rows == len(want)
    assert stories_of(ds) == want


@pytest.mark.parametrize(("alias", "canonical"), [("openai-messages", "openai-msg"), ("agent-jsonl", "sharegpt")])
def test_alias_configs_read_like_their_format(tmp_path, alias, canonical):
    path = CAPTURE if canonical == "openai-msg" else write(tmp_path / "sg.jsonl", sharegpt_text())
    assert rows_of(load(tmp_path, str(path), alias, split="train")) == rows_of(
        load(tmp_path, str(path), canonical, split="train")
    )


def test_sample_row_counts(tmp_path):
    ds = load(tmp_path, str(CAPTURE), "openai-msg", split="train")
    assert ds["session"] == SESSIONS
    assert [row["origin"] for row in ds] == [
        {"format": "openai-msg", "schema_version": None, "document_id": "gateway_capture.jsonl"}
    ] * 3
    assert load(tmp_path, str(GOLDENS), "storyline", split="train").num_rows == 6


def test_storyline_document_without_origin_gets_its_file(tmp_path):
    path = write(tmp_path / "docs" / "plain.storyline.json", json.dumps(SMALL_DOC, indent=2))
    [row] = rows_of(load(tmp_path, str(path), "storyline", split="train"))
    assert row["origin"] == {"format": "storyline", "schema_version": None, "document_id": "plain.storyline.json"}
    assert pc.row_to_story(row) == {
        **SMALL_DOC,
        "origin": {"format": "storyline", "document_id": "plain.storyline.json"},
    }


def test_storyline_document_keeps_its_own_origin(tmp_path):
    [want] = pc.into_storyline("storyline", ONE_STORY.read_bytes())
    assert want["origin"]["document_id"] != ONE_STORY.name
    [row] = rows_of(load(tmp_path, str(ONE_STORY), split="train"))
    assert row["origin"]["document_id"] == want["origin"]["document_id"]


# ------------------------------------------------------------------------------------------ auto detection


def test_auto_detects_the_format_from_content_not_extension(tmp_path):
    x = write(tmp_path / "x.txt", json.dumps(SMALL_DOC, indent=2))  # Storyline under a .txt name
    y = write(tmp_path / "y.json", CAPTURE.read_bytes())  # openai-msg JSON Lines under a .json name
    ds = load(tmp_path, [str(x), str(y)], split="train")
    assert ds["session"] == ["s1", *SESSIONS]
    assert [row["origin"] for row in ds] == [
        {"format": "storyline", "schema_version": None, "document_id": "x.txt"},
        *[{"format": "openai-msg", "schema_version": None, "document_id": "y.json"}] * 3,
    ]
    assert stories_of(ds)[1:] == pc.into_storyline("openai-msg", y.read_bytes(), document_id="y.json")


def test_auto_mixes_formats_in_one_call(tmp_path):
    capture = write(tmp_path / "in" / "a" / "capture.jsonl", CAPTURE.read_bytes())
    goldens = write(tmp_path / "in" / "b" / "goldens.jsonl", GOLDENS.read_bytes())
    sg = write(tmp_path / "in" / "c.jsonl", sharegpt_text())
    ds = load(tmp_path, [str(capture), str(goldens), str(sg)], split="train")
    want = pc.into_storyline("openai-msg", capture.read_bytes(), document_id="a/capture.jsonl")
    want += pc.into_storyline("storyline", goldens.read_bytes())  # these documents keep their own origin
    want += pc.into_storyline("sharegpt", sg.read_bytes(), document_id="c.jsonl")
    assert stories_of(ds) == want
    assert [row["origin"]["format"] for row in ds] == ["openai-msg"] * 3 + ["atif"] * 6 + ["sharegpt"] * 9


def test_auto_mixes_formats_in_one_directory(tmp_path):
    write(tmp_path / "d" / "a.jsonl", CAPTURE.read_bytes())
    write(tmp_path / "d" / "b.jsonl", json.dumps(SMALL_DOC) + "\n" + json.dumps({**SMALL_DOC, "session": "s2"}) + "\n")
    write(tmp_path / "d" / "c.jsonl", sharegpt_text())
    ds = load(tmp_path, "*.jsonl", data_dir=str(tmp_path / "d"), split="train")
    assert [(row["origin"]["format"], row["origin"]["document_id"]) for row in ds] == (
        [("openai-msg", "a.jsonl")] * 3 + [("storyline", "b.jsonl")] * 2 + [("sharegpt", "c.jsonl")] * 9
    )


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_auto_unknown_file_is_an_error_listing_what_was_tried(tmp_path, streaming):
    path = write(tmp_path / "table.csv", "session,step\ns1,1\ns1,2\n")
    with pytest.raises(BadRecordError) as info:
        rows_of(load(tmp_path, str(path), split="train", streaming=streaming))
    message = str(info.value)
    assert "not recognised" in message
    assert "table.csv" in message
    for name in FORMATS:
        assert name in message
    assert info.value.document_id == "table.csv"


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_auto_ambiguous_file_is_an_error_listing_what_was_tried(tmp_path, streaming):
    record = {"conversations": [{"from": "human", "value": "hi"}], "session_id": "s", "step_id": 1}
    path = write(tmp_path / "both.json", json.dumps(record))
    with pytest.raises(BadRecordError) as info:
        rows_of(load(tmp_path, str(path), split="train", streaming=streaming))
    message = str(info.value)
    assert "ambiguous" in message
    assert "openai-msg, sharegpt" in message  # what claimed it
    assert "both.json" in message
    for name in FORMATS:
        assert name in message
    assert isinstance(info.value, FormatError)
    assert isinstance(info.value, DatasetGenerationError)


def test_auto_unknown_file_stops_even_with_good_files_around(tmp_path):
    good = write(tmp_path / "a.jsonl", CAPTURE.read_bytes())
    bad = write(tmp_path / "b.csv", "a,b\n1,2\n")
    with pytest.raises(BadRecordError, match=r"b\.csv"):
        load(tmp_path, [str(good), str(bad)], split="train")


# ------------------------------------------------------------------------------------- origin.document_id


def _tree(root: Path) -> None:
    write(root / "top.jsonl", renamed_capture("-top"))
    write(root / "a" / "x.jsonl", renamed_capture("-x"))
    write(root / "a" / "b" / "c.jsonl", renamed_capture("-c"))


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_document_id_is_relative_to_data_dir(tmp_path, streaming):
    root = tmp_path / "corpus"
    _tree(root)
    ds = load(tmp_path, ["a/b/c.jsonl", "top.jsonl"], data_dir=str(root), split="train", streaming=streaming)
    assert doc_ids(ds) == ["a/b/c.jsonl"] * 3 + ["top.jsonl"] * 3
    # The same in the documents' provenance of unknown fields.
    sources = [pc.row_to_story(r)["unknown_fields"]["sources"]["openai-msg"]["source_document_id"] for r in ds]
    assert sources == ["a/b/c.jsonl"] * 3 + ["top.jsonl"] * 3


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_document_id_with_a_data_dir_glob(tmp_path, streaming):
    root = tmp_path / "corpus"
    _tree(root)
    ds = load(tmp_path, "**/*.jsonl", data_dir=str(root), split="train", streaming=streaming)
    assert sorted(set(doc_ids(ds))) == ["a/b/c.jsonl", "a/x.jsonl", "top.jsonl"]
    ds = load(tmp_path, "a/**/*.jsonl", data_dir=str(root), split="train", streaming=streaming)
    assert sorted(set(doc_ids(ds))) == ["a/b/c.jsonl", "a/x.jsonl"]


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_document_id_is_relative_to_the_common_parent_of_the_entries(tmp_path, streaming):
    root = tmp_path / "corpus"
    _tree(root)
    ds = load(
        tmp_path, [str(root / "a" / "b" / "c.jsonl"), str(root / "a" / "x.jsonl")], split="train", streaming=streaming
    )
    assert doc_ids(ds) == ["b/c.jsonl"] * 3 + ["x.jsonl"] * 3
    ds = load(tmp_path, str(root / "a" / "b" / "c.jsonl"), split="train", streaming=streaming)
    assert doc_ids(ds) == ["c.jsonl"] * 3
    ds = load(tmp_path, str(root / "**" / "*.jsonl"), split="train", streaming=streaming)
    assert sorted(set(doc_ids(ds))) == ["a/b/c.jsonl", "a/x.jsonl", "top.jsonl"]


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_document_id_of_relative_entries(tmp_path, monkeypatch, streaming):
    _tree(tmp_path / "logs")
    monkeypatch.chdir(tmp_path)
    ds = load(tmp_path, ["logs/a/b/c.jsonl", "logs/top.jsonl"], split="train", streaming=streaming)
    assert doc_ids(ds) == ["a/b/c.jsonl"] * 3 + ["top.jsonl"] * 3
    assert all("\\" not in name and not name.startswith("/") for name in doc_ids(ds))


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_document_id_of_a_compressed_file_is_its_name(tmp_path, streaming):
    # Streaming hands the builder gzip://…::… style URLs and the prepared load cache paths: neither may leak.
    write(tmp_path / "d" / "sub" / "a.jsonl.gz", gzip.compress(CAPTURE.read_bytes()))
    write(tmp_path / "d" / "b.jsonl.bz2", bz2.compress(CAPTURE.read_bytes()))
    ds = load(
        tmp_path, ["sub/a.jsonl.gz", "b.jsonl.bz2"], data_dir=str(tmp_path / "d"), split="train", streaming=streaming
    )
    assert doc_ids(ds) == ["sub/a.jsonl.gz"] * 3 + ["b.jsonl.bz2"] * 3


def test_document_id_of_a_remote_url_streaming(tmp_path):
    fs = fsspec.filesystem("memory")
    root = f"/pchronicle-test-{uuid.uuid4().hex}"
    fs.pipe(f"{root}/sub/a.jsonl", CAPTURE.read_bytes())
    fs.pipe(f"{root}/sub/b.jsonl.gz", gzip.compress(CAPTURE.read_bytes()))
    try:
        urls = [f"memory://{root}/sub/a.jsonl", f"memory://{root}/sub/b.jsonl.gz"]
        ds = load(tmp_path, urls, split="train", streaming=True)
        rows = rows_of(ds)
    finally:
        fs.rm(root, recursive=True)
    assert [r["origin"]["document_id"] for r in rows] == ["a.jsonl"] * 3 + ["b.jsonl.gz"] * 3
    assert [pc.row_to_story(r) for r in rows[:3]] == pc.into_storyline(
        "openai-msg", CAPTURE.read_bytes(), document_id="a.jsonl"
    )


# ---------------------------------------------------------------------------------- streaming and shards


def test_streaming_gives_the_same_rows_in_the_same_order(tmp_path):
    write(tmp_path / "d" / "1.jsonl", CAPTURE.read_bytes())
    write(tmp_path / "d" / "2.storyline.jsonl", GOLDENS.read_bytes())
    write(tmp_path / "d" / "3.jsonl", sharegpt_text())
    write(tmp_path / "d" / "4.jsonl.gz", gzip.compress(renamed_capture("-gz")))
    write(tmp_path / "d" / "5.json", ENVELOPE.read_bytes())
    files = [str(p) for p in sorted((tmp_path / "d").iterdir())]
    prepared = load(tmp_path, files, split="train")
    streamed = load(tmp_path, files, split="train", streaming=True)
    assert isinstance(streamed, datasets.IterableDataset)
    assert streamed.features == pc.STORYLINE_FEATURES
    assert prepared.num_rows == 3 + 6 + 9 + 3 + 1
    assert rows_of(streamed) == rows_of(prepared)


def test_num_proc_reads_files_as_shards(tmp_path):
    files = [str(write(tmp_path / "d" / f"part-{i}.jsonl", renamed_capture(f"-{i}"))) for i in range(4)]
    files.append(str(write(tmp_path / "d" / "part-4.jsonl", small_docs("doc-", 5))))
    serial = load(tmp_path, files, split="train")
    parallel = load(tmp_path, files, split="train", num_proc=2)
    assert parallel.num_rows == serial.num_rows == 4 * 3 + 5

    def key(row: dict[str, Any]) -> str:
        return json.dumps(row, sort_keys=True, default=str)

    assert sorted(map(key, parallel)) == sorted(map(key, serial))
    assert sorted(set(doc_ids(parallel))) == [f"part-{i}.jsonl" for i in range(5)]


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2, reason="needs Linux and two cores"
)
def test_big_inputs_are_read_on_every_core_unless_num_proc_is_given(tmp_path, monkeypatch):
    """No num_proc and at least PARALLEL_MIN bytes in two shards or more: datasets' workers, one per core (at most
    one per shard), giving the rows of one process in the same order; num_proc=1 keeps one process."""
    from pchronicle_datasets import builder

    monkeypatch.setattr(builder, "PARALLEL_MIN", 1)  # the forked workers inherit it
    files = [str(write(tmp_path / "d" / f"part-{i}.jsonl", renamed_capture(f"-{i}"))) for i in range(3)]
    default = load(tmp_path, files, split="train")
    one = load(tmp_path, files, split="train", num_proc=1)
    assert len(one.cache_files) == 1
    assert len(default.cache_files) == min(3, len(os.sched_getaffinity(0)))  # a shard file per worker
    assert rows_of(default) == rows_of(one) and one.num_rows == 9
    single = load(tmp_path, files[:1], split="train")  # one shard: nothing to share out
    assert len(single.cache_files) == 1


def test_the_default_num_proc_leaves_small_and_remote_inputs_in_one_process(tmp_path):
    from pchronicle_datasets import builder

    files = [str(write(tmp_path / f"{i}.jsonl", renamed_capture(f"-{i}"))) for i in range(2)]
    kwargs = {"files": files, "names": ["0.jsonl", "1.jsonl"], "parts": [(0, 1)] * 2, "sidecars": [None] * 2}
    assert builder._default_num_proc(kwargs, "auto") == (None, None)  # far below PARALLEL_MIN and PARALLEL_FILES
    remote = {**kwargs, "files": ["hf://datasets/o/r/0.jsonl", files[1]]}
    assert builder._default_num_proc(remote, "auto") == (None, None)


@pytest.mark.skipif(
    not sys.platform.startswith("linux") or len(os.sched_getaffinity(0)) < 2, reason="needs Linux and two cores"
)
def test_the_default_num_proc_counts_bytes_or_files_and_is_one_process_inside_a_daemonic_worker(tmp_path, monkeypatch):
    """PARALLEL_MIN bytes or PARALLEL_FILES files; a pool's worker may not start processes of its own: loading
    there stays in it, as before."""
    import multiprocessing

    from pchronicle_datasets import builder

    monkeypatch.setattr(builder, "PARALLEL_MIN", 1)
    files = [str(write(tmp_path / f"{i}.jsonl", renamed_capture(f"-{i}"))) for i in range(2)]
    kwargs = {"files": files, "names": ["0.jsonl", "1.jsonl"], "parts": [(0, 1)] * 2, "sidecars": [None] * 2}
    assert builder._default_num_proc(kwargs, "auto")[0] == 2
    monkeypatch.setattr(builder, "PARALLEL_MIN", 1 << 40)
    assert builder._default_num_proc(kwargs, "auto") == (None, None)
    monkeypatch.setattr(builder, "PARALLEL_FILES", 2)  # many small files: per-file work, shared by the workers
    assert builder._default_num_proc(kwargs, "auto")[0] == 2
    monkeypatch.setattr(multiprocessing.current_process(), "daemon", True)
    assert builder._default_num_proc(kwargs, "auto") == (None, None)


def test_num_proc_skip_quarantines_from_every_worker(tmp_path):
    quarantine = tmp_path / "q.jsonl"
    files = []
    for i in range(4):
        data = renamed_capture(f"-{i}").splitlines(keepends=True)
        data[7] = b"{not json\n"
        files.append(str(write(tmp_path / "d" / f"part-{i}.jsonl", b"".join(data))))
    ds = load(tmp_path, files, split="train", num_proc=2, on_bad_records="skip", quarantine_file=str(quarantine))
    assert ds.num_rows == 4 * 3
    entries = read_quarantine(quarantine)
    assert sorted((e["file"], e["line"], e["record"]) for e in entries) == [
        (f"part-{i}.jsonl", 8, "{not json") for i in range(4)
    ]


# ---------------------------------------------------------------------------------------------- splits


def test_splits_from_lists_of_files(tmp_path):
    root = tmp_path / "corpus"
    a = write(root / "train" / "a.jsonl", renamed_capture("-a"))
    b = write(root / "train" / "b.storyline.jsonl", small_docs("doc-", 6))
    c = write(root / "test" / "c.jsonl.gz", gzip.compress(renamed_capture("-c")))
    dd = load(tmp_path, {"train": [str(a), str(b)], "test": [str(c)]})
    assert sorted(dd) == ["test", "train"]
    assert dd["train"].num_rows == 3 + 6
    assert dd["test"].num_rows == 3
    # Relative to the common parent of every entry, across splits.
    assert doc_ids(dd["train"]) == ["train/a.jsonl"] * 3 + ["train/b.storyline.jsonl"] * 6
    assert doc_ids(dd["test"]) == ["test/c.jsonl.gz"] * 3
    assert dd["test"]["session"] == [s + "-c" for s in SESSIONS]


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_splits_from_patterns(tmp_path, streaming):
    root = tmp_path / "corpus"
    write(root / "train" / "a.jsonl", renamed_capture("-a"))
    write(root / "train" / "b.jsonl.gz", gzip.compress(renamed_capture("-b")))
    write(root / "test" / "c.jsonl", renamed_capture("-c"))
    dd = load(tmp_path, {"train": "train/*", "test": "test/*.jsonl"}, data_dir=str(root), streaming=streaming)
    assert sorted(dd) == ["test", "train"]
    assert sorted(doc_ids(dd["train"])) == ["train/a.jsonl"] * 3 + ["train/b.jsonl.gz"] * 3
    assert doc_ids(dd["test"]) == ["test/c.jsonl"] * 3


def test_splits_inferred_from_file_names_in_data_dir(tmp_path):
    root = tmp_path / "corpus"
    write(root / "data" / "train.jsonl", renamed_capture("-train"))
    write(root / "data" / "test.jsonl.gz", gzip.compress(renamed_capture("-test")))
    write(root / "data" / "README.txt", "notes on the corpus")  # no reader takes it: not read (as the CLI does)
    dd = load(tmp_path, data_dir=str(root))
    assert sorted(dd) == ["test", "train"]
    assert dd["train"]["session"] == [s + "-train" for s in SESSIONS]
    assert doc_ids(dd["test"]) == ["data/test.jsonl.gz"] * 3


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_a_data_dir_whose_inferred_splits_leave_files_out_is_read_whole(tmp_path, streaming, caplog):
    # A session folder is named after each session's working directory: datasets reads "test" in one project's
    # name as a split and kept only that project's files (loading/folder.py).
    root = tmp_path / "projects"
    write(root / "-home-me-app" / "a.jsonl", renamed_capture("-app"))
    write(root / "-home-me-test-app" / "b.jsonl", renamed_capture("-test-app"))
    write(root / "-home-me-dev-tools" / "c.jsonl", renamed_capture("-dev-tools"))
    with caplog.at_level(logging.WARNING):
        dd = load(tmp_path, data_dir=str(root), streaming=streaming)
    assert list(dd) == ["train"]
    assert sorted(set(doc_ids(dd["train"]))) == ["-home-me-app/a.jsonl", "-home-me-dev-tools/c.jsonl",
                                                  "-home-me-test-app/b.jsonl"]  # fmt: skip
    # datasets made "-dev-" a validation split and "-test-" a test split, and dropped -home-me-app: words in the
    # folder names a harness gives working directories, no splits (and nothing to warn of)
    assert "inferred the split(s)" not in caplog.text
    # data_files given by the user are read as given: the split they name is theirs.
    dd = load(tmp_path, {"test": "-home-me-test-app/*.jsonl"}, data_dir=str(root), streaming=streaming)
    assert list(dd) == ["test"] and set(doc_ids(dd["test"])) == {"-home-me-test-app/b.jsonl"}


@pytest.mark.parametrize(
    "project", ["-home-me-dev-app", "C--Users-me-test", "--home-me-eval-tools--", "wd_test_ac3bb318f98e"]
)
def test_one_project_whose_working_directory_holds_a_split_word_is_read_into_train(tmp_path, project):
    # Every file of ~/.claude/projects was in datasets' "validation" split when the only project was ~/dev/app:
    # the user's ds["train"] was a KeyError (loading/folder.py).
    root = tmp_path / "projects"
    write(root / project / "a.jsonl", renamed_capture("-app"))
    dd = load(tmp_path, data_dir=str(root))
    assert list(dd) == ["train"] and set(doc_ids(dd["train"])) == {f"{project}/a.jsonl"}


def test_split_words_a_corpus_author_wrote_still_split_it_or_are_warned_of(tmp_path, caplog):
    root = tmp_path / "corpus"
    write(root / "data" / "train.jsonl", renamed_capture("-a"))
    write(root / "data" / "test.jsonl", renamed_capture("-b"))
    assert sorted(load(tmp_path, data_dir=str(root))) == ["test", "train"]
    write(root / "data" / "extra.jsonl", renamed_capture("-c"))  # in no split: the folder is read whole
    with caplog.at_level(logging.WARNING):
        dd = load(tmp_path / "again", data_dir=str(root))
    assert list(dd) == ["train"] and len(set(doc_ids(dd["train"]))) == 3
    assert "leave out 1 of its 3 files: every file is read into the train split" in caplog.text


# ------------------------------------------------------------------------------------------- compression


def _multi_member_gzip(data: bytes) -> bytes:
    return b"".join(gzip.compress(line) for line in data.splitlines(keepends=True))


CODECS = {
    "gz": ("jsonl.gz", lambda data: gzip.compress(data)),
    "gz-multi-member": ("jsonl.gz", _multi_member_gzip),
    "zst": ("jsonl.zst", lambda data: zstandard.ZstdCompressor().compress(data)),
    "bz2": ("jsonl.bz2", lambda data: bz2.compress(data)),
}


@pytest.mark.parametrize("codec", sorted(CODECS))
@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_compressed_files(tmp_path, codec, streaming):
    ext, compress = CODECS[codec]
    capture = write(tmp_path / "d" / f"capture.{ext}", compress(CAPTURE.read_bytes()))
    goldens = write(tmp_path / "d" / f"goldens.{ext}", compress(GOLDENS.read_bytes()))
    ds = load(tmp_path, [str(capture), str(goldens)], split="train", streaming=streaming)
    want = pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id=capture.name)
    want += pc.into_storyline("storyline", GOLDENS.read_bytes())
    assert stories_of(ds) == want
    assert doc_ids(ds)[:3] == [capture.name] * 3


def test_compression_is_detected_from_content(tmp_path):
    # A gzip file without a .gz name still reads (the builder decompresses by magic bytes).
    path = write(tmp_path / "capture.jsonl", gzip.compress(CAPTURE.read_bytes()))
    ds = load(tmp_path, str(path), split="train")
    assert stories_of(ds) == pc.into_storyline("openai-msg", CAPTURE.read_bytes(), document_id="capture.jsonl")


def _truncated_gzip(tmp_path: Path) -> Path:
    data = _multi_member_gzip(CAPTURE.read_bytes())
    return write(tmp_path / "d" / "cut.jsonl.gz", data[:-10])  # the last member (line 14) loses its end


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_truncated_gzip_is_an_error(tmp_path, streaming):
    path = _truncated_gzip(tmp_path)
    with pytest.raises(BadRecordError) as info:
        rows_of(load(tmp_path, str(path), split="train", streaming=streaming))
    assert "gzip" in str(info.value)
    assert "cut.jsonl.gz" in str(info.value)
    assert info.value.document_id == "cut.jsonl.gz"


def test_truncated_gzip_under_skip_keeps_the_complete_lines(tmp_path, caplog):
    path = _truncated_gzip(tmp_path)
    quarantine = tmp_path / "q.jsonl"
    with caplog.at_level(logging.WARNING):
        ds = load(tmp_path, str(path), split="train", on_bad_records="skip", quarantine_file=str(quarantine))
    # Only the last member's trailer is missing: its line decompresses whole, and is kept (as zlib recovers it).
    want = pc.into_storyline("openai-msg", b"".join(CAPTURE_LINES), document_id="cut.jsonl.gz")
    assert stories_of(ds) == want
    assert ds["session"] == SESSIONS
    [entry] = read_quarantine(quarantine)
    assert entry["file"] == "cut.jsonl.gz"
    assert entry["error_type"] == "FormatError"
    assert "gzip" in entry["error"]
    assert set(entry) == {"run", "file", "line", "pointer", "error", "error_type", "record"}
    assert any("skipped 1 bad record" in r.getMessage() and "cut.jsonl.gz" in r.getMessage() for r in caplog.records)


# ---------------------------------------------------------------------------------- bad input, error mode

NOT_JSON = b"{not json"
STEP_ONE = row_with(5, step_id="one")  # line 5: the 5th row of the first session


def _bad_cases() -> dict[str, tuple[str, bytes, str, int | None, str]]:
    """name → (file name, bytes, pointer, line, a word of the reason)."""
    bad_doc = {**SMALL_DOC, "session": ""}
    return {
        "line-not-json": ("bad.jsonl", capture_with({8: NOT_JSON}), "", 8, "JSON"),
        "step-id-one": ("bad.jsonl", capture_with({5: STEP_ONE}), "/session_steps/4/step_id", 5, "step_id"),
        "storyline-jsonl": (
            "bad.storyline.jsonl",
            (json.dumps(SMALL_DOC) + "\n" + json.dumps(bad_doc) + "\n").encode(),
            "/session",
            2,
            "non-empty",
        ),
        "storyline-doc": ("bad.storyline.json", json.dumps(bad_doc, indent=2).encode(), "/session", None, "non-empty"),
    }


@pytest.mark.parametrize("case", ["line-not-json", "step-id-one", "storyline-jsonl", "storyline-doc"])
@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_bad_record_stops_with_file_line_and_pointer(tmp_path, case, streaming):
    name, data, pointer, line, reason = _bad_cases()[case]
    write(tmp_path / "corpus" / "sub" / name, data)
    with pytest.raises(BadRecordError) as info:
        rows_of(load(tmp_path, f"sub/{name}", data_dir=str(tmp_path / "corpus"), split="train", streaming=streaming))
    err = info.value
    assert type(err) is BadRecordError
    assert isinstance(err, FormatError)
    assert isinstance(err, pc.PchronicleError)
    assert isinstance(err, DatasetGenerationError)
    assert err.document_id == f"sub/{name}"
    assert err.pointer == pointer
    assert err.line == line
    message = str(err)
    assert f"sub/{name}" in message
    assert reason in message
    assert message.startswith(f"{pointer or '(root)'}: ")
    if line is not None:
        assert f"line {line}" in message
    assert "An error occurred while generating the dataset" not in message


def test_bad_record_error_carries_the_readers_reason(tmp_path):
    path = write(tmp_path / "bad.jsonl", capture_with({5: STEP_ONE}))
    with pytest.raises(BadRecordError) as info:
        load(tmp_path, str(path), "openai-msg")
    with pytest.raises(FormatError) as reader:
        pc.into_storyline("openai-msg", path.read_bytes(), document_id="bad.jsonl")
    direct = reader.value
    assert (info.value.pointer, info.value.line, info.value.document_id) == ("/session_steps/4/step_id", 5, "bad.jsonl")
    assert (direct.pointer, direct.line, direct.document_id) == ("/session_steps/4/step_id", 5, "bad.jsonl")
    assert direct.reason in str(info.value)
    assert '"one"' in str(info.value)


@pytest.mark.parametrize(
    ("replacements", "line", "pointer"),
    [
        ({8: row_with(8, step_id="one"), 12: NOT_JSON}, 8, "/session_steps/7/step_id"),
        ({8: NOT_JSON, 13: row_with(13, step_id="one")}, 8, ""),
    ],
    ids=["session-first", "line-first"],
)
def test_the_first_bad_record_in_file_order_stops_it(tmp_path, replacements, line, pointer):
    path = write(tmp_path / "bad.jsonl", capture_with(replacements))
    with pytest.raises(BadRecordError) as info:
        load(tmp_path, str(path))
    assert (info.value.line, info.value.pointer) == (line, pointer)


def test_the_first_bad_file_in_order_stops_it(tmp_path):
    a = write(tmp_path / "a.jsonl", capture_with({12: NOT_JSON}))
    b = write(tmp_path / "b.jsonl", capture_with({2: NOT_JSON}))
    with pytest.raises(BadRecordError) as info:
        load(tmp_path, [str(a), str(b)])
    assert (info.value.document_id, info.value.line) == ("a.jsonl", 12)


def test_error_mode_is_the_default_and_named(tmp_path):
    path = write(tmp_path / "bad.jsonl", capture_with({8: NOT_JSON}))
    with pytest.raises(BadRecordError):
        load(tmp_path, str(path), on_bad_records="error")


# ------------------------------------------------------------------------------------------ skip mode


def test_skip_keeps_the_good_records_and_logs_the_count(tmp_path, caplog):
    # Line 5 breaks the first session (the whole session is skipped); line 8 is not JSON (that line is).
    path = write(tmp_path / "bad.jsonl", capture_with({5: STEP_ONE, 8: NOT_JSON}))
    with caplog.at_level(logging.WARNING):
        ds = load(tmp_path, str(path), on_bad_records="skip", split="train")
    assert ds["session"] == SESSIONS[1:]
    assert stories_of(ds) == good_records("openai-msg", path.read_bytes(), "bad.jsonl")
    ours = [r for r in caplog.records if r.name == "pchronicle_datasets.builder"]
    assert all(r.levelno == logging.WARNING for r in ours)
    summaries = [r.getMessage() for r in ours if "skipped 2 bad record(s)" in r.getMessage()]
    assert len(summaries) == 1
    assert "bad.jsonl" in summaries[0]


def test_skip_writes_each_record_to_the_quarantine_file(tmp_path):
    path = write(tmp_path / "bad.jsonl", capture_with({5: STEP_ONE, 8: NOT_JSON}))
    quarantine = tmp_path / "out" / "quarantine.jsonl"
    quarantine.parent.mkdir()
    quarantine.write_text('{"earlier": "entry"}\n', encoding="utf-8")  # appended to, never truncated
    ds = load(tmp_path, str(path), on_bad_records="skip", quarantine_file=str(quarantine), split="train")
    assert ds.num_rows == 2
    earlier, session, line = read_quarantine(quarantine)
    assert earlier == {"earlier": "entry"}
    for entry in (session, line):
        assert set(entry) == {"run", "file", "line", "pointer", "error", "error_type", "record"}
        assert entry["file"] == "bad.jsonl"
        assert entry["error_type"] == "FormatError"
    assert (session["line"], session["pointer"]) == (5, "/session_steps/4/step_id")
    assert "step_id" in session["error"] and '"one"' in session["error"]
    # The whole session is the skipped record: its six rows, as they were in the file.
    want_rows = [STEP_ONE if i == 5 else CAPTURE_LINES[i - 1].rstrip(b"\n") for i in range(1, 7)]
    assert session["record"].encode().splitlines() == want_rows
    assert (line["line"], line["pointer"], line["record"]) == (8, "", "{not json")
    assert "JSON" in line["error"]


def test_a_quarantine_file_that_is_an_input_is_refused_before_anything_is_read(tmp_path):
    """Its entries would be appended to the very file being read (through a link too): refused, file untouched."""
    path = write(tmp_path / "bad.jsonl", capture_with({8: NOT_JSON}))
    before = path.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(path)
    for target in (path, tmp_path / "link.jsonl"):
        with pytest.raises(pc.builder.QuarantineWriteError, match=r"it is the input .*bad\.jsonl.*another quarantine"):
            load(tmp_path, str(path), on_bad_records="skip", quarantine_file=str(target), split="train")
        with pytest.raises(pc.PchronicleError, match="it is the input"):
            list(pc.read_batches(str(path), on_bad_records="skip", quarantine_file=str(target)))
    assert path.read_bytes() == before


def test_skip_loses_nothing(tmp_path):
    """Every input line is either part of a loaded document or inside a quarantine entry, never both."""
    no_session = json.dumps({"step_id": 2, "messages": []}).encode()
    capture = capture_with({2: NOT_JSON, 9: row_with(9, step_id="one"), 12: no_session})
    bad_doc = json.dumps({**SMALL_DOC, "session": ""}).encode()
    goldens = GOLDENS.read_bytes().splitlines(keepends=True)
    goldens[3] = bad_doc + b"\n"
    goldens.insert(1, b"not json at all\n")  # lines: 2 is not JSON, 5 is the invalid document
    root = tmp_path / "corpus"
    write(root / "capture.jsonl", capture)
    write(root / "goldens.storyline.jsonl", b"".join(goldens))
    quarantine = tmp_path / "q.jsonl"
    ds = load(
        tmp_path,
        ["capture.jsonl", "goldens.storyline.jsonl"],
        data_dir=str(root),
        on_bad_records="skip",
        quarantine_file=str(quarantine),
        split="train",
    )
    entries = read_quarantine(quarantine)
    assert [(e["file"], e["line"], e["pointer"]) for e in entries] == [
        ("capture.jsonl", 2, ""),  # not JSON: that line alone
        ("capture.jsonl", 9, "/session_steps/8/step_id"),  # breaks its session: the whole session (lines 7-10)
        ("capture.jsonl", 12, "/session_steps/11/session_id"),  # a row of no session: that row alone
        ("goldens.storyline.jsonl", 2, ""),
        ("goldens.storyline.jsonl", 5, "/session"),
    ]
    rows = rows_of(ds)
    cap_rows = [r for r in rows if r["origin"]["document_id"] == "capture.jsonl"]
    gold_rows = [r for r in rows if r["origin"]["document_id"] != "capture.jsonl"]
    assert len(cap_rows) + len(gold_rows) == len(rows)

    # capture.jsonl: the quarantined lines and the loaded documents' lines partition the input.
    quarantined = [line for e in entries[:3] for line in e["record"].encode().splitlines()]
    input_lines = capture.splitlines()
    assert sorted(quarantined) == sorted(input_lines[i - 1] for i in (2, 7, 8, 9, 10, 12))
    assert [pc.row_to_story(r) for r in cap_rows] == good_records("openai-msg", capture, "capture.jsonl")
    assert [r["session"] for r in cap_rows] == [SESSIONS[0], SESSIONS[2]]

    # goldens: 7 non-blank lines = 5 documents + 2 quarantine entries holding the other two lines verbatim.
    assert [e["record"].encode() for e in entries[3:]] == [b"not json at all", bad_doc]
    kept = [line for line in goldens if line.rstrip(b"\n") not in (b"not json at all", bad_doc)]
    assert [pc.row_to_story(r) for r in gold_rows] == pc.into_storyline("storyline", b"".join(kept))
    assert len(gold_rows) + len(entries[3:]) == len(goldens) == 7


def test_skip_invalid_storyline_documents(tmp_path):
    bad_doc = json.dumps({**SMALL_DOC, "session": ""})
    lines = GOLDENS.read_bytes().splitlines(keepends=True)
    lines[2] = bad_doc.encode() + b"\n"
    path = write(tmp_path / "goldens.storyline.jsonl", b"".join(lines))
    single = write(tmp_path / "single.storyline.json", json.dumps({**SMALL_DOC, "agent": {}}, indent=2))
    quarantine = tmp_path / "q.jsonl"
    ds = load(tmp_path, [str(path), str(single)], on_bad_records="skip", quarantine_file=str(quarantine), split="train")
    want = pc.into_storyline("storyline", b"".join(lines[:2] + lines[3:]))
    assert stories_of(ds) == want
    first, second = read_quarantine(quarantine)
    assert (first["file"], first["line"], first["pointer"], first["error_type"]) == (
        "goldens.storyline.jsonl",
        3,
        "/session",
        "StorylineError",
    )
    assert first["record"] == bad_doc
    assert (second["file"], second["line"], second["pointer"], second["error_type"]) == (
        "single.storyline.json",
        None,
        "/agent/id",
        "StorylineError",
    )
    assert json.loads(second["record"]) == {**SMALL_DOC, "agent": {}}
    assert len(want) + 2 == 6 + 1  # every document of the input is accounted for


@pytest.mark.parametrize("streaming", [False, True], ids=["prepared", "streaming"])
def test_skip_without_quarantine_file_and_streaming(tmp_path, streaming):
    path = write(tmp_path / "bad.jsonl", capture_with({5: STEP_ONE}))
    ds = load(tmp_path, str(path), on_bad_records="skip", split="train", streaming=streaming)
    assert [row["session"] for row in ds] == SESSIONS[1:]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.jsonl", "cache"]  # no file written


def test_skip_streaming_writes_the_quarantine_file(tmp_path):
    path = write(tmp_path / "bad.jsonl", capture_with({8: NOT_JSON}))
    quarantine = tmp_path / "q.jsonl"
    ds = load(
        tmp_path, str(path), on_bad_records="skip", quarantine_file=str(quarantine), split="train", streaming=True
    )
    assert [row["session"] for row in ds] == SESSIONS
    [entry] = read_quarantine(quarantine)
    assert (entry["file"], entry["line"], entry["record"]) == ("bad.jsonl", 8, "{not json")


# ------------------------------------------------------------------------------------------- batch_size


@pytest.mark.parametrize("batch_size", [1, 2, 5])
def test_batch_size_gives_the_same_rows(tmp_path, batch_size):
    files = [str(CAPTURE), str(GOLDENS), str(write(tmp_path / "sg.jsonl", sharegpt_text()))]
    default = load(tmp_path, files, split="train")
    batched = load(tmp_path, files, split="train", batch_size=batch_size)
    assert batched.num_rows == default.num_rows == 3 + 6 + 9
    assert rows_of(batched) == rows_of(default)
    streamed = load(tmp_path, files, split="train", batch_size=batch_size, streaming=True)
    assert rows_of(streamed) == rows_of(default)


# ------------------------------------------------------------------------------------ big files (issue 13)


def _interleaved_capture(path: Path, copies: int) -> None:
    """The sample capture's sessions, renamed ``copies`` times, their rows interleaved over the whole file."""
    rows = [json.loads(line) for line in CAPTURE_LINES]
    out = []
    for step in range(max(sum(1 for r in rows if r["session_id"] == s) for s in SESSIONS)):
        for c in range(copies):
            for sid in SESSIONS:
                mine = [r for r in rows if r["session_id"] == sid]
                if step < len(mine):
                    out.append(json.dumps({**mine[step], "session_id": f"{sid}-{c}"}))
    out.insert(len(out) // 2, "{not json")
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def test_num_proc_splits_one_big_capture_into_byte_ranges_with_the_same_rows(tmp_path, monkeypatch):
    from pchronicle_datasets import builder

    monkeypatch.setattr(builder, "SPLIT_MIN", 50_000)  # the forked workers inherit it
    path = tmp_path / "big.jsonl"
    _interleaved_capture(path, 12)
    assert (
        len(
            builder._split_big_files({"files": [str(path)], "names": ["big.jsonl"], "parts": [(0, 1)]}, 2, "auto")[
                "parts"
            ]
        )
        == 2
    )
    one = load(tmp_path, str(path), "openai-msg", split="train", on_bad_records="skip")
    two = load(tmp_path, str(path), "openai-msg", split="train", on_bad_records="skip", num_proc=2)
    assert one.num_rows == 36 and rows_of(two) == rows_of(one)
    want = [rec.story for rec in iter_records("openai-msg", path.read_bytes(), "big.jsonl") if rec.story is not None]
    assert stories_of(two) == want


def test_max_decompressed_size_stops_a_bomb_naming_the_file_and_the_limit(tmp_path):
    path = tmp_path / "bomb.jsonl.gz"
    path.write_bytes(gzip.compress(GOLDENS.read_bytes() * 4))
    with pytest.raises(BadRecordError, match=r"more than 10,000 bytes \(max_size\).*bomb\.jsonl\.gz"):
        load(tmp_path, str(path), split="train", max_decompressed_size=10_000)
    assert load(tmp_path, str(path), split="train").num_rows == 4 * len(GOLDENS.read_bytes().splitlines())


def test_max_decompressed_size_must_be_a_positive_integer(tmp_path):
    with pytest.raises(ValueError, match="max_decompressed_size must be a positive integer"):
        load(tmp_path, str(GOLDENS), split="train", max_decompressed_size=0)


@pytest.mark.parametrize("given", ["projects", "./projects/", "projects/../projects"])
def test_a_relative_data_dir_gives_ids_relative_to_it(tmp_path, monkeypatch, given):
    # datasets resolves a data_dir before it lists the files; the ids were made relative to the data_dir as typed,
    # which matched none of them: every row's /origin/document_id was the machine's absolute path.
    write(tmp_path / "projects" / "-home-me-app" / "a.jsonl", renamed_capture("-app"))
    monkeypatch.chdir(tmp_path)
    dd = load(tmp_path, data_dir=given)
    assert set(doc_ids(dd["train"])) == {"-home-me-app/a.jsonl"}
