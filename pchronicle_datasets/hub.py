"""Push a loaded or converted dataset to the Hugging Face Hub as plain Parquet plus a dataset card, and/or
as agent traces the Hub's trace viewer shows (``layout="traces"`` or ``"both"``: one Session Trace Simple
Format file per trajectory, ``traces/{split}/completed|failed/``, see ``traces.py`` and docs/formats/sts.md).

The repository needs nothing of this package to load: ``load_dataset("org/name")`` reads the Parquet
shards through the card's ``configs`` (the features travel in the Parquet schema and in the card's
``dataset_info``). The card also says what the data is: its features, the source formats and their
counts, the number of rows per split and the conversion used.

>>> from datasets import Dataset
>>> card = dataset_card({"train": Dataset.from_dict({"x": [1]})}, repo_id="org/demo", conversion="demo")
>>> card.splitlines()[0]
'---'
"""

from __future__ import annotations

import collections
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from datasets import Dataset, DatasetDict, DatasetInfo

from ._version import __version__ as _version
from .features import row_to_story
from .losses import LossReport, describe
from .redact import Redactor
from .redact.scanners import second_scan
from .redact.upload import card_lines as redaction_card_lines
from .redact.upload import redact_splits
from .redact.upload import resolve as resolve_redactor
from .traces import write_traces

__all__ = ["card_text", "dataset_card", "push_to_hub", "write_hub_folder"]

MAX_ROWS_PER_SHARD = 50_000
MAX_CARD_TEXT = 200  # characters of one value from the data shown in the card
_MD_ESCAPED = frozenset("\\`*[]()!#|~:.@{}")
_HTML = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}


def card_text(value: object) -> str:
    """``value`` as inline card text that cannot change the card's structure: control characters and newlines
    become spaces, HTML is escaped, and Markdown's link, image, code, table and heading characters are
    backslash-escaped (so are ``:``, ``.`` and ``@``: no autolink); at most ``MAX_CARD_TEXT`` characters.

    >>> card_text("openai-msg")
    'openai-msg'
    >>> card_text("x\\n# Title <script>[click](https://e.vil)")
    'x \\\\# Title &lt;script&gt;\\\\[click\\\\]\\\\(https\\\\://e\\\\.vil\\\\)'
    """
    text = "".join(" " if ch.isspace() or not ch.isprintable() else ch for ch in str(value))
    if len(text) > MAX_CARD_TEXT:
        text = text[: MAX_CARD_TEXT - 1] + "…"
    return "".join(_HTML.get(ch) or (f"\\{ch}" if ch in _MD_ESCAPED else ch) for ch in text)


LAYOUTS = ("parquet", "traces", "both")
TRACE_TAGS = ["agent-traces", "format:agent-traces"]
# The Hub's size_categories buckets (by number of examples), as the Hub's dataset card metadata lists them.
_SIZES = ("n<1K", "1K<n<10K", "10K<n<100K", "100K<n<1M", "1M<n<10M", "10M<n<100M", "100M<n<1B", "1B<n<10B")


def size_category(n: int) -> str:
    """The Hub's ``size_categories`` value for ``n`` examples.

    >>> size_category(6), size_category(25_000)
    ('n<1K', '10K<n<100K')
    """
    for exponent, name in enumerate(_SIZES, start=3):
        if n < 10**exponent:
            return name
    return "n>1T" if n > 10**12 else "10B<n<100B" if n < 10**11 else "100B<n<1T"


def _splits(data: Dataset | DatasetDict | Mapping[str, Dataset], split: str) -> dict[str, Dataset]:
    if isinstance(data, Dataset):
        return {split: data}
    if isinstance(data, Mapping):
        return dict(data)
    raise TypeError(f"push_to_hub takes a Dataset or a DatasetDict, got {type(data).__name__}")


def _source_formats(ds: Dataset) -> collections.Counter:
    if "origin" not in ds.column_names:
        return collections.Counter()
    return collections.Counter((o or {}).get("format") or "unknown" for o in ds["origin"])


def _models(ds: Dataset) -> collections.Counter:
    if "agent" not in ds.column_names:
        return collections.Counter()
    return collections.Counter(a["model"] for a in ds["agent"] if isinstance(a, Mapping) and a.get("model"))


def _trace_configs(traces: Mapping[str, Mapping[str, list]], parquet: bool) -> list[dict[str, Any]]:
    """One config per group (``completed``, ``failed``) that has files, each with the splits that have
    some; the first is the default when there is no Parquet config."""
    configs = []
    for group in ("completed", "failed"):
        files = [
            {"split": split, "path": f"traces/{split}/{group}/*.jsonl"} for split, g in traces.items() if g.get(group)
        ]
        if files:
            configs.append({"config_name": group, "data_files": files})
    if configs and not parquet:
        configs[0]["default"] = True
    return configs


