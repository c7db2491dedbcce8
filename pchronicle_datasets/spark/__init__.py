"""Reading, converting and writing trajectory corpora on Apache Spark (the ``spark`` extra: pyspark >= 4).

>>> import pchronicle_datasets.spark as pcs
>>> {"read", "register", "to_sharegpt", "write_parquet"} <= set(pcs.__all__)
True

Typical use (see ``docs/scaling.md``)::

    spark = pcs.local_session("local[2]")          # or the cluster's session
    got = pcs.read(spark, "s3://bucket/captures/", "openai-msg", on_bad_records="skip")
    pcs.write_parquet(pcs.to_sharegpt(got.rows), "s3://bucket/sft/")
    got.write_quarantine("s3://bucket/quarantine/")

``pcs.register(spark)`` makes ``spark.read.format("pchronicle")`` available: the same plan (``plan_files``), big
JSON Lines files of one-record-per-line formats split into several tasks; openai-msg captures, whose rows are
regrouped by session (a shuffle), are split by ``pcs.read`` only.
"""

try:
    import pyspark
    from pyspark.sql.datasource import DataSource as _DataSource  # noqa: F401  (Spark 4's Python Data Source API)
except ImportError as exc:  # pragma: no cover - depends on what is installed
    raise ImportError(
        "pchronicle_datasets.spark needs PySpark 4 or later (and Java 17+): pip install 'pchronicle-datasets[spark]'"
    ) from exc

from .convert import MESSAGES_SCHEMA, SHAREGPT_SCHEMA, messages_batches, sharegpt_batches, to_messages, to_sharegpt
from .plan import DEFAULT_SPLIT_SIZE, plan_files
from .read import SparkRead, read, register
from .session import local_session
from .write import push_to_hub, write_format, write_parquet

__all__ = [
    "DEFAULT_SPLIT_SIZE",
    "MESSAGES_SCHEMA",
    "SHAREGPT_SCHEMA",
    "SparkRead",
    "local_session",
    "messages_batches",
    "plan_files",
    "push_to_hub",
    "read",
    "register",
    "sharegpt_batches",
    "to_messages",
    "to_sharegpt",
    "write_format",
    "write_parquet",
]

SPARK_VERSION = pyspark.__version__
