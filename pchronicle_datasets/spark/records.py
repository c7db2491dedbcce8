"""What the tasks compute, as Arrow: documents and bad records of whole files and of the parts of split files
read in place, the rows of a range, and the documents of the sessions regrouped from ranges. Pure pyarrow (no
Spark here), so each step is testable alone.

Every stage gives **records**: the columns of ``STORYLINE_FEATURES``, then ``_order`` (the file's place among
the inputs), ``_pos`` (the record's place in its file: its index for a whole file, its line's byte offset for
a part read in place, its first line for a range) and ``_bad`` (null for a document; else the bad record,
with the fields of the local loader's quarantine entries: ``file``, ``line``, ``pointer``, ``error``,
``error_type``, ``record``).

>>> import orjson
>>> from pchronicle_datasets.spark.plan import Part
>>> rows = [{"session_id": "a", "step_id": 1, "response": {"role": "assistant", "content": "hi"}},
...         {"session_id": "", "step_id": 1}]
>>> data = b"".join(orjson.dumps(r) + b"\\n" for r in rows)
>>> [t.num_rows for t in whole_file_tables(Part("mem", "cap.jsonl", 0, "whole"), "openai-msg", "skip", data)]
[2]
>>> table = next(whole_file_tables(Part("mem", "cap.jsonl", 0, "whole"), "openai-msg", "skip", data))
>>> table.column("_bad").to_pylist()[1]["pointer"]
'/session_steps/1/session_id'
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from ..compression import MAX_DECOMPRESSED_SIZE
from ..errors import BadRecordError, FormatError, NoConversationError, PchronicleError
from ..features import STORYLINE_FEATURES, story_to_row
from ..formats import capability, get_format, iter_records
from ..formats.base import Record, parsed_lines
from ..formats.source import MAX_RECORD_SIZE, is_blank_line
from ..jsonio import loads, may_hold_big_int
from ..loading.line_parts import line_records, line_value
from ..loading.policy import no_conversation, refusal
from ..loading.ranges import count_lines
from ..quarantine import quarantine_entry
from ..session_links import with_children
from .plan import Part

__all__ = [
    "BAD_FIELDS",
    "COUNTS_SCHEMA",
    "RANGE_SCHEMA",
    "RECORDS_SCHEMA",
    "STORY_SCHEMA",
    "range_tables",
    "session_table",
    "whole_file_tables",
]

BATCH = 256  # documents per Arrow batch, as the local loader's default batch_size

STORY_SCHEMA: pa.Schema = STORYLINE_FEATURES.arrow_schema
#: The ``error_type`` of a ``_bad`` entry that is a file left out as holding no conversation (``loading.policy``):
#: no bad record, set apart by ``SparkRead`` and the data source.
NO_CONVERSATION = NoConversationError.__name__
BAD_FIELDS = pa.struct(
    [
        ("file", pa.string()),
        ("line", pa.int64()),
        ("pointer", pa.string()),
        ("error", pa.string()),
        ("error_type", pa.string()),
        ("record", pa.string()),
    ]
)
RECORDS_SCHEMA = pa.schema([*STORY_SCHEMA, ("_order", pa.int64()), ("_pos", pa.int64()), ("_bad", BAD_FIELDS)])
# One non-blank line of a range: the row (its JSON text, parsed again after the shuffle) or the bad line.
RANGE_SCHEMA = pa.schema(
    [
        ("order", pa.int64()),
        ("document_id", pa.string()),
        ("session_id", pa.string()),
        ("r", pa.int64()),
        ("line", pa.int64()),
        ("raw", pa.binary()),
        ("bad", BAD_FIELDS),
    ]
)
COUNTS_SCHEMA = pa.schema(
    [("order", pa.int64()), ("index", pa.int64()), ("lines", pa.int64()), ("nonblank", pa.int64())]
)


def bad_entry(rec: Record, name: str) -> dict[str, Any]:
    """The quarantine entry of a bad record: the local loader's (``quarantine.quarantine_entry``); a Spark job's
    entries are that job's output, so they carry no run id."""
    return quarantine_entry(name, rec)


