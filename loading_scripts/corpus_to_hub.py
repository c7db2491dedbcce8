"""Corpus → Hub: publish trajectories as a dataset that plain `load_dataset("org/name")` reads.

    python loading_scripts/corpus_to_hub.py 'runs/**/*.jsonl.gz' --repo org/agent-trajectories
    python loading_scripts/corpus_to_hub.py 'captures/*.jsonl' --repo org/agent-sft --to sharegpt
    python loading_scripts/corpus_to_hub.py pchronicle_datasets/samples/openai_msg/*.json* \
        --repo org/demo --dry-run out/hub

Loads the files in any registered format (detected from their content), optionally converts them to
training examples (`--to sharegpt` or `--to messages`), and uploads Parquet shards plus a dataset card
(features, source formats and counts, the conversion used), redacted first (docs/redaction.md).
`--dry-run FOLDER` writes exactly what would be uploaded to FOLDER instead (load it back with
`load_dataset(FOLDER)`). The token comes from `--token`, `HF_TOKEN` or the saved login.
"""

from __future__ import annotations

import argparse

from datasets import load_dataset

import pchronicle_datasets as pc
from pchronicle_datasets.hub import write_hub_folder
from pchronicle_datasets.redact.upload import redact_splits


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_files", nargs="+", help="trajectory files or glob patterns")
    parser.add_argument("--repo", required=True, help="ORG/NAME of the dataset repository")
    parser.add_argument("--format", default="auto", help="input format (default: detect per file)")
    parser.add_argument("--to", choices=("rows", "sharegpt", "messages"), default="rows")
    parser.add_argument("--token")
    parser.add_argument("--private", action="store_true")
    parser.add_argument("--dry-run", metavar="FOLDER", help="write what would be uploaded here instead")
    parser.add_argument("--cache-dir", help="datasets cache folder (default: datasets' own)")
    args = parser.parse_args(argv)

    ds = load_dataset("pchronicle", args.format, data_files=args.data_files, split="train", cache_dir=args.cache_dir)
    conversion = f"load_dataset('pchronicle', '{args.format}')"
    if args.to != "rows":
        fn = pc.to_sharegpt if args.to == "sharegpt" else pc.to_messages
        features = pc.SHAREGPT_FEATURES if args.to == "sharegpt" else pc.MESSAGES_FEATURES  # fixed: docs/training.md
        ds = ds.map(fn, remove_columns=ds.column_names, features=features, desc=fn.__name__)
        conversion += f" → {fn.__name__}"
    if args.dry_run:
        # What push_to_hub would upload: redacted first (docs/redaction.md), the card saying so.
        redactor = pc.Redactor()
        ds = redact_splits({"train": ds}, redactor)["train"]
        written = write_hub_folder(
            ds, args.dry_run, repo_id=args.repo, conversion=conversion, redaction=redactor.report.card_lines()
        )
        print(f"{ds.num_rows} rows; would upload {len(written)} file(s), written to {args.dry_run}")
        return 0
    info = pc.push_to_hub(ds, args.repo, conversion=conversion, token=args.token, private=args.private or None)
    print(f"{ds.num_rows} rows pushed to {args.repo}: {info.commit_url}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
