# Collected by pytest's --doctest-modules: keep entry points (which run on import) out of collection.
collect_ignore = ["pchronicle_datasets/__main__.py", "scripts", "benchmarks"]
