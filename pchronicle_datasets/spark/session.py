"""A Spark session for one machine (the CLI, the tests, the benchmark), with the settings these need.

On a cluster, build the session as the cluster wants it; only ``PYSPARK_PYTHON`` matters to this package
there (the executors' Python must have it installed, see ``docs/scaling.md``).
"""

from __future__ import annotations

import os
import sys
import tempfile
from typing import Any

from pyspark.sql import SparkSession

__all__ = ["local_session"]


def local_session(master: str = "local[2]", *, app_name: str = "pchronicle", **conf: Any) -> SparkSession:
    """A local Spark session: workers run this Python (else they run the system one), the driver binds to
    the loopback address, no UI, scratch folders in a temporary folder. ``conf``: more Spark settings
    (``spark.sql.shuffle.partitions`` and such; dots as written)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    scratch = tempfile.mkdtemp(prefix="pchronicle-spark-")
    builder = (
        SparkSession.builder.master(master)
        .appName(app_name)
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.local.dir", os.path.join(scratch, "local"))
        .config("spark.sql.warehouse.dir", os.path.join(scratch, "warehouse"))
        .config("spark.sql.shuffle.partitions", "4")
        .config("spark.driver.memory", "2g")
    )
    for key, value in conf.items():
        builder = builder.config(key, str(value))
    return builder.getOrCreate()
