"""``Source.read_all`` after a peek: the splitter only counts the lines it reads to the end (no line is handed
out), and what it keeps — the text, the line number of a stream error, the unfinished line it cuts — is what
reading the lines one by one gives."""

from __future__ import annotations

import json

import pytest

from pchronicle_datasets.errors import FormatError
from pchronicle_datasets.formats.source import Source, as_source

DOC = json.dumps({"turns": [{"id": k, "msg": f"line {k}"} for k in range(400)]}, indent=2).encode()


def _failing(chunks: list[bytes], error: str = "the stream broke"):
    yield from chunks
    raise FormatError(error, document_id="f.json")


@pytest.mark.parametrize("chunk", [len(DOC), 4096, 97])
@pytest.mark.parametrize("peek", [0, 1, 2, 50])
def test_read_all_after_a_peek_keeps_the_exact_text_and_replays_every_line(chunk, peek):
    src = Source([DOC[i : i + chunk] for i in range(0, len(DOC), chunk)], "f.json")
    assert len(src.first_lines(peek)) == peek
    assert src.read_all() == DOC
    replayed = list(src.lines())
    assert [raw for _, _, raw in replayed] == DOC.split(b"\n")
    assert [number for number, _, _ in replayed] == list(range(1, DOC.count(b"\n") + 2))
    assert all(DOC[offset : offset + len(raw)] == raw for _, offset, raw in replayed)


@pytest.mark.parametrize("chunk", [1 << 20, 4096, 97])
@pytest.mark.parametrize("peek", [0, 2])
def test_a_stream_error_during_read_all_names_the_line_lines_would_name(chunk, peek):
    broken = DOC[: len(DOC) * 2 // 3]  # stops in the middle of a line
    pieces = [broken[i : i + chunk] for i in range(0, len(broken), chunk)]
    by_lines = as_source(_failing(pieces))
    list(by_lines.lines())
    whole = as_source(_failing(pieces))
    whole.first_lines(peek)
    text = whole.read_all()
    complete = broken.count(b"\n")
    assert text == broken[: broken.rfind(b"\n") + 1]  # the text ends at the last complete line
    assert whole.cut == by_lines.cut == broken[broken.rfind(b"\n") + 1 :]
    assert str(whole.error) == str(by_lines.error)
    assert whole.error.line == by_lines.error.line == complete + 1


def test_read_all_after_a_peek_refuses_a_file_over_the_record_limit():
    src = Source([DOC[i : i + 1000] for i in range(0, len(DOC), 1000)], "f.json", max_record_size=5000)
    src.first_lines(2)
    with pytest.raises(FormatError, match="max_record_size"):
        src.read_all()
