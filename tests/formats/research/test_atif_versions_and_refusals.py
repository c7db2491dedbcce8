"""Issue 21: an ATIF trajectory whose ``schema_version`` is a bare ``1.N`` is read as ATIF 1.N with a note in
``inspect``; ``inspect`` prints the value it refused; refusals name the closest format, what differs and the
option that reads it, and count the records detection actually looked at."""

from __future__ import annotations

import json
import subprocess
import sys

import orjson
import pytest

import pchronicle_datasets as pc
from pchronicle_datasets import FormatError
from pchronicle_datasets.formats import DETECT_RECORDS, detect

from .common import DATA

GOLDEN = DATA / "atif" / "harbor_golden_openhands_hello-world.trajectory.json"


def _with_version(version: str) -> bytes:
    trajectory = orjson.loads(GOLDEN.read_bytes())
    trajectory["schema_version"] = version
    return orjson.dumps(trajectory)


def _inspect(path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pchronicle_datasets", "inspect", str(path)], capture_output=True, text=True
    )


def test_a_bare_version_is_read_as_atif_and_written_back_as_it_was(tmp_path):
    data = _with_version("1.4")
    assert detect(data).NAME == "atif"
    [story] = pc.into_storyline("auto", data, document_id="t.json")
    assert story["origin"]["schema_version"] == "1.4"
    assert orjson.loads(pc.from_storyline("atif", [story])) == orjson.loads(data)
    path = tmp_path / "t.json"
    path.write_bytes(data)
    out = _inspect(path)
    assert out.returncode == 0
    assert 'note: 1 document(s): schema_version "1.4" (no "ATIF-v" prefix) read as ATIF-v1.4' in out.stdout


def test_a_bare_version_without_atif_structure_is_not_atif():
    assert not pc.formats.get_format("atif").sniff({"schema_version": "1.4", "steps": 3})


def test_inspect_prints_the_value_it_refused(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(_with_version("2.0"))
    out = _inspect(path)
    assert out.returncode == 1
    assert "not an ATIF 1.x schema_version: '2.0'" in out.stdout
    assert 'load_dataset("pchronicle", "atif")' in out.stdout  # the value of the first record, not "…"


def test_the_refusal_names_the_closest_format_what_differs_and_how_to_read_it():
    with pytest.raises(FormatError) as err:
        pc.into_storyline("auto", _with_version("ATIF-v2.0"), document_id="t.json")
    msg = err.value.reason
    assert "the closest format is atif (it shares the keys schema_version, session_id, agent, steps" in msg
    assert "whose reader says /schema_version: not an ATIF 1.x schema_version: 'ATIF-v2.0'" in msg
    assert 'read it with --from atif (load_dataset("pchronicle", "atif"))' in msg


def test_the_count_says_how_many_records_were_looked_at():
    lines = b"".join(orjson.dumps({"note": n}) + b"\n" for n in range(249))
    with pytest.raises(FormatError) as err:
        detect(lines)
    assert f"nor any of the {DETECT_RECORDS - 1} record(s) after it that detection looked at" in err.value.reason
    assert f"first {DETECT_RECORDS} records, and this one has more" in err.value.reason
    few = b"".join(orjson.dumps({"note": n}) + b"\n" for n in range(5))
    with pytest.raises(FormatError, match=r"nor any of the 4 record\(s\) after it\); no format reads it"):
        detect(few)


def test_inspect_json_keeps_the_first_reason(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(_with_version("2.0"))
    out = subprocess.run(
        [sys.executable, "-m", "pchronicle_datasets", "inspect", "--json", str(path)], capture_output=True, text=True
    )
    [group] = json.loads(out.stdout)["bad_records_by_reason"]
    assert "'2.0'" in group["first"]["reason"] and '"…"' in group["reason"]
