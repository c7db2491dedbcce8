"""Fuzz suite for every reader and the builder (issue 7): hostile input gives valid Storyline or a ``PchronicleError``.

The property, for every reader (``storyline``, ``openai-msg``, ``sharegpt`` and ``auto``) and every input drawn
from ``tests/fuzz_strategies.py`` (mutated valid files, compressed and cut streams, hostile classes, random JSON):

* ``iter_records`` yields records that each hold a document or a ``PchronicleError`` — never both, never another
  exception type — and every error carries a valid JSON Pointer, the file's id and a positive line or none;
* every document passes ``pc.validate``, ``pc.story_to_row`` accepts it, the row goes into an Arrow table (as
  the builder writes it) and reads back to the same document;
* ``into_storyline`` gives the same documents, or raises the first error ``iter_records`` yielded;
* ``from_storyline(fmt, docs)`` raises nothing but ``PchronicleError`` for every format; output of the source's
  own format reads back — to the same documents when the reader refused no record and the source has no
  blank line (either shifts the positions documents record), and always to a fixed point (a second round
  trip changes nothing); the other formats' output is itself a readable input (the reader property holds);
* nothing hangs: Hypothesis' deadline (2 s per example) reports slow inputs, and a hard wall-clock guard
  (``SIGALRM``, ``FUZZ_HARD_TIMEOUT`` seconds, default 30) turns a real hang into a test failure instead of a
  stalled CI job; memory stays bounded (``test_big_inputs_memory_stays_bounded``, in a fresh process).

The builder (``load_dataset("pchronicle", …)``) is fuzzed with a few mutated files per example: with
``on_bad_records="skip"`` every record becomes a row or a quarantine entry (and every JSON Lines line is in
one of them); with ``on_bad_records="error"`` only ``pc.BadRecordError`` escapes (or datasets' own "corresponds
to no data" ``ValueError`` when nothing was there to load).

Profiles: ``HYPOTHESIS_PROFILE=long`` runs ten times the examples of the default (CI) profile. They are
registered as ``fuzz-ci`` and ``fuzz-long`` and applied per test, because Hypothesis ships a ``ci`` profile of
its own that it loads when ``CI`` is set: registering one named ``ci`` here would change the settings of every
other test module. Each local run draws a seed (``FUZZ_SEED=<n>`` replays one; CI replays ``CI_SEED``);
``test_zz_fuzz_summary`` prints it with the number of examples each target ran and the runtime (seen in the
terminal even without ``-s``).

    .venv/bin/python -m pytest tests/test_fuzz.py                                  # CI
    HYPOTHESIS_PROFILE=long .venv/bin/python -m pytest tests/test_fuzz.py          # 10x
    FUZZ_SEED=1234 .venv/bin/python -m pytest tests/test_fuzz.py                   # replay a run
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from collections import Counter
from datetime import timedelta
from pathlib import Path
from typing import Any

import datasets
import orjson
import pytest
from hypothesis import HealthCheck, given, note, seed, settings
from hypothesis import strategies as st

import pchronicle_datasets as pc
from pchronicle_datasets import BadRecordError, PchronicleError
from pchronicle_datasets.compression import compression_of, decompress
from pchronicle_datasets.formats import detect, from_storyline, into_storyline, iter_records
from pchronicle_datasets.formats.base import Record, as_bytes
from pchronicle_datasets.pointer import is_valid, join
from tests.fuzz_strategies import (
    FORMATS,
    READERS,
    SEEDS_ONE,
    WRONG_VALUES,
    FuzzInput,
    big_inputs,
    builder_inputs,
    byte_mutated,
    compressed,
    every_input,
    hostile,
    json_mutated,
    json_paths,
    random_json_inputs,
    random_records,
    render,
    replace_at,
    valid_inputs,
    wrong_typed,
)
from tests.guards import hard_timeout

REPO = Path(__file__).resolve().parent.parent
DOC_ID = "fuzz/input"
HARD_SECONDS = float(os.environ.get("FUZZ_HARD_TIMEOUT", "30"))
PROFILE = "long" if os.environ.get("HYPOTHESIS_PROFILE") == "long" else "ci"
SCALE = 10 if PROFILE == "long" else 1
# CI (``CI`` set) replays one fixed seed, as conftest.py derandomizes the other property tests: a submission is
# judged on its own code, not on which inputs a fresh seed happens to draw (a new seed's find is a new issue, to
# fix with its FUZZ_SEED). Locally each run draws a new seed and keeps exploring.
CI_SEED = 20261202
SEED = int(os.environ.get("FUZZ_SEED") or (CI_SEED if os.environ.get("CI") else random.SystemRandom().randrange(2**32)))

settings.register_profile(
    "fuzz-ci",
    max_examples=100,
    deadline=timedelta(seconds=2),
    derandomize=False,
    print_blob=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.large_base_example,
        HealthCheck.filter_too_much,
    ],
)
settings.register_profile("fuzz-long", settings.get_profile("fuzz-ci"), max_examples=1000)


def fuzz_settings(examples: int, **overrides: Any) -> settings:
    """The selected profile with ``examples`` examples in CI (ten times that in the long profile)."""
    return settings(settings.get_profile(f"fuzz-{PROFILE}"), max_examples=examples * SCALE, **overrides)


COUNTS: Counter[tuple[str, str]] = Counter()  # (target, reader) → examples run
_STARTED: list[float] = []


# ------------------------------------------------------------------------------------------ guards


@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="no SIGALRM on this platform")
def test_hard_timeout_turns_a_hang_into_a_failure():
    with pytest.raises(AssertionError, match="hang"), hard_timeout(0.2, "a sleep"):
        time.sleep(10)


# ------------------------------------------------------------------------------------------ the property


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, types included (``1``, ``1.0`` and ``True`` differ; ``-0.0`` is not ``0.0``);
    iterative, so a 1000-deep value does not hit Python's recursion limit."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if type(x) is not type(y):
            return False
        if type(x) is dict:
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif type(x) is list:
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif type(x) is float:
            if repr(x) != repr(y):
                return False
        elif x != y:
            return False
    return True


def check_error(err: BaseException) -> None:
    assert isinstance(err, PchronicleError), f"not a PchronicleError: {type(err).__name__}: {err}"
    assert isinstance(err.pointer, str) and is_valid(err.pointer), f"error pointer {err.pointer!r} is not a pointer"
    assert err.document_id == DOC_ID, f"the error does not name its file ({err.document_id!r}): {err}"
    assert err.line is None or (type(err.line) is int and err.line >= 1), f"bad line {err.line!r}: {err}"
    assert str(err)


def check_story(story: Any) -> None:
    assert type(story) is dict, f"a document is a dict, got {type(story).__name__}"
    pc.validate(story)
    row = pc.story_to_row(story)
    table = pc.rows_to_table([row])
    back = pc.row_to_story(table.to_pylist()[0])
    assert same_json(back, story), "the document changed through its Arrow row"


def check_reader(fmt: str, data: bytes | str) -> tuple[list[dict[str, Any]], bool]:
    """The reader property on one input; the documents it gave, and whether it refused nothing."""
    records: list[Record] | None
    try:
        records = list(iter_records(fmt, data, DOC_ID))
    except PchronicleError as exc:  # raising one is allowed too
        check_error(exc)
        records = None
    stories: list[dict[str, Any]] = []
    for rec in records or []:
        assert isinstance(rec, Record)
        assert (rec.story is None) != (rec.error is None), f"a record holds both or neither: {rec!r:.200}"
        if rec.error is not None:
            check_error(rec.error)
        else:
            check_story(rec.story)
            stories.append(rec.story)
    errors = [rec.error for rec in records or [] if rec.error is not None]
    try:
        docs = into_storyline(fmt, data, document_id=DOC_ID)
    except PchronicleError as exc:
        check_error(exc)
        assert records is None or errors, f"into_storyline raised {exc} but iter_records yielded no error"
        if errors:
            assert str(exc) == str(errors[0]), f"into_storyline raised {exc}, not the first error {errors[0]}"
    else:
        assert records is not None and not errors, f"into_storyline accepted what iter_records refused: {errors[:1]}"
        assert same_json(docs, stories), "into_storyline and iter_records gave different documents"
    return stories, records is not None and not errors


def source_format(fmt: str, data: bytes | str) -> str:
    if fmt != "auto":
        return fmt
    text, _ = decompress(as_bytes(data))
    return detect(as_bytes(text)).NAME


def check_writers(src: str, stories: list[dict[str, Any]], exact: bool) -> None:
    """Every writer on the documents; other formats' output is a readable input. Same-source output reads back:
    to the same documents when ``exact`` (the source had no refused record and no blank line, whose absence
    would shift the positions documents record), and always to a fixed point (writing what was read back and
    reading it again changes nothing)."""
    for out in FORMATS:
        try:
            text = from_storyline(out, stories)
        except PchronicleError as exc:
            assert out != src, f"same-source export to {out} refused documents its own reader gave: {exc}"
            continue
        assert isinstance(text, str)
        text.encode("utf-8")  # no lone surrogate: the output can be written as a file
        if out == src:
            try:
                back = into_storyline(out, text, document_id=DOC_ID)
            except PchronicleError as exc:
                raise AssertionError(f"same-source {out} output does not read back: {exc}") from exc
            assert len(back) == len(stories), f"same-source {out} output reads back {len(back)} of {len(stories)}"
            assert not exact or same_json(back, stories), f"same-source {out} output reads back to other documents"
            again = into_storyline(out, from_storyline(out, back), document_id=DOC_ID)
            assert same_json(again, back), f"same-source {out} export is not stable: a second round trip changes it"
        else:
            check_reader(out, text)


def _dense(data: bytes | str) -> bool:
    """No blank line before the last non-blank one (a blank line is a position: records after it shift)."""
    text, _ = decompress(as_bytes(data))
    return all(line.strip() for line in text.rstrip().split(b"\n"))


def check_input(fmt: str, inp: FuzzInput, target: str) -> None:
    """Count, then run the whole property on one input under the hard wall-clock guard."""
    if not _STARTED:
        _STARTED.append(time.perf_counter())
    COUNTS[target, fmt] += 1
    with hard_timeout(HARD_SECONDS, f"{fmt} reader on {inp!r}"):
        stories, complete = check_reader(fmt, inp.data)
        if stories:
            check_writers(source_format(fmt, inp.data), stories, exact=complete and _dense(inp.data))


def fuzz(data: st.DataObject, strategy: st.SearchStrategy[FuzzInput], fmt: str, target: str) -> None:
    note(f"reproduce the run with FUZZ_SEED={SEED} (profile {PROFILE})")
    check_input(fmt, data.draw(strategy, label="input"), target)


# ------------------------------------------------------------------------------------------ readers


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(25)
@given(data=st.data())
def test_valid_inputs(fmt, data):
    """The seeds themselves: samples, test data, generated corpora (the baseline every mutation starts from)."""
    fuzz(data, valid_inputs(fmt), fmt, "valid")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(150)
@given(data=st.data())
def test_byte_mutations(fmt, data):
    fuzz(data, byte_mutated(valid_inputs(fmt)), fmt, "byte-mutated")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(150)
@given(data=st.data())
def test_json_mutations(fmt, data):
    fuzz(data, json_mutated(valid_inputs(fmt)), fmt, "json-mutated")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(100)
@given(data=st.data())
def test_wrong_typed_field(fmt, data):
    fuzz(data, wrong_typed(fmt), fmt, "wrong-type-random")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(60)
@given(data=st.data())
def test_compressed_and_cut(fmt, data):
    fuzz(data, compressed(st.one_of(valid_inputs(fmt), byte_mutated(valid_inputs(fmt)))), fmt, "compressed")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(150)
@given(data=st.data())
def test_hostile_classes(fmt, data):
    fuzz(data, hostile(fmt), fmt, "hostile")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(100)
@given(data=st.data())
def test_random_json_files(fmt, data):
    fuzz(data, random_json_inputs(), fmt, "random-json")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(150)
@given(data=st.data())
def test_random_records(fmt, data):
    fuzz(data, random_records(fmt), fmt, "random-records")


@pytest.mark.parametrize("fmt", READERS)
@seed(SEED)
@fuzz_settings(150)
@given(data=st.data())
def test_everything_mixed(fmt, data):
    """Every class of input in one stream, compressed or not."""
    fuzz(data, every_input(fmt), fmt, "mixed")


# ------------------------------------------------------------------------------------------ every field, every type


def _signature(exc: BaseException) -> str:
    """Group failures by cause: the assertion's first words, or the exception type and the innermost library line."""
    if isinstance(exc, AssertionError):
        return f"AssertionError: {str(exc).splitlines()[0][:90] if str(exc) else ''}"
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "pchronicle_datasets" in f.filename]
    where = f" at {Path(frames[-1].filename).name}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}{where}: {str(exc)[:90]}"


