"""What both drivers do when a run ends: read the record back, compare it with the baseline,
render the reports and point ``latest`` at them.

The record is the truth and is complete before any of this runs; a report folder that cannot be
written costs the reports (one line in ``report_error``), never the measurements.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from harness.core.metrics import MetricSpec
from harness.core.types import RunRecord
from harness.report.comparison import with_comparison
from harness.report.contents import scenarios_in
from harness.report.publish import LATEST, ReportDirError, publish_reports
from harness.results.compare import Comparison, Thresholds, compare_runs
from harness.runner.active_run import ActiveRun


@dataclass(frozen=True)
class RunEnd:
    run: RunRecord
    comparison: Comparison | None = None
    report_html: Path | None = None  # None: not rendered (asked not to, or report_error)
    report_error: str | None = None  # one line: why the reports could not be written


def conclude(
    active: ActiveRun, *, render: bool = True, thresholds: Thresholds | None = None
) -> RunEnd:
    """End ``active``'s record and publish its reports (and comparison, with a baseline)."""

    run = active.finish()
    return conclude_record(
        run,
        active.run_dir,
        active.report_root,
        active.baseline,
        specs=active.specs,
        render=render,
        thresholds=thresholds,
    )


def conclude_record(
    run: RunRecord,
    run_dir: Path,
    report_root: Path,
    baseline: RunRecord | None,
    *,
    specs: Mapping[str, MetricSpec] | None = None,
    render: bool = True,
    thresholds: Thresholds | None = None,
) -> RunEnd:
    """Compare a written record (``run_dir/run.jsonl``) with ``baseline`` and publish its
    reports, ``report_root/latest`` pointing at them (pytest-xdist's parts joined end here)."""
    comparison = None
    if baseline is not None:
        comparison = compare_runs(baseline, run, specs=specs, thresholds=thresholds)
    if not render:
        return RunEnd(run, comparison)
    sections = (
        with_comparison(comparison, scenarios=scenarios_in(run)) if comparison is not None else None
    )
    try:
        html = publish_reports(run, run_dir, report_root / LATEST, sections)
    except ReportDirError as exc:
        return RunEnd(run, comparison, None, f"reports not written: {exc}")
    return RunEnd(run, comparison, html)
