"""Each named check of a case judged on its own between two runs, and the records that carry
the verdicts: new ones in ``CaseResult.checks``, older ones only in the ``checks`` artifact."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import CaseResult, Status, Verdict
from harness.results.check_changes import change_verdict, check_changes
from harness.results.codec import DecodeError, checks_from_json, decode_event, to_json
from harness.results.legacy_checks import checks_from_artifact
from harness.results.migrations import migrated_event
from harness.results.store import SCHEMA_VERSION, load_run, write_record
from tests.results.check_cases import contract_case, contract_run

P, W, F = CheckStatus.PASS, CheckStatus.WARN, CheckStatus.FAIL
NA, UJ = CheckStatus.NOT_APPLICABLE, CheckStatus.UNJUDGED


@pytest.mark.parametrize(
    ("before", "after", "verdict"),
    [
        (P, P, None),
        (F, F, None),
        (NA, NA, None),
        (P, F, Verdict.NEWLY_FAILING),
        (W, F, Verdict.NEWLY_FAILING),
        (NA, F, Verdict.NEWLY_FAILING),  # it applies now, and fails
        (UJ, F, Verdict.NEWLY_FAILING),
        (F, P, Verdict.FIXED),
        (F, W, Verdict.FIXED),
        (F, NA, Verdict.INCONCLUSIVE),  # not judged now: not known to be fixed
        (F, UJ, Verdict.INCONCLUSIVE),
        (P, W, Verdict.REGRESSED),
        (W, P, Verdict.IMPROVED),
        (P, UJ, Verdict.INCONCLUSIVE),
        (P, NA, Verdict.INCONCLUSIVE),
        (NA, P, Verdict.INCONCLUSIVE),
        (None, P, Verdict.NEW),
        (None, F, Verdict.NEW),
        (P, None, Verdict.REMOVED),
    ],
)
def test_a_check_move_and_its_verdict(
    before: CheckStatus | None, after: CheckStatus | None, verdict: Verdict | None
) -> None:
    assert change_verdict(before, after) is verdict


@pytest.mark.parametrize(
    ("before", "after", "expected"),
    [
        ("a=pass b=pass", "a=pass b=pass", []),
        # the case failed both times (c): b's new failure still shows
        ("a=pass b=pass c=fail", "a=pass b=fail c=fail", [("b", Verdict.NEWLY_FAILING)]),
        (
            "a=fail b=pass",
            "a=pass b=fail",
            [("b", Verdict.NEWLY_FAILING), ("a", Verdict.FIXED)],
        ),
        ("a=pass b=pass", "a=pass", [("b", Verdict.REMOVED)]),
        ("a=pass", "a=pass z=fail", [("z", Verdict.NEW)]),
        ("a=pass b=pass", "a=unjudged b=pass", [("a", Verdict.INCONCLUSIVE)]),
    ],
    ids=["same", "hidden-by-case", "swap", "removed", "new", "unjudged"],
)
def test_changed_checks_worst_first(
    before: str, after: str, expected: list[tuple[str, Verdict]]
) -> None:
    found = check_changes(contract_case(before), contract_case(after))
    assert [(c.check, c.verdict) for c in found] == expected


def test_a_change_names_both_verdicts_and_the_telling_reason() -> None:
    (fails,) = check_changes(contract_case("a=pass"), contract_case("a=fail"))
    assert fails.line == "a: pass -> FAIL (a was fail)"
    (fixed,) = check_changes(contract_case("a=fail"), contract_case("a=pass"))
    assert fixed.line == "a: FAIL -> pass (a was fail)"  # what failed, not "it passes"


@pytest.mark.parametrize("status", [Status.CRASHED, Status.SKIPPED, Status.ERRORED])
def test_a_side_without_checks_leaves_it_to_the_status(status: Status) -> None:
    crashed = dataclasses.replace(contract_case("a=pass"), status=status, checks=())
    assert check_changes(contract_case("a=pass b=fail"), crashed) == ()
    assert check_changes(crashed, contract_case("a=pass b=fail")) == ()


# what earlier versions wrote: api_contracts' and template_contracts' artifact entries
API_ENTRIES = [
    {"name": "seed", "verdict": "pass", "reason": "same text", "seconds": 0.1, "evidence": []},
    {"name": "top_k", "verdict": "fail", "reason": "top_k=1 gave\n3 texts", "evidence": []},
    {"name": "tools", "verdict": "not_applicable", "reason": "no tools"},
    {"name": "late", "verdict": "unjudged", "reason": "time ran out"},
]
TEMPLATE_ENTRIES = [
    {"name": "double_bos", "verdict": "warn", "outcome": "served", "evidence": "<s><s>hi"},
    {"name": "alternation", "verdict": "n/a", "outcome": "not_enforced", "evidence": ""},
]


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (
            API_ENTRIES,
            [
                ("seed", P, "same text"),
                ("top_k", F, "top_k=1 gave 3 texts"),
                ("tools", NA, "no tools"),
                ("late", UJ, "time ran out"),
            ],
        ),
        (TEMPLATE_ENTRIES, [("double_bos", W, "served"), ("alternation", NA, "not_enforced")]),
        ("not a list", []),
        ([{"verdict": "pass"}, {"name": "x", "verdict": "maybe"}, "junk", {"name": 3}], []),
        ([{"name": "a", "verdict": "pass"}, {"name": "a", "verdict": "fail"}], [("a", P, "")]),
    ],
    ids=["api_contracts", "template_contracts", "no-list", "unreadable-left-out", "first-kept"],
)
def test_checks_read_from_an_older_records_artifact(
    entries: object, expected: list[tuple[str, CheckStatus, str]]
) -> None:
    found = checks_from_artifact({"checks": entries})
    assert [(c.name, c.status, c.reason) for c in found] == expected


def _old_line(result: CaseResult) -> str:
    """A case line as a harness before ``CaseResult.checks`` wrote it (no ``checks`` key)."""
    data = to_json(result)
    assert "checks" not in data  # left out while empty: older readers forbid unknown keys
    return json.dumps({"event": "case", "result": data})


def test_an_older_case_line_gets_its_checks_from_the_artifact() -> None:
    old = CaseResult("s::m::api_contracts", "s", "m", "api_contracts", Status.FAILED,
                     artifacts={"checks": API_ENTRIES})  # fmt: skip
    line = migrated_event(json.loads(_old_line(old)), 1)  # as a version-1 record loads
    read = decode_event("case", json.dumps(line))["result"]
    assert [c.name for c in read.checks] == ["seed", "top_k", "tools", "late"]
    assert read.check("top_k") == CheckVerdict("top_k", F, "top_k=1 gave 3 texts")
    assert read.check("missing") is None


def test_a_new_case_line_keeps_its_own_checks(tmp_path: Path) -> None:
    case = dataclasses.replace(
        contract_case("seed=pass top_k=fail"),
        artifacts={"checks": [{"name": "other", "verdict": "pass"}]},  # never read over them
    )
    data = to_json(case)
    assert data["checks"][1] == {"name": "top_k", "status": "fail", "reason": "top_k was fail"}
    read = write_record(contract_run("a", [case]), tmp_path / "r").results[0]
    assert read.checks == case.checks


def test_an_older_record_compares_check_by_check_with_a_new_one(tmp_path: Path) -> None:
    from harness.results.compare import compare_runs

    old = CaseResult("s::srv::api_contracts", "s", "srv", "api_contracts", Status.FAILED,
                     artifacts={"checks": API_ENTRIES})  # fmt: skip
    write_record(contract_run("old", [old]), tmp_path / "old")
    record = tmp_path / "old" / "run.jsonl"  # as a version-1 harness wrote it
    today = f'"schema_version": {SCHEMA_VERSION}'
    record.write_text(record.read_text().replace(today, '"schema_version": 1', 1))
    baseline = load_run(record)
    new = contract_case("seed=fail top_k=fail tools=n.a. late=unjudged")
    (case,) = compare_runs(baseline, contract_run("new", [new])).cases
    assert case.verdict is Verdict.UNCHANGED  # failed both times
    assert [(c.check, c.verdict) for c in case.checks] == [("seed", Verdict.NEWLY_FAILING)]


@pytest.mark.parametrize(
    ("data", "error"),
    [
        ([{"name": "a", "status": "maybe", "reason": ""}], "checks[0].status"),
        ([{"name": 3, "status": "pass"}], "checks[0].name"),
        ({"name": "a"}, "checks"),
    ],
)
def test_a_workers_checks_are_checked_as_record_lines_are(data: object, error: str) -> None:
    with pytest.raises(DecodeError, match=error.replace("[", r"\[").replace("]", r"\]")):
        checks_from_json(data)


def test_a_workers_checks_round_trip() -> None:
    sent = contract_case("a=pass b=fail c=unjudged").checks
    assert checks_from_json(json.loads(json.dumps(to_json(sent)))) == sent
    assert checks_from_json(None) == () and checks_from_json([]) == ()


def test_template_contracts_records_each_checks_verdict() -> None:
    from harness.scenarios.template_contracts import CheckVerdict as TemplateVerdict
    from harness.scenarios.template_contracts import ContractCheck, verdicts

    checks = [
        ContractCheck("double_bos", TemplateVerdict.WARN, "served", "<s><s>"),
        ContractCheck("alternation", TemplateVerdict.NOT_APPLICABLE, "not_enforced", ""),
        ContractCheck("system_role", TemplateVerdict.FAIL, "dropped", "text"),
    ]
    assert [(c.name, c.status, c.reason) for c in verdicts(checks)] == [
        ("double_bos", W, "served"),
        ("alternation", NA, "not_enforced"),
        ("system_role", F, "dropped"),
    ]


def test_api_contracts_records_each_checks_verdict() -> None:
    from harness.scenarios.api_contracts import summary
    from harness.scenarios.api_contracts.verdicts import CheckResult
    from harness.scenarios.api_contracts.verdicts import Verdict as ApiVerdict

    results = (
        CheckResult("seed", ApiVerdict.PASS, "same"),
        CheckResult("top_k", ApiVerdict.FAIL, "differs"),
        CheckResult("tools", ApiVerdict.NOT_APPLICABLE, "none"),
        CheckResult("late", ApiVerdict.UNJUDGED, "not judged: time"),
    )
    output = summary(results)
    assert [(c.name, c.status) for c in output.checks] == [
        ("seed", P), ("top_k", F), ("tools", NA), ("late", UJ),
    ]  # fmt: skip
    assert checks_from_artifact(output.artifacts) == output.checks  # the two agree
