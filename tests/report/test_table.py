"""The case x metric table: a column per metric a case has, one unit per column, and the
stand-ins a section shows in place of a metric (the performance section's "ceiling invalid")."""

from __future__ import annotations

import pytest
from report_fixtures import case, metric

from harness.core.types import CaseResult, Unit
from harness.report.table import Cell, MetricColumn, StandIn, case_metric_table

SPEED = MetricColumn("decode", ("t.decode_tps",), "generated tokens per second")
SHARE = MetricColumn("share", ("t.share",), "of the ceiling", Unit.RATIO)


def _stand_in(result: CaseResult, column: MetricColumn) -> StandIn | None:
    """ "no" in the share column of the model named "marked", counted as 3 samples."""
    if result.model == "marked" and column is SHARE:
        return StandIn(Cell("no", title="why"), 3)
    return None


def _case(model: str, *names: str) -> CaseResult:
    units = {"t.decode_tps": Unit.TOKENS_PER_SECOND, "t.share": Unit.RATIO}
    return case(model, "t", metrics=[metric(n, units[n], 1.0, 2.0) for n in names])


@pytest.mark.parametrize(
    ("results", "labels", "cells"),
    [
        ([_case("plain", "t.decode_tps")], ["decode (tok/s)", "n"], [["1.5 ± 0.7", "2"]]),
        (  # a column of stand-ins alone: there, in its column's unit, n counting them
            [_case("marked", "t.decode_tps")],
            ["decode (tok/s)", "share (x)", "n"],
            [["1.5 ± 0.7", "no", "2–3"]],
        ),
        (  # a stand-in replaces a metric the case has; n counts the metric
            [_case("marked", "t.share")],
            ["share (x)", "n"],
            [["no", "2"]],
        ),
        (  # a case with nothing but a stand-in is a row
            [_case("marked"), _case("plain", "t.share")],
            ["share (x)", "n"],
            [["no", "3"], ["1.50 ± 0.71", "2"]],
        ),
    ],
    ids=["no-stand-in", "stand-in-column", "stand-in-over-metric", "stand-in-row"],
)
def test_stand_ins_take_a_metric_s_place(
    results: list[CaseResult], labels: list[str], cells: list[list[str]]
) -> None:
    table = case_metric_table(results, (SPEED, SHARE), stand_in=_stand_in)
    skip = 4  # model, scenario, params, status
    assert [c.label for c in table.columns][skip:] == labels
    assert [[c.text for c in row][skip:] for row in table.rows] == cells
