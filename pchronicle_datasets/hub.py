"""Push a loaded or converted dataset to the Hugging Face Hub as plain Parquet plus a dataset card.

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


def dataset_card(splits: Mapping[str, Dataset], *, repo_id: str, conversion: str) -> str:
    """The README.md of the repository: YAML metadata (configs, features) and a short description."""
    first = next(iter(splits.values()))
    meta = {
        "configs": [
            {
                "config_name": "default",
                "data_files": [{"split": name, "path": f"data/{name}-*.parquet"} for name in splits],
            }
        ],
        "dataset_info": {
            **DatasetInfo(features=first.features)._to_yaml_dict(),
            "splits": [{"name": name, "num_examples": ds.num_rows} for name, ds in splits.items()],
        },
        "tags": ["agent-trajectories", "tool-calling", "pchronicle"],
    }
    formats: collections.Counter = collections.Counter()
    for ds in splits.values():
        formats.update(_source_formats(ds))
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
    return "\n".join(lines) + "\n"


def write_hub_folder(
    data: Dataset | DatasetDict | Mapping[str, Dataset],
    folder: str | Path,
    *,
    repo_id: str,
    conversion: str,
    split: str = "train",
) -> list[Path]:
    """Write what ``push_to_hub`` uploads (``data/{split}-NNNNN-of-NNNNN.parquet`` and ``README.md``)."""
    splits = _splits(data, split)
    root = Path(folder)
    (root / "data").mkdir(parents=True, exist_ok=True)
    written = []
    for name, ds in splits.items():
        n = max(1, -(-ds.num_rows // MAX_ROWS_PER_SHARD))
        for i in range(n):
            path = root / "data" / f"{name}-{i:05d}-of-{n:05d}.parquet"
            ds.shard(num_shards=n, index=i, contiguous=True).to_parquet(str(path))
            written.append(path)
    card = root / "README.md"
    card.write_text(dataset_card(splits, repo_id=repo_id, conversion=conversion), encoding="utf-8")
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
) -> Any:
    """Upload ``data`` to the dataset repository ``repo_id`` (created when missing); returns the commit info.

    ``conversion`` is written in the card (e.g. ``"openai-msg → to_sharegpt"``).
    """
    from huggingface_hub import HfApi

    api = HfApi(token=token)
    api.create_repo(repo_id, repo_type="dataset", private=private, exist_ok=True)
    # Removed on every exit path, an exception or the CLI's SIGTERM / SIGHUP (SystemExit) included.
    with tempfile.TemporaryDirectory(prefix="pchronicle-push-") as tmp:
        write_hub_folder(data, tmp, repo_id=repo_id, conversion=conversion, split=split)
        return api.upload_folder(
            folder_path=tmp,
            repo_id=repo_id,
            repo_type="dataset",
            commit_message=commit_message or f"Upload with pchronicle-datasets ({conversion})",
        )
