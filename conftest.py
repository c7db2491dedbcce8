import os

# Nothing is downloaded at test time: `datasets` looks nothing up on the Hub (a `load_dataset("pchronicle", …)`
# would otherwise ask the Hub whether "pchronicle" is a dataset repository first, and wait 5 s for an answer that
# never comes on a machine without network). Set before `datasets` is imported, which reads it once. The Hub
# client itself stays online: the push tests route it to a fake Hub (tests/hub_fake.py).
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")

import pytest
from hypothesis import settings

# CI runs the property tests derandomized (a fixed seed per test, no deadline on a shared 2-core machine), so a
# run is reproducible and a green run stays green; locally they keep exploring new examples.
settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Collected by pytest's --doctest-modules: keep entry points (which run on import) out of collection.
collect_ignore = ["pchronicle_datasets/__main__.py", "scripts", "benchmarks"]

# Helper modules under tests/ hold assertions too (the openai-msg invariants, the same-source check):
# rewrite them like test modules so that a failure shows the values compared.
pytest.register_assert_rewrite("tests")

# The Spark module needs the `spark` extra; without it its doctests are not collected (tests/test_spark.py
# skips itself with the reason).
try:
    import pyspark.sql.datasource  # noqa: F401
except ImportError:
    collect_ignore.append("pchronicle_datasets/spark")
