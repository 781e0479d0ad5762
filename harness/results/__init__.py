"""Results: run records on disk (store, codec), reading them back from any bytes, comparing runs
(compare, statistics, significance), history, and exports (CSV, pytest-benchmark JSON)."""
