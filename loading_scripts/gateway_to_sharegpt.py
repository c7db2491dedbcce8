"""Gateway capture → ShareGPT training set.

    python loading_scripts/gateway_to_sharegpt.py 'captures/*.jsonl' -o out/sharegpt
    python loading_scripts/gateway_to_sharegpt.py \
        pchronicle_datasets/samples/openai_msg/gateway_capture.jsonl -o out/sharegpt

Loads OpenAI Messages gateway captures (RFC-0009 rows; any files `load_dataset` accepts: globs, .gz,
hf://…) with `load_dataset("pchronicle", "openai-msg")`, sets bad sessions aside in a quarantine file
instead of failing, maps every trajectory to ShareGPT with `to_sharegpt`, and writes
`OUT/train.jsonl` (one `{"conversations": [...]}` per line) and `OUT/train.parquet`.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from datasets import load_dataset

import pchronicle_datasets as pc


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("data_files", nargs="+", help="capture files or glob patterns")
    parser.add_argument("-o", "--output", required=True, help="output folder")
    parser.add_argument("--format", default="openai-msg", help="input format (default openai-msg; 'auto' detects)")
    parser.add_argument("--drop-copied", action="store_true", help="leave out copied context turns")
    parser.add_argument("--cache-dir", help="datasets cache folder (default: datasets' own)")
    args = parser.parse_args(argv)

    out = Path(args.output)
    out.mkdir(parents=True, exist_ok=True)
    quarantine = out / "quarantine.jsonl"
    ds = load_dataset(
        "pchronicle",
        args.format,
        data_files=args.data_files,
        split="train",
        on_bad_records="skip",
        quarantine_file=str(quarantine),
        cache_dir=args.cache_dir,
    )
    train = ds.map(
        pc.to_sharegpt,
        fn_kwargs={"drop_copied": args.drop_copied},
        remove_columns=ds.column_names,
        features=pc.SHAREGPT_FEATURES,
        desc="to_sharegpt",
    )
    with open(out / "train.jsonl", "w", encoding="utf-8") as f:
        for row in train:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    train.to_parquet(str(out / "train.parquet"))
    skipped = len(quarantine.read_text(encoding="utf-8").splitlines()) if quarantine.exists() else 0
    print(
        f"{train.num_rows} trajectories → {out / 'train.jsonl'} and {out / 'train.parquet'}; "
        f"{skipped} bad record(s) in {quarantine if skipped else 'no quarantine'}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