@pytest.mark.parametrize("wrong", list(WRONG_VALUES))
@pytest.mark.parametrize("fmt", FORMATS)
def test_every_field_given_each_wrong_type(fmt, wrong):
    """One valid seed per format; every value in it (leaf or container, root included) replaced in turn."""
    new = WRONG_VALUES[wrong]
    lines = SEEDS_ONE[fmt]
    failures: dict[str, list[str]] = {}
    for i, value in enumerate(lines):
        for path in json_paths(value):
            old = value
            for token in path:
                old = old[token]
            if type(old) is type(new) and old == new:
                continue
            mutated = [*lines[:i], replace_at(value, path, new), *lines[i + 1 :]]
            data = "".join(render(v) + "\n" for v in mutated).encode("utf-8")
            where = f"line {i + 1} {join('', *path) or '(root)'}"
            try:
                check_input(fmt, FuzzInput(f"{wrong} at {where}", data), "wrong-type-every-field")
            except Exception as exc:
                failures.setdefault(_signature(exc), []).append(where)
    report = "\n".join(
        f"{len(where)}x {sig}\n    e.g. {', '.join(where[:4])}" for sig, where in sorted(failures.items())
    )
    assert not failures, f"{fmt} with {wrong} ({new!r:.30}) in a field:\n{report}"


