"""The Daft recipe of ``docs/scaling.md``: one task per file through ``pc.read_batches``, the builder's rows.

Daft is an optional extra (``pip install 'pchronicle-datasets[daft]'``), not in ``test``: it caps pyarrow and
tqdm below the versions the rest of the suite runs with."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from datasets import load_dataset

import pchronicle_datasets as pc

daft = pytest.importorskip("daft", reason="daft is not installed (the `daft` extra): the Daft recipe is not run")

SAMPLES = Path(__file__).resolve().parents[2] / "pchronicle_datasets" / "samples"
SCHEMA = pc.STORYLINE_FEATURES.arrow_schema


def test_the_daft_recipe_gives_load_datasets_rows(tmp_path: Path):
    pattern = str(SAMPLES / "**" / "*.json*")
    # -- the recipe (docs/scaling.md, "Daft") --
    row = daft.DataType.from_arrow_type(pa.struct(list(pc.STORYLINE_FEATURES.arrow_schema)))

    @daft.func(return_dtype=row)
    def storyline_rows(path: str):
        # One task per file; ids relative to the corpus folder, as load_dataset's data_dir names them.
        for batch in pc.read_batches(path, on_bad_records="skip", base=str(SAMPLES)):
            yield from batch.to_pylist()

    files = daft.from_glob_path(pattern)
    rows = files.select(storyline_rows(files["path"]).alias("row")).select(daft.col("row").unnest())
    rows.write_parquet(str(tmp_path / "rows"))
    # -- end of the recipe --
    got = rows.to_arrow().cast(SCHEMA).to_pylist()
    want = load_dataset("pchronicle", split="train", data_files=pattern, data_dir=str(SAMPLES), streaming=True)
    want = pa.concat_tables(list(want.with_format("arrow").iter(batch_size=1000))).cast(SCHEMA).to_pylist()
    assert len(got) == len(want) > 0

    def by_file(rows):  # files are tasks, in the engine's order; a file's rows keep theirs (a stable sort)
        return sorted(rows, key=lambda r: r["origin"]["document_id"])

    assert by_file(got) == by_file(want)
    # What Daft wrote loads back with datasets as the same rows.
    parquet = load_dataset("parquet", data_files=str(tmp_path / "rows" / "*.parquet"), split="train")
    assert parquet.num_rows == len(want)


def test_daft_from_arrow_over_read_batches():
    batches = list(pc.read_batches(SAMPLES / "sharegpt"))
    df = daft.from_arrow([pa.Table.from_batches([b]) for b in batches])
    assert df.to_arrow().cast(SCHEMA).to_pylist() == pa.Table.from_batches(batches).to_pylist()
