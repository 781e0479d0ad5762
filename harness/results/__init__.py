"""Results: run records on disk (store, codec), reading them back from any bytes, comparing runs
(compare, statistics, significance), history (digests, change points, the site's index), and
exports (CSV, pytest-benchmark JSON)."""