# ------------------------------------------------------------------------------------------ big inputs

BIG = big_inputs()


@pytest.mark.parametrize("index", range(len(BIG)), ids=[f"{fmt}-{i}" for i, (fmt, _) in enumerate(BIG)])
def test_big_inputs(index):
    """Inputs of several MB (long strings, long runs of markup, many bad lines) within the hard time bound."""
    fmt, data = BIG[index]
    check_input(fmt, FuzzInput(f"big-{index}", data), "big")


_MEMORY_CHILD = textwrap.dedent(
    """
    import json, resource, sys, time
    import pchronicle_datasets as pc
    from pchronicle_datasets import PchronicleError
    from pchronicle_datasets.formats import from_storyline, iter_records
    from tests.fuzz_strategies import big_inputs

    def run(fmt, data):
        for rec in iter_records(fmt, data, "big"):
            if rec.story is None:
                continue
            try:
                pc.rows_to_table([pc.story_to_row(rec.story)])
                for out in ("storyline", "openai-msg", "sharegpt"):
                    from_storyline(out, [rec.story])
            except PchronicleError:
                pass

    inputs = big_inputs()
    run("storyline", b'{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": []}')
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    for fmt, data in inputs:
        run(fmt, data)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    unit = 1 if sys.platform == "darwin" else 1024  # ru_maxrss is bytes on macOS, KiB on Linux
    print(json.dumps({"before": before * unit, "after": after * unit, "seconds": time.perf_counter() - start,
                      "largest": max(len(d) for _, d in inputs), "total": sum(len(d) for _, d in inputs)}))
    """
)


