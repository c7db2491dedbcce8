"""Detection never refuses a file of a supported format (issue 14): every sample, corpus and golden input file,
every writer's output for every format (and what is read back from it, written again by every writer), the
issue's three cases, records that no format claims before the first one that decides, and an unknown or
ambiguous file that stays one small bad record under skip."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets.cli import main
from pchronicle_datasets.errors import FormatError
from pchronicle_datasets.formats import WHOLE_FILE_RECORD_LIMIT, detect, from_storyline, get_format, iter_records
from pchronicle_datasets.quarantine import read_quarantine
from pchronicle_datasets.sidecars import groups, index_files

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "pchronicle_datasets" / "samples"
DATA = ROOT / "tests" / "data"
CAPTURE = SAMPLES / "openai_msg" / "gateway_capture.jsonl"
WRITERS = ["storyline", "openai-msg", "sharegpt", "chat", "atif", "codex", "pi"]
# The format of each folder's files; exceptions by name below.
FOLDERS = {
    "openai_msg": "openai-msg",
    "sharegpt": "sharegpt",
    "storyline": "storyline",
    "chat": "chat",
    "atif": "atif",
    "swe_agent": "swe-agent",
    "mini_swe_agent": "mini-swe-agent",
    "openhands": "openhands",
    "openhands_sdk": "openhands-sdk",
    "role_text": "role-text",
    "gemini_cli": "gemini-cli",
    "opencode": "opencode",
    "copilot_cli": "copilot-cli",
    "cursor": "cursor",
    "claude_code": "claude-code",
    "codex": "codex",
    "pi": "pi",
    "cline": "cline",
    "qwen_code": "qwen-code",
    "kimi_cli": "kimi-cli",
    "goose": "goose",
    "kimi_code": "kimi-code",
}


def expected_format(path: Path) -> str:
    """The format a file is in: its folder's, except Storyline files (``*.storyline.json*``) anywhere, the
    OpenAI message lists given to the reference ShareGPT converter (``sharegpt/*.input.json``) and the
    LLaMA-Factory demo that is OpenAI-style messages (``tests/data/sharegpt/README.md``) and the reference
    converter's outputs (``*.reference.json``)."""
    if ".storyline." in path.name or path.parent.name == "validation":
        return "storyline"
    if path.name.endswith(".input.json") and path.parent.name == "sharegpt":
        return "chat"
    if path.name == "llamafactory_reason_tool_use_demo_50.jsonl":
        return "chat"
    if path.name.endswith(".reference.json"):  # what the reference converter writes: ShareGPT conversations
        return "sharegpt"
    area = path.relative_to(SAMPLES if SAMPLES in path.parents else DATA).parts[0]
    return FOLDERS[area]


def source_files() -> list[Path]:
    """Every shipped sample, every corpus file copied into tests/data and every golden input file."""
    samples = [p for p in SAMPLES.rglob("*.json*") if p.is_file()]
    # Expected outputs that are not trajectories (expected documents, loss reports) are not sources.
    # Sidecars (a Claude Code subagent's agent-<id>.meta.json) inform their file's reader and are no documents.
    data = [
        p
        for p in DATA.rglob("*.json*")
        if p.is_file() and not p.name.endswith((".expected.json", ".losses.json", ".meta.json"))
    ]
    data += DATA.rglob("*.traj")  # SWE-agent's trajectories keep their own extension
    data += DATA.rglob("*.db")  # SQLite session stores (an OpenCode database): detected by their tables
    # Files a harness keeps beside its sessions that hold none (a format's INDEX_FILES: OpenClaw's trajectory
    # pointers and traces) are left out of a folder's documents, not read as a format.
    index = index_files([str(p) for p in data])
    data = [p for i, p in enumerate(data) if i not in index]
    # The files of a folder that are one document (an OpenHands conversation folder: sidecars.groups) are read
    # together, never one by one (tests/formats/openhands_sdk loads the folder).
    members = {j for _, group in groups([str(p) for p in data]).values() for j in group}
    data = [p for i, p in enumerate(data) if i not in members]
    return sorted(samples) + sorted(data)


SOURCES = source_files()


def ident(path: Path) -> str:
    return str(path.relative_to(ROOT))


def outcome(records) -> list:
    return [(r.line, r.story, None if r.error is None else str(r.error)) for r in records]


def test_the_file_lists_are_what_they_say():
    assert len(SOURCES) > 200 and {expected_format(p) for p in SOURCES} == set(FOLDERS.values())
    assert (DATA / "sharegpt" / "llamafactory_glaive_toolcall_en_demo.json") in SOURCES


# ------------------------------------------------------------------------------------- every source file


@pytest.mark.parametrize("path", SOURCES, ids=ident)
def test_every_source_file_is_detected_and_read_as_its_format(path):
    data = path.read_bytes()
    fmt = expected_format(path)
    detected = detect(data, path.name).NAME
    assert detected == fmt
    auto = outcome(iter_records("auto", data, path.name))
    assert auto == outcome(iter_records(fmt, data, path.name))
    assert auto and all(error is None for _, _, error in auto)


# ------------------------------------------------------------------------------ every writer's output


def written(writer: str, stories: list[dict]) -> tuple[list[str], int]:
    """What a writer gives for ``stories`` (its one text, and for a folder format every non-empty file of its
    folder), and how many documents it holds: a document a target cannot hold is counted as a loss."""
    module = get_format(writer)
    with pc.collect_losses() as losses:
        texts = [from_storyline(writer, stories)]
        if module.OUTPUT == "folder":
            texts += [text for text in module.encode_folder(stories).values() if text]
    held = len(stories) - losses.counts["no_agent_turn"]
    if held == 0:
        assert texts == [""]
    else:
        for text in texts:
            detected = detect(text.encode()).NAME
            assert detected == writer
    return texts, held


def read_back(text: str) -> list[dict]:
    return pc.into_storyline("auto", text, document_id="written") if text else []


@pytest.mark.parametrize("writer", WRITERS)
@pytest.mark.parametrize("path", SOURCES, ids=ident)
def test_every_writer_output_of_every_source_file_is_detected_as_the_writer(path, writer):
    """Documents read from each source file, written by each writer: detected as that writer, read back to as
    many documents (the folder format's files together); what is read back, written by every writer again, is
    detected as that writer too."""
    stories = pc.into_storyline("auto", path.read_bytes(), document_id=path.name)
    (one, *files), held = written(writer, stories)
    back = read_back(one)
    assert len(back) == held
    if files:
        assert sum(len(read_back(text)) for text in files) == held
    for again in WRITERS:
        written(again, back)


# --------------------------------------------------------------------------------- the three cases


def test_our_own_storyline_output_of_the_gateway_sample_is_read_back(tmp_path, capsys):
    out = tmp_path / "x.jsonl"
    assert main(["convert", str(CAPTURE), "--to", "storyline", "-o", str(out)]) == 0
    capsys.readouterr()
    assert main(["inspect", "--json", str(out)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["documents"], report["bad_records"]) == (3, 0)
    assert detect(out.read_bytes()).NAME == "storyline"


def gateway_rows(tools_params: dict, n: int = 3) -> list[dict]:
    """Gateway rows that send OpenAI ``tools`` whose parameters are ``tools_params``."""
    tools = [
        {
            "type": "function",
            "function": {"name": "send", "parameters": {"type": "object", "properties": tools_params}},
        }
    ]
    history = [{"role": "user", "content": "Send it."}]
    rows = []
    for step in range(1, n + 1):
        response = {"role": "assistant", "content": f"step {step}"}
        rows.append(
            {"session_id": "s", "step_id": step, "tools": tools, "messages": list(history), "response": response}
        )
        history += [response, {"role": "user", "content": "Again."}]
    return rows


def test_gateway_rows_whose_tool_parameters_are_named_from_and_value(tmp_path):
    params = {"from": {"type": "string"}, "value": {"type": "string"}}
    data = b"".join(orjson.dumps(row) + b"\n" for row in gateway_rows(params))
    assert detect(data).NAME == "openai-msg"
    assert outcome(iter_records("auto", data, "cap.jsonl")) == outcome(iter_records("openai-msg", data, "cap.jsonl"))
    # Under skip, through the builder: every row is read, nothing is quarantined.
    path = tmp_path / "cap.jsonl"
    path.write_bytes(data)
    quarantine = tmp_path / "q.jsonl"
    ds = load_skip(tmp_path, path, quarantine)
    assert ds.num_rows == 1 and not quarantine.exists()


def test_a_first_row_beyond_64_kib_with_step_id_after_messages():
    row = {
        "session_id": "s",
        "messages": [{"role": "user", "content": "x" * 70_000}],
        "step_id": 1,
        "response": {"role": "assistant", "content": "ok"},
    }
    data = orjson.dumps(row) + b"\n" + orjson.dumps({**row, "session_id": "t"}) + b"\n"
    assert data.index(b'"step_id"') > 65536
    assert detect(data).NAME == "openai-msg"
    assert [s["session"] for s in pc.into_storyline("auto", data)] == ["s", "t"]


# ------------------------------------------------------------------- records no format claims come first


def test_a_first_record_no_format_claims_does_not_hide_the_format_of_the_rest():
    """A gateway log whose first line is an event, not a row: the next line decides, and the reader refuses the
    event on its own (before: the whole file was one bad record)."""
    event = b'{"event": "capture-start", "at": "2026-03-01T12:00:00Z"}\n'
    data = event + CAPTURE.read_bytes()
    assert detect(data).NAME == "openai-msg"
    records = list(iter_records("auto", data, "cap.jsonl"))
    assert outcome(records) == outcome(iter_records("openai-msg", data, "cap.jsonl"))
    bad = [r for r in records if r.error is not None]
    assert len(bad) == 1 and bad[0].line == 1 and "session_id" in str(bad[0].error)
    assert len([r for r in records if r.story is not None]) == 3


def test_an_empty_first_conversation_does_not_hide_a_sharegpt_file():
    record = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
    data = b"[]\n" + orjson.dumps(record) + b"\n"
    assert detect(data).NAME == "sharegpt"
    assert len(pc.into_storyline("auto", data)) == 2


def test_one_well_formed_element_makes_a_sharegpt_conversation():
    record = {"conversations": [{"from": None, "value": "?"}, {"from": "human", "value": "hi"}]}
    assert detect(orjson.dumps(record)).NAME == "sharegpt"


def test_detection_looks_at_a_bounded_number_of_records():
    from pchronicle_datasets.formats import DETECT_RECORDS

    unclaimed = b'{"note": 1}\n' * DETECT_RECORDS
    with pytest.raises(FormatError, match=f"nor any of the {DETECT_RECORDS - 1} record"):
        detect(unclaimed + CAPTURE.read_bytes())
    assert detect(unclaimed[: -len(b'{"note": 1}\n')] + CAPTURE.read_bytes()).NAME == "openai-msg"


def test_a_file_whose_records_all_say_nothing_is_not_recognised():
    """``[]`` is an empty chat array of records or an empty ShareGPT conversation: nothing tells which."""
    with pytest.raises(FormatError, match="not recognised: it holds a JSON array of 0 element"):
        detect(b"[]\n[]\n")


@pytest.mark.parametrize(
    ("encoding", "name"), [("utf-16", "UTF-16"), ("utf-16-le", "UTF-16"), ("utf-16-be", "UTF-16"), ("utf-32", "UTF-32")]
)
def test_a_utf16_file_is_refused_with_its_encoding_and_what_to_do(encoding, name):
    """Windows PowerShell 5's ``>`` writes UTF-16 with a byte-order mark: the refusal names the encoding and how to
    convert, detected or named (before: "it holds no JSON object or array", or orjson's "surrogates not allowed").
    UTF-8's own mark is read as before."""
    chat = '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]}\n'
    mark = "" if encoding in ("utf-16", "utf-32") else "\ufeff"  # those two codecs write their own mark
    data = (mark + chat * 2).encode(encoding)
    with pytest.raises(FormatError, match=f"not recognised: the text is {name} .* iconv -f {name} -t UTF-8"):
        detect(data)
    with pytest.raises(FormatError, match=f"not valid JSON: the text is {name}"):
        pc.into_storyline("chat", data)
    assert len(pc.into_storyline("chat", (chat * 2).encode("utf-8-sig"))) == 2


# -------------------------------------------------------------- unknown and ambiguous files stay small


def load_skip(cache: Path, path: Path | list[Path], quarantine: Path):
    return datasets.load_dataset(
        "pchronicle",
        data_files=[str(p) for p in path] if isinstance(path, list) else str(path),
        split="train",
        cache_dir=str(cache / "cache"),
        on_bad_records="skip",
        quarantine_file=str(quarantine),
    )


def big_file(kind: str) -> bytes:
    """About 3 MiB: JSON Lines of objects no format claims, or of records two formats claim."""
    if kind == "unknown":
        line = orjson.dumps({"event": "tick", "payload": "p" * 1000})
    else:  # a ShareGPT record that also has a gateway row's session_id and step_id
        line = orjson.dumps(
            {"session_id": "s", "step_id": 1, "conversations": [{"from": "human", "value": "v" * 1000}]}
        )
    data = b"".join(line + b"\n" for _ in range(3 * WHOLE_FILE_RECORD_LIMIT // len(line)))
    assert len(data) > 2 * WHOLE_FILE_RECORD_LIMIT
    return data


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setattr(datasets.config, "HF_DATASETS_OFFLINE", True)


@pytest.mark.parametrize(("kind", "says"), [("unknown", "not recognised"), ("ambiguous", "ambiguous")])
@pytest.mark.parametrize("via", ["builder", "cli"])
def test_a_large_undetectable_file_is_one_small_bad_record_under_skip(tmp_path, kind, says, via):
    path = tmp_path / "big.jsonl"
    path.write_bytes(big_file(kind))
    quarantine = tmp_path / "q.jsonl"
    if via == "builder":  # beside a good file, which still loads
        assert load_skip(tmp_path, [path, CAPTURE], quarantine).num_rows == 3
    else:
        out = tmp_path / "out.jsonl"
        argv = ["convert", str(path), str(CAPTURE), "--to", "storyline", "-o", str(out), "--on-bad-records", "skip"]
        assert main([*argv, "--quarantine", str(quarantine)]) == 0
        assert len(pc.into_storyline("storyline", out.read_bytes())) == 3
    [entry] = read_quarantine(quarantine)
    assert says in entry["error"] and entry["file"].endswith("big.jsonl")
    assert entry["record"] is None  # the file's bytes are not copied into the quarantine
    assert quarantine.stat().st_size < 4096


def test_a_small_undetectable_file_keeps_its_bytes_in_its_bad_record():
    data = b'{"event": "tick"}\n{"event": "tock"}\n'
    [rec] = iter_records("auto", data, "small.jsonl")
    assert rec.raw == data and "not recognised" in str(rec.error)
