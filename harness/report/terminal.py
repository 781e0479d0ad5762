"""A compact fixed-width table for the end of a pytest run: no colours, no escapes."""

from __future__ import annotations

from collections.abc import Sequence

from harness.metrics import MetricSpec
from harness.report.escape import plain
from harness.report.formatting import MISSING, format_value, params_label
from harness.report.header import count_statuses
from harness.report.table import stats
from harness.scenarios import http_throughput as http
from harness.scenarios.throughput import DECODE, PREFILL, TTFT
from harness.types import CaseResult, RunRecord, Unit

# (header, widest allowed, right-aligned)
COLUMNS: tuple[tuple[str, int, bool], ...] = (
    ("model", 32, False),
    ("scenario", 16, False),
    ("point", 24, False),
    ("status", 9, False),
    ("decode tok/s", 12, True),
    ("prefill tok/s", 13, True),
    ("TTFT", 10, True),
)


def _median(result: CaseResult, *specs: MetricSpec) -> str:
    """The median of the first of ``specs`` the case measured (in-process, then over HTTP)."""
    found = [(s, m) for s in specs if (m := result.metric(s.name)) is not None]
    if not found:
        return ""
    spec, metric = found[0]
    st = stats(metric)
    if st.n == 0:
        return MISSING
    if spec.unit is Unit.TOKENS_PER_SECOND:
        return f"{st.median:.1f}"
    return format_value(st.median, spec.unit)


def _row(result: CaseResult) -> tuple[str, ...]:
    return (
        result.model,
        result.scenario,
        params_label(result.point, result.params),
        result.status.value,
        _median(result, DECODE, http.DECODE),
        _median(result, PREFILL, http.PREFILL),
        _median(result, TTFT, http.TTFT),
    )


def _layout(rows: Sequence[tuple[str, ...]]) -> list[str]:
    widths = [
        min(limit, max(len(header), *(len(row[i]) for row in rows)))
        for i, (header, limit, _) in enumerate(COLUMNS)
    ]
    lines = []
    for row in rows:
        cells = []
        for text, width, (_, _, right) in zip(row, widths, COLUMNS, strict=True):
            text = plain(text, width)
            cells.append(text.rjust(width) if right else text.ljust(width))
        lines.append("  ".join(cells).rstrip())
    return lines


def status_line(run: RunRecord) -> str:
    counts = ", ".join(f"{c.count} {c.status}" for c in count_statuses(run))
    line = f"{len(run.results)} cases: {counts or 'none'}"
    if run.finished_at is None:
        line += " (INCOMPLETE RUN: no finish record)"
    return line


def terminal_summary(run: RunRecord) -> list[str]:
    """Lines to print at the end of a run: one per case, then the status counts."""
    header = tuple(name for name, _, _ in COLUMNS)
    rows = [_row(r) for r in run.results]
    table = _layout([header, *rows])
    widest = max(len(line) for line in table)
    return [
        f"mlx-harness run {plain(run.run_id)}",
        table[0],
        "-" * widest,
        *table[1:],
        status_line(run),
    ]