@pytest.mark.skipif(sys.platform == "win32", reason="resource.getrusage is POSIX")
def test_big_inputs_memory_stays_bounded():
    """Peak RSS growth over a run of the big inputs (every reader, row and writer) stays a small multiple of the
    largest input, in a fresh process (the test process' own peak says nothing about one run)."""
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_CHILD], cwd=REPO, capture_output=True, text=True, timeout=300, check=False
    )
    assert out.returncode == 0, out.stderr[-3000:]
    stats = json.loads(out.stdout.strip().splitlines()[-1])
    growth = stats["after"] - stats["before"]
    COUNTS["memory", "all"] += len(BIG)
    total, seconds = stats["total"] / 1e6, stats["seconds"]
    print(f"peak RSS growth {growth / 1e6:.0f} MB for inputs of {total:.0f} MB in {seconds:.1f} s")
    # Decoding keeps the bytes, the parsed value, the document and its row JSON text alive together: a few
    # copies of an input, never a number that grows with nesting or with repeated markup.
    assert growth < 10 * stats["largest"] + 64_000_000, f"peak RSS grew by {growth / 1e6:.0f} MB: {stats}"


# ------------------------------------------------------------------------------------------ the builder


@pytest.fixture(scope="module")
def offline():
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setattr(datasets.config, "HF_HUB_OFFLINE", True)
        mp.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)
        bars = datasets.utils.logging.is_progress_bar_enabled()
        datasets.utils.logging.disable_progress_bar()
        try:
            yield
        finally:
            if bars:
                datasets.utils.logging.enable_progress_bar()


