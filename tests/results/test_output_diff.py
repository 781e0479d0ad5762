"""Where two runs' recorded greedy outputs first differ, and how compare and the exit rules say
it: float32 and 8-bit answers differ, and that is flagged even when every timing is unchanged."""

from __future__ import annotations

import dataclasses

import pytest

from harness.core.types import CaseResult, Metric, Unit
from harness.report.comparison_text import comparison_lines
from harness.results.compare import compare_runs
from harness.results.fail_on import DEFAULT, FailOn, findings
from harness.results.output_diff import first_difference
from tests.report.report_fixtures import case, make_run

# (before, after, the line or None)
TABLE = [
    (["Paris is the capital."], ["Paris is the capital."], None),
    (
        ["Paris is the capital.", "Rome"],
        ["Paris is the capital.", "Rome, of course"],
        "output 2 of 2 differs at character 4: '' -> ', of course'",
    ),
    (["Paris is"], ["Paris, the"], "output 1 of 1 differs at character 5: ' is' -> ', the'"),
    (["a", "b"], ["a"], "2 outputs -> 1 outputs"),
    (
        ["\x1b[31mred"],
        ["\x1b[32mgreen"],
        r"output 1 of 1 differs at character 3: '1mred' -> '2mgreen'",
    ),
    (None, ["x"], None),  # an older run kept no outputs: nothing to say
    ("not a list", ["x"], None),
]


def test_tool_call_answers_are_outputs_too() -> None:
    before = {"prompts": [{"id": "p1", "raw": '<tool_call>{"name": "get_weather"}'}]}
    after = {"prompts": [{"id": "p1", "raw": "I cannot check the weather."}]}
    assert first_difference(before, after) == (
        'output 1 of 1 differs at character 0: \'<tool_call>{"name": "get_weath\' -> '
        "'I cannot check the weather.'"
    )
    assert first_difference(before, before) is None
    assert first_difference({"prompts": [{"id": "p1"}]}, after) is None  # no raw kept


@pytest.mark.parametrize(("before", "after", "line"), TABLE)
def test_first_difference(before: object, after: object, line: str | None) -> None:
    old = {} if before is None else {"outputs": before}
    assert first_difference(old, {"outputs": after}) == line


def _greedy(outputs: list[str]) -> CaseResult:
    e2e = Metric("greedy_text.e2e_s", Unit.SECONDS, (1.0, 1.01, 0.99, 1.0, 1.02))
    result = case("m", "greedy_text", metrics=[e2e])
    return dataclasses.replace(result, artifacts={"outputs": outputs})


def test_compare_flags_changed_answers_even_when_timings_are_unchanged() -> None:
    base = make_run([_greedy(["Paris is the capital of France."])])
    cur = make_run([_greedy(["Paris, the capital of France."])])
    comparison = compare_runs(base, cur)
    (delta,) = comparison.cases
    assert delta.output_change == (
        "output 1 of 1 differs at character 5: ' is the capital of France.' -> "
        "', the capital of France.'"
    )
    lines = comparison_lines(comparison)
    assert any(
        line.startswith("  output changed: smoke::m::greedy_text: output 1 of 1") for line in lines
    )
    assert findings(cur, comparison, DEFAULT) == []  # a variant on purpose may answer apart
    (found,) = findings(cur, comparison, DEFAULT | {FailOn.OUTPUT_CHANGE})
    assert found.kind is FailOn.OUTPUT_CHANGE
    assert found.line.startswith("output-change: 1 cases answer differently from the baseline")