def dataset_card(
    splits: Mapping[str, Dataset],
    *,
    repo_id: str,
    conversion: str,
    traces: Mapping[str, Mapping[str, list]] | None = None,
    parquet: bool = True,
    losses: LossReport | None = None,
    redaction: list[str] | None = None,
) -> str:
    """The README.md of the repository: YAML metadata (configs, features, tags, size) and a description.

    ``traces`` (split → group → files, from ``write_traces``) adds the ``completed``/``failed`` trace
    configs and the agent-traces tags; ``parquet=False`` leaves the Parquet config out; ``redaction`` is
    the card's redaction lines (``redact/upload.py``: rule counts, never a value); ``losses`` (the loss
    report of the conversion, as ``pc.losses`` or ``collect_losses`` give it) adds the section "What the
    conversion left out"."""
    first = next(iter(splits.values()))
    configs = []
    if parquet:
        configs.append(
            {
                "config_name": "default",
                "data_files": [{"split": name, "path": f"data/{name}-*.parquet"} for name in splits],
            }
        )
    if not parquet:
        # `datasets` reads every config of a repository with one builder (inferred from the files), so
        # the JSON Lines trace configs cannot sit beside a Parquet one: with both, the traces are files
        # for the Hub's trace viewer and the Parquet is what `load_dataset` reads.
        configs += _trace_configs(traces or {}, parquet)
    meta: dict[str, Any] = {"configs": configs}
    if parquet:
        meta["dataset_info"] = {
            **DatasetInfo(features=first.features)._to_yaml_dict(),
            "splits": [{"name": name, "num_examples": ds.num_rows} for name, ds in splits.items()],
        }
    meta["size_categories"] = [size_category(sum(ds.num_rows for ds in splits.values()))]
    meta["tags"] = ["agent-trajectories", "tool-calling", "pchronicle", *(TRACE_TAGS if traces else [])]
    formats: collections.Counter = collections.Counter()
    models: collections.Counter = collections.Counter()
    for ds in splits.values():
        formats.update(_source_formats(ds))
        models.update(_models(ds))
    lines = [
        "---",
        yaml.safe_dump(meta, sort_keys=False, allow_unicode=True).rstrip(),
        "---",
        "",
        f"# {repo_id}",
        "",
        "LLM-agent trajectories converted with "
        f"[pchronicle-datasets](https://pypi.org/project/pchronicle-datasets/) {_version}.",
        "",
        f"- **Conversion:** {card_text(conversion)}",
        "- **Rows:** " + ", ".join(f"{card_text(name)}: {ds.num_rows}" for name, ds in splits.items()),
    ]
    if formats:
        # Format names come from the data (origin.format): escaped, they stay text.
        lines.append(
            "- **Source formats:** " + ", ".join(f"{card_text(fmt)}: {n}" for fmt, n in sorted(formats.items()))
        )
    if models:
        lines.append("- **Models:** " + ", ".join(f"{card_text(m)}: {n}" for m, n in sorted(models.items())))
    if traces:
        counts = {g: sum(len(t.get(g, [])) for t in traces.values()) for g in ("completed", "failed")}
        lines += [
            f"- **Agent traces:** {counts['completed']} completed, {counts['failed']} failed, one Session Trace "
            "Simple Format file each under `traces/{split}/completed|failed/` (the Hub's trace viewer shows them; "
            "configs `completed` and `failed`; `datasets` decodes them with `teich` installed, or reads the lines "
            "as they are with `parse_agent_traces=False`)",
        ]
    lines += redaction or []
    lines += [
        "",
        "Load it with `datasets` alone:",
        "",
        "```python",
        "from datasets import load_dataset",
        f'ds = load_dataset("{repo_id}")',
        "```",
        "",
        "## Features",
        "",
        "| column | type |",
        "|---|---|",
    ]
    lines += [f"| `{name}` | `{feature!r}` |".replace("\n", " ") for name, feature in first.features.items()]
    if "turns" in first.column_names and "unknown_fields" in first.column_names:
        lines += [
            "",
            "Rows are Storyline documents (RFC-0001). Values of any JSON type (`msg`, `args`, `result`, "
            "`metrics`, `extra`, `meta`, `unknown_fields`…) are stored as JSON text, so they keep their exact "
            "type: decode them with `json.loads`, or `pchronicle_datasets.row_to_story(row)` for the whole "
            "document.",
        ]
    if losses is not None:
        lines += ["", *left_out_section(losses)]
    return "\n".join(lines) + "\n"


