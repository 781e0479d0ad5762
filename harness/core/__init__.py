"""The base layer every other imports: the record's types and units, metric specs, the plug-in
registry, and the one-line text helpers (an exception as a line, the one escaper, YAML with
positions, the invalid-value error). It imports nothing else of the harness."""