def refuse(err: PchronicleError, name: str) -> BadRecordError:
    """The error that fails the job under ``on_bad_records="error"``: the local loader's (``loading.policy``),
    naming file, line and pointer."""
    return refusal(err, name)


def _record_row(rec: Record, part: Part, pos: int, policy: str) -> dict[str, Any]:
    if rec.error is not None:
        # A file that holds no conversation is no bad record under either policy (loading.policy): it goes out
        # with the bad records, and SparkRead sets it apart.
        if policy == "error" and no_conversation(rec.error) is None:
            raise refuse(rec.error, part.document_id)
        return {"_order": part.order, "_pos": pos, "_bad": bad_entry(rec, part.document_id)}
    story = rec.story
    assert story is not None
    if "origin" not in story:
        # As the local loader does: a Storyline document without provenance gets its file's.
        story = {**story, "origin": {"format": "storyline", "document_id": part.document_id}}
    row = story_to_row(story, check=False)  # readers return validated documents
    row["_order"], row["_pos"] = part.order, pos
    return row


def _tables(rows: Iterator[dict[str, Any]], schema: pa.Schema) -> Iterator[pa.Table]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= BATCH:
            yield pa.Table.from_pylist(batch, schema=schema)
            batch = []
    if batch:
        yield pa.Table.from_pylist(batch, schema=schema)


def whole_file_tables(
    part: Part,
    fmt: str,
    policy: str,
    data: Any,
    max_size: int = MAX_DECOMPRESSED_SIZE,
    max_record_size: int = MAX_RECORD_SIZE,
    sidecar: bytes | None = None,
    links: dict[str, list[str]] | None = None,
) -> Iterator[pa.Table]:
    """The records of one whole file (its bytes or an open binary file, possibly compressed), read by the local
    reader as a stream, with its limits: ``max_size`` decompressed bytes, ``max_record_size`` bytes a record.
    ``sidecar``: the bytes of the file's sidecar (``part.sidecar``; ``sidecars.py``), as the local loader gives
    them to its reader. ``links``: the subagent links of the whole read (``plan.plan_links``), added to the
    parents' ``/children`` as the local loader adds them (``session_links.with_children``)."""
    records = iter_records(
        fmt, data, part.document_id, max_size=max_size, sidecar=sidecar, max_record_size=max_record_size
    )
    records = with_children(records, links or {})
    yield from _tables((_record_row(rec, part, i, policy) for i, rec in enumerate(records)), RECORDS_SCHEMA)


def lines_tables(
    part: Part, policy: str, offset: int, data: bytes, max_record_size: int = MAX_RECORD_SIZE
) -> Iterator[pa.Table]:
    """The records of one part of a split file read in place (its lines, from byte ``offset`` of the file),
    numbered as in the whole file (``part.first_line``, ``part.first_row`` from the counting pass): each line
    read by ``loading.line_parts.line_records``, as the builder's workers read theirs."""
    module = get_format(part.format)
    if capability(module, "line_reader") is None:  # the plan splits only formats that read a line alone
        raise ValueError(f"the {part.format} format has no per-line rule: its files are read whole")

    def lines() -> Iterator[tuple[int, int, bytes]]:
        number, at = part.first_line - 1, 0
        while at < len(data):
            cut = data.find(b"\n", at)
            end = len(data) if cut == -1 else cut
            raw, here, at = data[at:end], offset + at, end + 1
            number += 1
            if not is_blank_line(raw):
                yield number, here, raw

    records = line_records(lines(), part.document_id, module, part.first_row, max_record_size)
    # A line may give several records: fewer than its bytes, so offset + k keeps them in order.
    yield from _tables((_record_row(rec, part, here + k, policy) for here, k, rec in records), RECORDS_SCHEMA)


def counts_table(part: Part, data: bytes) -> pa.Table:
    """The counting pass of one range: its physical and non-blank lines."""
    lines, nonblank = count_lines(data)
    return pa.Table.from_pylist(
        [{"order": part.order, "index": part.index, "lines": lines, "nonblank": nonblank}], schema=COUNTS_SCHEMA
    )