def left_out_section(report: LossReport) -> list[str]:
    """The card's "What the conversion left out": each kind of loss with its count, its first pointer and what it
    means (``losses.KINDS``), or a line saying nothing was; the text comes from the data only through
    ``card_text``.

    >>> from pchronicle_datasets.losses import LossReport
    >>> report = LossReport()
    >>> report.add("system_prompt_replaced", "/turns/0/msg", "s1")
    >>> left_out_section(report)[4].split(" | ")[:3]
    ['| `system_prompt_replaced`', '1', '`/turns/0/msg` of s1']
    """
    lines = ["## What the conversion left out", ""]
    if not report:
        return [*lines, "Nothing: every value of the sources is in these rows, mapped or kept as residual."]
    lines += ["| kind | count | first at | what it means |", "|---|---|---|---|"]
    for kind, n in sorted(report.counts.items()):
        pointer, doc = card_text(report.first.get(kind) or "(root)"), report.first_document.get(kind)
        where = f"`{pointer}`" + (f" of {card_text(doc)}" if doc else "")
        lines.append(f"| `{card_text(kind)}` | {n} | {where} | {card_text(describe(kind))} |".replace("\n", " "))
    return lines


def write_hub_folder(
    data: Dataset | DatasetDict | Mapping[str, Dataset],
    folder: str | Path,
    *,
    repo_id: str,
    conversion: str,
    split: str = "train",
    layout: str = "parquet",
    harness: str | None = None,
    losses: LossReport | None = None,
    redaction: list[str] | None = None,
) -> list[Path]:
    """Write what ``push_to_hub`` uploads: ``data/{split}-NNNNN-of-NNNNN.parquet`` (layout ``parquet`` or
    ``both``), ``traces/{split}/completed|failed/*.jsonl`` (``traces`` or ``both``; the rows must be
    Storyline rows) and ``README.md``."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    splits = _splits(data, split)
    root = Path(folder)
    root.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    traces: dict[str, dict[str, list]] = {}
    if layout != "parquet":
        for name, ds in splits.items():
            if "turns" not in ds.column_names or "agent" not in ds.column_names:
                raise ValueError("agent traces are written from Storyline rows; these rows have no turns/agent")
            groups, _ = write_traces((row_to_story(r) for r in ds), root / "traces" / name, harness=harness)
            traces[name] = groups
            written += [p for files in groups.values() for p in files]
    card = root / "README.md"
    card_text = dataset_card(
        splits,
        repo_id=repo_id,
        conversion=conversion,
        traces=traces or None,
        parquet=layout != "traces",
        losses=losses,
        redaction=redaction,
    )
    if layout == "traces":
        card.write_text(card_text, encoding="utf-8")
        return [*written, card]
    (root / "data").mkdir(parents=True, exist_ok=True)
    for name, ds in splits.items():
        n = max(1, -(-ds.num_rows // MAX_ROWS_PER_SHARD))
        for i in range(n):
            path = root / "data" / f"{name}-{i:05d}-of-{n:05d}.parquet"
            ds.shard(num_shards=n, index=i, contiguous=True).to_parquet(str(path))
            written.append(path)
    card.write_text(card_text, encoding="utf-8")
    written.append(card)
    return written


def push_to_hub(
    data: Dataset | DatasetDict | Mapping[str, Dataset],
    repo_id: str,
    *,
    conversion: str = "load_dataset('pchronicle', ...)",
    split: str = "train",
    private: bool | None = None,
    token: str | None = None,
    commit_message: str | None = None,
    layout: str = "parquet",
    harness: str | None = None,
    losses: LossReport | None = None,
    redact: bool | Redactor = True,
) -> Any:
    """Upload ``data`` to the dataset repository ``repo_id`` (created when missing); returns the commit info.

    ``conversion`` is written in the card (e.g. ``"openai-msg → to_sharegpt"``); ``layout`` is ``parquet``,
    ``traces`` (agent traces only) or ``both``; ``harness`` names the STS harness (default: each agent id);
    ``losses`` puts the conversion's loss report in the card (``pc.losses(ds, target=…)`` gives it).

    ``redact`` (docs/redaction.md): every split is redacted before anything is written or sent (``True``, a
    random key), with a given ``Redactor`` (its key, lists and report), or not at all (``False``, and the
    card says so). If redaction fails, nothing is uploaded (not even the repository is created).
    """
    from huggingface_hub import HfApi

    splits = _splits(data, split)
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, got {layout!r}")
    redactor = resolve_redactor(redact)
    if redactor is not None:
        splits = redact_splits(splits, redactor)
    api = HfApi(token=token)
    # Removed on every exit path, an exception or the CLI's SIGTERM / SIGHUP (SystemExit) included.
    with tempfile.TemporaryDirectory(prefix="pchronicle-push-") as tmp:
        written = write_hub_folder(
            splits,
            tmp,
            repo_id=repo_id,
            conversion=conversion,
            split=split,
            layout=layout,
            harness=harness,
            losses=losses,
            redaction=redaction_card_lines(redactor),
        )
        if redactor is not None and redactor.config.second_scan:
            second_scan(splits, [p for p in written if p.suffix != ".parquet"])
        api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
        return api.upload_folder(
            folder_path=tmp,
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=commit_message or f"Upload with pchronicle-datasets ({conversion})",
        )