_EXT = {"gzip": ".jsonl.gz", "zstd": ".jsonl.zst", "bzip2": ".jsonl.bz2", None: ".jsonl"}


def _write(root: Path, inputs: list[FuzzInput]) -> list[tuple[Path, str, bytes]]:
    files = []
    for i, inp in enumerate(inputs):
        raw = inp.raw
        name = f"f{i}{_EXT[compression_of(raw[:4])]}"
        (root / "data").mkdir(exist_ok=True)
        (root / "data" / name).write_bytes(raw)
        files.append((root / "data" / name, name, raw))
    return files


def _load(root: Path, files: list, fmt: str, **options: Any):
    with hard_timeout(HARD_SECONDS * 2, f"load_dataset on {[name for _, name, _ in files]}"):
        return datasets.load_dataset(
            "pchronicle",
            fmt,
            data_files=[str(path) for path, _, _ in files],
            split="train",
            cache_dir=str(root / "cache"),
            **options,
        )


def _expected_row(story: dict[str, Any], name: str) -> dict[str, Any]:
    return story if "origin" in story else {**story, "origin": {"format": "storyline", "document_id": name}}


def _lines_accounted(raw: bytes, recs: list[Record], entries: list[dict[str, Any]]) -> None:
    """In a JSON Lines file, every non-blank line is part of a loaded record or of a quarantine entry."""
    if compression_of(raw[:4]) is not None:
        return
    text = as_bytes(raw)
    try:
        orjson.loads(text)
        return  # one JSON text: one record (or one error) for the whole file
    except orjson.JSONDecodeError:
        pass
    # Byte-order marks aside: the hub and the format module each strip one at the start of the data.
    holders = [rec.raw.decode("utf-8", "replace").replace("\ufeff", "") for rec in recs if rec.story is not None]
    holders += [(e["record"] or "").replace("\ufeff", "") for e in entries]
    for number, line in enumerate(text.split(b"\n"), 1):
        s = line.decode("utf-8", "replace").replace("\ufeff", "")
        if s and not s.isspace():
            assert any(s in h for h in holders), f"line {number} ({line[:60]!r}) is neither loaded nor quarantined"


