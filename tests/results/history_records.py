"""Whole run records under some folders, for the tests that check the history against them.

The harness reads a history as digests (:func:`harness.results.history.read_digests`); reading
every record whole is what the digests must agree with, so it lives here, beside the tests.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path

from harness.core.types import RunRecord
from harness.results.history import record_files
from harness.results.store import RunFileError, RunReadWarning, load_run


def find_runs(paths: Iterable[Path]) -> list[RunRecord]:
    """Every readable run record under ``paths`` (files or directories, searched recursively).

    A record that cannot be read is skipped with a :class:`RunReadWarning` naming it and why;
    the same run found twice (the same run id and start time) counts once; runs that reuse an
    id (a nightly job's fixed ``--run-id``, each night in its own folder) all count.
    """
    runs: dict[tuple[str, str], RunRecord] = {}
    for path in paths:
        for file in record_files(path):
            try:
                run = load_run(file)
            except RunFileError as exc:
                warnings.warn(f"{exc}; skipped this record", RunReadWarning, stacklevel=2)
                continue
            runs.setdefault((run.run_id, str(run.started_at)), run)
    return sorted(runs.values(), key=lambda r: r.started_at)
