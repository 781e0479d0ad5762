"""The check records of a contract case, read through its typed artifacts: records by name
(malformed entries left out), each record's verdict (unknown ones None), the check names in
catalog order then the rest."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from report_fixtures import case

from harness.report.check_records import check_names, checks_by_name, verdict_of
from harness.scenarios.api_contracts.artifacts import ApiCheckRecord, ApiContractsArtifacts
from harness.scenarios.api_contracts.verdicts import Verdict
from harness.scenarios.template_contracts import CheckVerdict, TemplateCheckRecord


@pytest.mark.parametrize(
    ("checks", "names"),
    [
        ([{"name": "a", "verdict": "pass"}, {"name": "b"}], ["a", "b"]),
        ([{"name": 3}, "text", None, {"verdict": "pass"}, {"name": "a"}], ["a"]),
        ({"name": "a"}, []),  # not a list
        (None, []),
    ],
)
def test_checks_by_name(checks: Any, names: list[str]) -> None:
    result = replace(case("m", "api_contracts"), artifacts={"checks": checks})
    assert list(checks_by_name(ApiContractsArtifacts.of(result).checks)) == names


@pytest.mark.parametrize(
    ("entry", "verdicts", "expected"),
    [
        (ApiCheckRecord("a", "fail"), Verdict, Verdict.FAIL),
        (TemplateCheckRecord("a", "n/a"), CheckVerdict, CheckVerdict.NOT_APPLICABLE),
        (TemplateCheckRecord("a", "n/a"), Verdict, None),  # another scenario's word
        (ApiCheckRecord("a", None), Verdict, None),
        (TemplateCheckRecord("a"), CheckVerdict, None),
        (None, Verdict, None),
    ],
)
def test_verdict_of(entry: Any, verdicts: Any, expected: Any) -> None:
    assert verdict_of(entry, verdicts) is expected


def test_check_names_catalog_order_then_the_rest_sorted() -> None:
    per_case = [{"zeta": {}, "b": {}}, {"a": {}, "old": {}}]
    assert check_names(per_case, ("a", "b", "c")) == ["a", "b", "old", "zeta"]
    assert check_names([], ("a",)) == []