def _regrouping(fmt: str) -> Any:
    """The format's regrouping capability (``base.Regrouping``): the plan makes range parts only of such formats."""
    module = capability(fmt, "regrouping")
    if module is None:
        raise ValueError(f"the {fmt} format does not regroup rows: its files are read whole")
    return module


def range_tables(part: Part, policy: str, data: bytes, max_record_size: int = MAX_RECORD_SIZE) -> Iterator[pa.Table]:
    """The rows of one range (the lines starting in it), numbered as in the whole file: ``part.first_line``
    and ``part.first_row`` come from the counting pass; each row's group (its session) is the format's
    ``group_of``."""
    group_of = _regrouping(part.format).group_of
    pieces = data.split(b"\n")
    if pieces and pieces[-1] == b"":
        pieces.pop()
    lines = [(part.first_line + i, raw) for i, raw in enumerate(pieces) if not is_blank_line(raw)]
    scan = may_hold_big_int(data)

    def rows() -> Iterator[dict[str, Any]]:
        kept = [(n, raw) for n, raw in lines if len(raw) <= max_record_size]
        parsed = parsed_lines(data, kept, part.document_id, scan)  # lines beyond max_record_size: never parsed
        for index, (number, raw) in enumerate(lines):
            if len(raw) > max_record_size:  # the local reader's refusal of the same line, its text not kept
                value, raw = line_value(raw, part.document_id, number, max_record_size)[0], b""
            else:
                _, _, raw, value = next(parsed)
            r = part.first_row + index
            got = value if isinstance(value, FormatError) else group_of(r, value, number, raw, part.document_id)
            if isinstance(got, str):
                yield {"order": part.order, "document_id": part.document_id, "session_id": got, "r": r,
                       "line": number, "raw": raw}  # fmt: skip
                continue
            rec = Record(number, raw, error=got) if isinstance(got, FormatError) else got
            if policy == "error":
                raise refuse(rec.error, part.document_id)  # type: ignore[arg-type]
            yield {"order": part.order, "document_id": part.document_id, "r": r, "line": number,
                   "bad": bad_entry(rec, part.document_id)}  # fmt: skip

    yield from _tables(rows(), RANGE_SCHEMA)


def session_table(rows: Mapping[str, list], policy: str, fmt: str) -> pa.Table:
    """The records of one (file, session) group of range rows of a file of format ``fmt``: one document (the
    format's ``build_group``, or the session's error), or, for the group of bad lines (no session), their bad
    records."""
    n = len(rows["r"])
    order, name, sid = rows["order"][0], rows["document_id"][0], rows["session_id"][0]
    out: list[dict[str, Any]] = []
    if sid is None:
        for i in range(n):
            out.append({"_order": order, "_pos": rows["line"][i], "_bad": rows["bad"][i]})
        return pa.Table.from_pylist(out, schema=RECORDS_SCHEMA)
    ordered = sorted(range(n), key=lambda i: rows["r"][i])  # the file's order, which the shuffle lost
    raws = [rows["raw"][i] for i in ordered]
    scan = any(may_hold_big_int(raw) for raw in raws)
    items = [
        (rows["r"][i], loads(raw, document_id=name, line=rows["line"][i], scan=scan), rows["line"][i], raw)
        for i, raw in zip(ordered, raws, strict=True)
    ]
    first_line = items[0][2]
    raw_all = b"\n".join(raws)
    try:
        story = _regrouping(fmt).build_group(sid, items, name, scan)
    except PchronicleError as exc:
        rec = Record(first_line, raw_all, error=exc)
        if policy == "error":
            raise refuse(exc, name) from None
        out.append({"_order": order, "_pos": first_line, "_bad": bad_entry(rec, name)})
    else:
        row = story_to_row(story, check=False)
        row["_order"], row["_pos"] = order, first_line
        out.append(row)
    return pa.Table.from_pylist(out, schema=RECORDS_SCHEMA)