@seed(SEED)
@fuzz_settings(10, deadline=None)
@given(data=st.data())
def test_builder_skip_accounts_for_every_record(offline, data):
    note(f"reproduce the run with FUZZ_SEED={SEED} (profile {PROFILE})")
    fmt = data.draw(st.sampled_from(READERS), label="format")
    inputs = data.draw(st.lists(builder_inputs(fmt), min_size=1, max_size=3), label="files")
    COUNTS["builder-skip", fmt] += 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = _write(root, inputs)
        quarantine = root / "quarantine.jsonl"
        oracle = {name: list(iter_records(fmt, raw, name)) for _, name, raw in files}
        wanted = [_expected_row(r.story, name) for name, recs in oracle.items() for r in recs if r.story is not None]
        try:
            ds = _load(root, files, fmt, on_bad_records="skip", quarantine_file=str(quarantine))
        except ValueError as exc:
            if isinstance(exc, PchronicleError) or "corresponds to no data" not in str(exc) or wanted:
                raise
            rows = []
        else:
            rows = list(ds)
        # JSON Lines split on "\n" only: str.splitlines() also splits inside strings (U+2028, U+0085…).
        text = quarantine.read_text("utf-8") if quarantine.exists() else ""
        entries = [json.loads(line) for line in text.split("\n") if line]

    got = [pc.row_to_story(row) for row in rows]
    assert len(got) == len(wanted), f"{len(got)} rows, the readers gave {len(wanted)} documents"
    assert same_json(got, wanted), "the builder's rows are not the readers' documents"
    want_entries = [
        (name, r.error.line if r.error.line is not None else r.line, r.error.pointer, type(r.error).__name__)
        for name, recs in oracle.items()
        for r in recs
        if r.error is not None
    ]
    got_entries = [(e["file"], e["line"], e["pointer"], e["error_type"]) for e in entries]
    assert got_entries == want_entries, "the quarantine does not hold exactly the refused records"
    for _, name, raw in files:
        _lines_accounted(raw, oracle[name], [e for e in entries if e["file"] == name])


@seed(SEED)
@fuzz_settings(10, deadline=None)
@given(data=st.data())
def test_builder_error_policy_lets_only_bad_record_error_out(offline, data):
    note(f"reproduce the run with FUZZ_SEED={SEED} (profile {PROFILE})")
    fmt = data.draw(st.sampled_from(READERS), label="format")
    inputs = data.draw(st.lists(builder_inputs(fmt), min_size=1, max_size=3), label="files")
    COUNTS["builder-error", fmt] += 1
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        files = _write(root, inputs)
        oracle = [(name, r) for _, name, raw in files for r in iter_records(fmt, raw, name)]
        first = next((r.error for _, r in oracle if r.error is not None), None)
        n_docs = sum(r.story is not None for _, r in oracle)
        try:
            ds = _load(root, files, fmt, on_bad_records="error")
        except BadRecordError as exc:
            assert first is not None, f"BadRecordError without a bad record: {exc}"
            assert (exc.document_id, exc.line, exc.pointer) == (first.document_id, first.line, first.pointer), (
                f"the builder stopped at {exc}, the first bad record is {first}"
            )
        except ValueError as exc:
            if isinstance(exc, PchronicleError) or "corresponds to no data" not in str(exc):
                raise
            assert first is None and n_docs == 0, f"'no data' although the files hold records: {exc}"
        else:
            assert first is None, f"loaded although {first} is a bad record"
            assert len(ds) == n_docs


# ------------------------------------------------------------------------------------------ findings
# Minimal reproducers of what the fuzz targets found, each run through the whole property (check_input).

