"""Every comparison of two runs as one CSV file, ``changes.csv``: what the terminal and
compare.md only count (unchanged and inconclusive metrics) is listed here too.

A row per metric comparison, a row per case compared without metrics (a status change, a case
not comparable, new or removed) and a row per named check whose verdict changed; worst first
(the comparison section's verdict order, the largest change first). Numbers stay numbers (a
change of -53% is ``-0.53``); untrusted text (names, reasons) is one line as :func:`plain` shows
it, and a cell a spreadsheet would take for a formula gets a leading apostrophe.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator

from harness.core.types import Status
from harness.report.comparison import VERDICT_ORDER
from harness.report.escape import plain
from harness.report.shown_once import ShownOnce
from harness.results.compare import CaseDelta, Comparison, MetricDelta

COLUMNS = (
    "verdict",
    "level",  # metric, case or check
    "case_id",
    "model",
    "scenario",
    "point",
    "name",  # the metric or the check
    "unit",
    "baseline",
    "current",
    "change",  # (current - baseline) / |baseline|
    "ci_low",
    "ci_high",
    "n_baseline",
    "n_current",
    "p",
    "needs_n",
    "before",  # the case's (or check's) status in the baseline
    "after",
    "why",
)
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _text(value: object) -> str:
    text = plain(str(value))
    return "'" + text if text.startswith(_FORMULA_START) else text


def _texts() -> ShownOnce:
    """:func:`_text` once per distinct value (a model's name on 500 rows is one)."""
    return ShownOnce(_text)


def _number(value: float | int | None) -> str:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return repr(value) if isinstance(value, float) else str(value)


def _status(status: Status | None) -> str:
    return status.value if status is not None else ""


def _case_cells(case: CaseDelta, text: ShownOnce) -> dict[str, str]:
    return {
        "case_id": text(case.case_id),
        "model": text(case.model),
        "scenario": text(case.scenario),
        "point": text(" ".join(f"{k}={v}" for k, v in case.point.items())),
        "before": _status(case.baseline_status),
        "after": _status(case.current_status),
    }


def _metric_row(cells: dict[str, str], delta: MetricDelta, text: ShownOnce) -> dict[str, str]:
    ci = delta.ratio_ci
    return {
        **cells,
        "verdict": delta.verdict.value,
        "level": "metric",
        "name": text(delta.metric),
        "unit": delta.unit.value,
        "baseline": _number(delta.baseline_median),
        "current": _number(delta.current_median),
        "change": _number(delta.change),
        "ci_low": _number(ci[0] - 1) if ci else "",
        "ci_high": _number(ci[1] - 1) if ci else "",
        "n_baseline": str(len(delta.baseline_samples)),
        "n_current": str(len(delta.current_samples)),
        "p": _number(delta.p_value),
        "needs_n": _number(delta.needed_n),
        "why": text(delta.note),
    }


def _rows(comparison: Comparison) -> Iterator[tuple[tuple[int, float], dict[str, str]]]:
    text = _texts()
    for case in comparison.cases:
        cells = _case_cells(case, text)  # once for the case's metrics and checks
        for delta in case.metrics:
            size = abs(delta.change) if math.isfinite(delta.change) else 0.0
            yield (VERDICT_ORDER.index(delta.verdict), -size), _metric_row(cells, delta, text)
        if not case.metrics:
            row = {
                **cells,
                "verdict": case.verdict.value,
                "level": "case",
                "why": text("; ".join(case.reasons)),
            }
            yield (VERDICT_ORDER.index(case.verdict), 0.0), row
        for change in case.checks:
            row = {
                **cells,
                "verdict": change.verdict.value,
                "level": "check",
                "name": text(change.check),
                "before": change.before.value if change.before is not None else "",
                "after": change.after.value if change.after is not None else "",
                "why": text(change.reason or ""),
            }
            yield (VERDICT_ORDER.index(change.verdict), 0.0), row


def changes_csv(comparison: Comparison) -> str:
    """The CSV text: a header, then every comparison, worst first."""
    rows = [row for _, row in sorted(_rows(comparison), key=lambda pair: pair[0])]
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    writer.writerows([row.get(column, "") for column in COLUMNS] for row in rows)
    return out.getvalue()
