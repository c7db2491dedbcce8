"""The loading rules every engine shares: the datasets builder (``builder.py``), the CLI (``cli.py``) and Spark
(``spark/``) are thin adapters over them, so each engine gives the same rows, ids and errors.

- ``folder``: what a ``data_dir`` given without ``data_files`` reads (the files the CLI reads of a folder; the splits
  ``datasets`` infers, only when they leave no file out);
- ``ids``: the document id of each input file (relative to ``data_dir`` or to the inputs' common parent);
- ``split``: which big files may be read in parts, and how (``split_kind``: the one rule);
- ``ranges``: the lines that start in a byte range of a file (``line_start``, ``read_lines``, ``byte_range``);
- ``line_parts``: one part of a file of standalone lines read with the whole file's records
  (``part_records`` for the builder's workers; ``line_records``, the per-line rule, for Spark's tasks too);
- ``policy``: the bad-record policy (``on_bad_records``), the error that stops a load (``refusal``), the
  quarantine file's setup (``prepare_quarantine``) and the commands' policy object (``CommandBadRecords``, for
  the CLI and Spark alike).
- ``batches``: ``read_batches``, Storyline rows as Arrow record batches for any engine (Daft, Ray, pyarrow), and
  the two steps the builder reads a file with too (``file_records``: which reader; ``tables``: the policy, rows).

Below them, in ``formats/``: whether a file is one JSON value or JSON Lines (``base.first_line_kind``), what a
blank line is (``source.is_blank_line``) and the readers themselves; ``formats.capability`` finds what a
format can do beyond reading whole files (be split, read one line, regroup rows).
"""