_ROW = {
    "session_id": "s",
    "step_id": 1,
    "messages": [{"role": "user", "content": "hi"}],
    "response": {"role": "assistant", "content": "ok"},
}
_DOC = {"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}}


@pytest.mark.parametrize(
    "value",
    [
        b"[" * 254 + b"]" * 254,
        b"[" * 255 + b"]" * 255,
        b"[" * 1000 + b"]" * 1000,
        b"[" * 1000 + b"1" * 20 + b"]" * 1000,
    ],
    ids=["254", "255", "1000", "1000-with-a-19-digit-run"],
)
@pytest.mark.parametrize("where", ["extra", "msg"])
def test_deep_nesting_at_the_writers_limit(value, where):
    """orjson reads 1024 levels but writes 254, Python's json stops near the recursion limit: a document nested
    past what can be written was let through (``TypeError: Recursion limit reached`` in ``story_to_row``,
    ``RecursionError`` in ``validate`` and in the big-integer check) before 93bacd5."""
    turn = b'{"id": 1, "src": "user", "msg": ' + (value if where == "msg" else b"1") + b"}"
    doc = b'{"schema_version": "storyline/v1", "session": "s", "agent": {"id": "a"}, "turns": [' + turn + b"]"
    doc += (b', "extra": ' + value if where == "extra" else b"") + b"}"
    check_input("storyline", FuzzInput(f"deep-{where}", doc), "finding")


@pytest.mark.parametrize("role", [[], {}, ["user"]], ids=["array", "object", "array-of-role"])
def test_openai_msg_message_role_of_another_type(role):
    """A context message whose role is an array or object: refused or read, not ``TypeError: unhashable``."""
    row = {**_ROW, "messages": [{"role": role, "content": "x"}, *_ROW["messages"]]}
    check_input("openai-msg", FuzzInput("role", orjson.dumps(row)), "finding")


@pytest.mark.parametrize(
    "observation",
    [
        {"results": True},
        {"results": 1},
        {"results": [{"source_call_id": ["x"]}]},
        {"results": [{"source_call_id": {}}]},
    ],
    ids=["results-true", "results-number", "call-id-array", "call-id-object"],
)
def test_openai_msg_writer_takes_any_observation(observation):
    """``observation`` is ``any`` in RFC-0001: the openai-msg writer must not iterate or hash it blindly."""
    doc = {
        **_DOC,
        "turns": [
            {"id": 1, "src": "agent", "msg": "x", "tool_calls": [{"tcid": "c", "fn": "f", "args": {}}]},
            {"id": 2, "src": "agent", "msg": "y", "observation": observation},
        ],
    }
    check_input("storyline", FuzzInput("observation", orjson.dumps(doc)), "finding")


def test_openai_msg_same_source_export_of_one_row_with_a_session_steps_key_reads_back():
    """A row carrying a vendor key ``session_steps``, read from a top-level array, is written as a single JSON
    line, which the reader then takes for a ``{"session_steps": …}`` envelope."""
    check_input("openai-msg", FuzzInput("row+session_steps", orjson.dumps([{**_ROW, "session_steps": 1}])), "finding")


def test_openai_msg_output_role_survives_same_source_export():
    """A ``response`` whose role is not "assistant" is still the output; export wrote "assistant" instead of the
    source's role (not listed as normalised away), so the next row's history copy reads differently."""
    first = {**_ROW, "response": {"role": None, "content": "ok"}}
    second = {
        **_ROW,
        "step_id": 2,
        "messages": [*_ROW["messages"], {"role": "assistant", "content": "ok"}, {"role": "user", "content": "more"}],
        "response": {"role": "assistant", "content": "done"},
    }
    check_input("openai-msg", FuzzInput("role-null", orjson.dumps(first) + b"\n" + orjson.dumps(second)), "finding")


def test_openai_msg_deeply_nested_step_id():
    """A 300-deep array as ``step_id``: the error message serialised it with orjson, which stops at 255 levels."""
    data = b'{"session_id": "s", "step_id": ' + b"[" * 300 + b"]" * 300 + b', "response": {"content": "ok"}}'
    check_input("openai-msg", FuzzInput("deep-step-id", data), "finding")


def test_sharegpt_same_source_export_of_empty_bare_conversations_reads_back():
    """Two empty bare conversations are written as ``[]\\n[]\\n``, which the reader refuses (JSON Lines needs one
    non-empty line)."""
    check_input("sharegpt", FuzzInput("empty-bare", b'{"conversations": 1}\n[]\n[]\n'), "finding")


def test_sharegpt_same_source_export_of_a_bare_conversation_holding_a_record_reads_back():
    """A bare conversation whose only element is an object with a ``conversations`` key (kept whole as
    residual) is written as one line, ``[{"conversations": 1}]``, which the reader then takes for a JSON array
    of trajectory records."""
    check_input(
        "sharegpt", FuzzInput("bare-holding-record", b'{"conversations": 1}\n[{"conversations": 1}]\n'), "finding"
    )


def _edited(fmt: str, data: bytes, edit) -> FuzzInput:
    """A Storyline file of the documents read from ``data``, the first one edited (its hints, its turns)."""
    stories = pc.into_storyline(fmt, data, document_id="src.jsonl")
    edit(stories[0])
    return FuzzInput(f"edited-{fmt}", orjson.dumps(stories[0]))


def _set_hint(fmt: str, key: str, value: Any):
    def edit(story: dict[str, Any]) -> None:
        hints = story["meta"][fmt]
        target = hints["rows"][0] if fmt == "openai-msg" and key != "rows" else hints
        target[key] = value

    return edit


_OPENAI_ONE = orjson.dumps(_ROW)
_SHAREGPT_ONE = orjson.dumps({"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "ok"}]})


@pytest.mark.parametrize(
    "case",
    [
        ("openai-msg", _OPENAI_ONE, _set_hint("openai-msg", "keys", ["messages", "response", "0"])),
        ("openai-msg", _OPENAI_ONE, _set_hint("openai-msg", "rows", 1)),
        ("openai-msg", _OPENAI_ONE, _set_hint("openai-msg", "step_id", "1")),
        ("openai-msg", _OPENAI_ONE, lambda story: story["turns"].pop()),
        ("openai-msg", _OPENAI_ONE, lambda story: story["turns"][-1].update(observation={"results": True})),
        ("sharegpt", _SHAREGPT_ONE, _set_hint("sharegpt", "keys", 5)),
    ],
    ids=["oai-unknown-key", "oai-rows-number", "oai-step-id-string", "oai-turn-removed", "oai-results-true", "sg-keys"],
)
def test_same_source_writers_on_edited_export_hints(case):
    """A valid Storyline document whose ``/meta`` export hints (or turns) were edited after reading: the writer
    refuses it with a ``PchronicleError`` or writes it, it does not crash on the hints' shape."""
    fmt, data, edit = case
    check_input("storyline", _edited(fmt, data, edit), "finding")


# ------------------------------------------------------------------------------------------ summary


def test_zz_fuzz_summary(capsys):
    """Runs last in this file: the number of examples each fuzz target ran, the seed and the runtime."""
    elapsed = time.perf_counter() - _STARTED[0] if _STARTED else 0.0
    targets = sorted({t for t, _ in COUNTS})
    readers = [*READERS, "all"]
    lines = [f"fuzz summary: profile {PROFILE}, FUZZ_SEED={SEED}, {elapsed:.1f} s since the first example"]
    lines.append(f"{'target':<24}" + "".join(f"{r:>12}" for r in readers) + f"{'total':>10}")
    for target in targets:
        cells = [COUNTS.get((target, r), 0) for r in readers]
        lines.append(f"{target:<24}" + "".join(f"{c:>12}" for c in cells) + f"{sum(cells):>10}")
    lines.append(f"{'total':<24}{'':>{12 * len(readers)}}{sum(COUNTS.values()):>10}")
    with capsys.disabled():
        print("\n" + "\n".join(lines))
