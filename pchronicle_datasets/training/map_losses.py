"""One loss summary per ``ds.map`` call of a training map function, never one line per row.

``datasets.Dataset.map`` gives a map function no signal that the call ends, so the map functions count each
example's losses into the report of the map call running them (``note``) and the summary is logged when the
call ends. The call is found on the stack: ``Dataset._map_single`` runs the function (batched or not, in this
process or in a ``num_proc`` worker, where it processes one shard); the summary is logged when the Arrow view of
the shard it iterates over is released, which happens when ``_map_single`` is done (for a call that raised, when
its traceback is released: later if the caller keeps the exception, still once, and never ending another call).

- A caller that collects (``pc.collect_losses()`` around ``ds.map``, as the CLI does) gets the counts instead,
  and nothing is logged.
- With ``num_proc``, each worker logs the summary of its shard (``shard 0``, ``shard 1``…): a worker has no
  channel back to the caller but its output rows.
- Under ``IterableDataset.map`` (streaming) the function runs lazily, as the examples are read; the call is
  ``MappedExamplesIterable``'s iteration, and its summary is logged when that iteration ends (the dataset read
  to its end, or the loop left and the iterator released): one summary per pass over the mapped dataset.
- A ``Dataset.map`` served from the cache does not run the function, so it logs nothing: the summary was logged
  when the cache was written (``load_from_cache_file=False`` runs it again).
- Called another way (directly, a ``datasets`` whose internals moved), the losses of each call are logged at
  once: one line per call, so nothing is ever silent.

>>> import logging
>>> from pchronicle_datasets.losses import LossReport
>>> report = LossReport()
>>> report.add("content_flattened", "/turns/0/msg")
>>> note("to_messages", report, document="s1", examples=1)  # not under ds.map: logged at once
"""

from __future__ import annotations

import logging
import sys
import weakref
from dataclasses import dataclass, field
from types import FrameType

from ..losses import LossReport, active_report

__all__ = ["note"]

log = logging.getLogger("pchronicle_datasets.losses")

# The frames between a map function and ``Dataset._map_single`` (apply_function, iter_outputs, the batched
# wrapper of a lambda…): a few, searched a little further for safety.
_SEARCH_DEPTH = 8


@dataclass
class _MapCall:
    name: str
    rank: int | None
    label: str = "ds.map"
    examples: int = 0
    report: LossReport = field(default_factory=LossReport)
    done: bool = False  # its summary was logged (by its finalizer, or when a newer call took its frame's id)


_CALLS: dict[int, _MapCall] = {}


# Where each kind of map call runs the function, and the local that lives exactly as long as the call: the
# Arrow view of the shard ``_map_single`` iterates over; the iterator over the examples ``MappedExamplesIterable``
# maps (a generator: released when the iteration ends or is dropped).
_CALL_FRAMES = {
    ("datasets.arrow_dataset", "_map_single"): ("arrow_formatted_shard", "ds.map"),
    ("datasets.iterable_dataset", "_iter"): ("iterator", "IterableDataset.map"),
    ("datasets.iterable_dataset", "_iter_arrow"): ("iterator", "IterableDataset.map"),
}

# Where the last map call's frame was: (its depth below ``_map_frame``, its id, its kind). Within a map call the
# map function is called from the same place every time, so one frame lookup at that depth finds it again
# instead of a walk up the stack per example. The id only, never the frame: holding the frame would hold the
# anchor whose release ends the call.
_LAST: list = [0, 0, None]


def _call_kind(frame: FrameType) -> tuple[str, str] | None:
    return _CALL_FRAMES.get((frame.f_globals.get("__name__"), frame.f_code.co_name))


def _map_frame() -> tuple[FrameType, str, str] | None:
    """The frame of the map call running the map function, the name of its anchor local and the call's label."""
    depth, key, kind = _LAST
    if depth:
        try:
            frame = sys._getframe(depth)
        except ValueError:  # the stack is shallower than that
            frame = None
        if frame is not None and id(frame) == key and _call_kind(frame) is kind:
            return frame, *kind
    frame = sys._getframe(3)  # _map_frame ← _current_call ← note ← the map function ← … : its callers
    for depth in range(3, 3 + _SEARCH_DEPTH):
        if frame is None:
            return None
        kind = _call_kind(frame)
        if kind is not None:
            _LAST[:] = depth, id(frame), kind
            return frame, *kind
        frame = frame.f_back
    return None


def _finish(key: int, call: _MapCall) -> None:
    # The call itself, not only its frame's id: an anchor released late (a map call that raised keeps its frame
    # in the traceback's reference cycle until the collector runs) must not end a newer call whose frame has
    # the same id.
    if call.done:
        return
    call.done = True
    if _CALLS.get(key) is call:
        del _CALLS[key]
    shard = f" (shard {call.rank})" if call.rank is not None else ""
    if call.report:
        log.warning(
            "%s over %d example(s)%s (%s): %s [%s]",
            call.name,
            call.examples,
            shard,
            call.label,
            call.report.summary(),
            "; ".join(call.report.explain()),
        )
    else:
        log.info("%s over %d example(s)%s (%s): no loss", call.name, call.examples, shard, call.label)


def _current_call(name: str) -> _MapCall | None:
    found = _map_frame()
    if found is None:
        return None
    frame, anchor_name, label = found
    key = id(frame)  # stable while the generator runs; the entry goes when the call ends (_finish)
    call = _CALLS.get(key)
    if call is not None and call.name == name:
        return call
    local = frame.f_locals  # a snapshot, read once per map call
    anchor = local.get(anchor_name)
    if anchor is None:
        return None
    rank = local.get("rank")
    new = _MapCall(name, rank if isinstance(rank, int) else None, label)
    try:
        weakref.finalize(anchor, _finish, key, new)
    except TypeError:  # not weak-referenceable in this datasets
        return None
    if call is not None:
        _finish(key, call)  # another map function on the same frame: the frame id was reused
    _CALLS[key] = new
    return new


def note(name: str, report: LossReport, *, document: str = "", examples: int = 1) -> None:
    """Count the losses of ``examples`` example(s) converted by the map function ``name`` (``document``: the
    session they came from): into the caller's ``collect_losses()``, else into the summary of the ``ds.map``
    call running it, else logged now."""
    outer = active_report()
    if outer is not None:
        outer.update(report, document)
        return
    call = _current_call(name)
    if call is None:
        if report:
            log.warning("%s: %s [%s]", name, _with_document(report, document).summary(), "; ".join(report.explain()))
        return
    call.examples += examples
    call.report.update(report, document)


def _with_document(report: LossReport, document: str) -> LossReport:
    out = LossReport()
    out.update(report, document)
    return out
