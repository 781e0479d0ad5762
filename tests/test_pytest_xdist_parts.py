"""pytest-xdist: correctness-only suites over parallel workers, one record; timing refuses."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.metrics import MetricSpec
from harness.core.types import Case, Expectation, ExpectKind, ModelRef, ModelSource, Status, Unit
from harness.pytest_plugin.xdist_parts import PARTS, timing_refusal
from harness.results.store import RUN_FILE, load_run
from harness.scenarios import SCENARIOS

pytest.importorskip("xdist")

MODELS = ("alpha", "beta", "gamma")

CORRECTNESS_SUITE = """\
schema_version: 1
defaults: {repeats: 1, warmup: 0, timeout_s: 60}
models:
  - {name: alpha, path: models/alpha, backend: fake}
  - {name: beta, path: models/beta, backend: fake}
  - {name: gamma, path: models/gamma, backend: fake}
scenarios:
  - {scenario: toolcalls_corpus, id: corpus}
  - {scenario: toolcalls_corpus, id: corpus_again}
"""

TIMING_SUITE = """\
schema_version: 1
defaults: {repeats: 1, warmup: 0, timeout_s: 60}
models:
  - {name: alpha, path: models/alpha, backend: fake}
scenarios:
  - scenario: toolcalls_corpus
  - scenario: throughput
    params: {prompt_tokens: 8, gen_tokens: 2}
"""


@pytest.fixture()
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in MODELS:
        write_fake_model(pytester.path / "models" / name, per_token_s=0.001)
    write_fake_model(pytester.path / "models" / "broken", on_load="error")
    return pytester


def _parts(root: Path) -> dict[str, list[str]]:
    """Each worker's part: the case ids it recorded."""
    run_dir = (root / "reports" / "latest").resolve()
    return {
        file.parent.name: [r.case_id for r in load_run(file).results]
        for file in sorted((run_dir / PARTS).glob(f"*/{RUN_FILE}"))
    }


def test_correctness_suite_runs_over_two_workers_into_one_record(project: pytest.Pytester) -> None:
    project.makefile(".suite.yaml", check=CORRECTNESS_SUITE)
    result = project.runpytest("-n", "2", "-v")
    assert result.ret == 0, result.stdout.str()
    result.assert_outcomes(passed=6)
    result.stdout.fnmatch_lines(["*[[]gw*PASSED check.suite.yaml::alpha::*", "6 cases: 6 passed"])
    run = load_run(project.path / "reports" / "latest")
    ids = [r.case_id for r in run.results]
    assert sorted(ids) == sorted(
        f"check::{m}::{i}" for m in MODELS for i in ("corpus", "corpus_again")
    )
    assert len(set(ids)) == 6 and run.finished_at is not None and run.parts == ()
    parts = _parts(project.path)
    assert sorted(c for cases in parts.values() for c in cases) == sorted(ids)  # each once
    for model in MODELS:  # one worker ran all of a model's cases: one load
        holders = [name for name, cases in parts.items() if any(f"::{model}::" in c for c in cases)]
        assert len(holders) == 1, (model, parts)
    assert (project.path / "reports" / "latest" / "report.html").is_file()


def test_a_stopped_run_records_every_planned_case_once(project: pytest.Pytester) -> None:
    project.makefile(
        ".suite.yaml",
        check=CORRECTNESS_SUITE.replace("models/beta", "models/broken"),
    )
    result = project.runpytest("-n", "2", "-x")
    outcomes = result.parseoutcomes()
    run = load_run(project.path / "reports" / "latest")
    assert len({r.case_id for r in run.results}) == len(run.results) == 6
    statuses = Counter(r.status for r in run.results)
    assert statuses[Status.PASSED] == outcomes.get("passed", 0)  # pytest and the record agree
    assert statuses[Status.ERRORED] == outcomes.get("failed", 0) >= 1
    assert statuses[Status.INTERRUPTED] == 6 - sum(outcomes.get(k, 0) for k in ("passed", "failed"))
    assert all(
        r.reason and r.reason.startswith("not run: ")
        for r in run.results
        if r.status is Status.INTERRUPTED
    )


def test_a_timing_scenario_refuses_parallel_workers(project: pytest.Pytester) -> None:
    project.makefile(".suite.yaml", timed=TIMING_SUITE)
    result = project.runpytest("-n", "2")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    errors = [line for line in result.stderr.lines if line.strip()]
    assert errors == [
        "ERROR: timed.suite.yaml: throughput measures time and cannot share this machine with "
        "parallel workers (-n 2); run it without -n, or select correctness-only cases (-k / -m)"
    ]
    assert "Traceback" not in result.stdout.str()
    assert not list((project.path / "reports").glob(f"*/{RUN_FILE}"))  # nothing recorded
    # the way out it names (correctness-only cases over workers) is test_timing_refusal's first
    # row, and test_correctness_suite_runs_over_two_workers_into_one_record runs one whole


def _case(scenario: str, expectation: Expectation | None = None) -> Case:
    model = ModelRef(key="m", source=ModelSource.PATH, location="m", backend="fake")
    return Case(
        f"s::m::{scenario}", "s", "s.suite.yaml", model, scenario, {}, expectation=expectation
    )


SKIP = Expectation(ExpectKind.SKIP, "known broken")


@pytest.mark.parametrize(
    ("cases", "workers", "expected"),
    [
        ([("a.suite.yaml", _case("tool_calls"))], 4, None),
        ([("a.suite.yaml", _case("throughput"))], 1, None),  # one worker: nothing shares
        ([("a.suite.yaml", _case("throughput", SKIP))], 2, None),  # the ledger skips it
        (
            [("a.suite.yaml", _case("load")), ("a.suite.yaml", _case("throughput"))],
            3,
            "a.suite.yaml: load, throughput measure time and cannot share this machine with "
            "parallel workers (-n 3); run it without -n, or select correctness-only cases "
            "(-k / -m)",
        ),
        (
            [("a.suite.yaml", _case("greedy_text")), ("b.suite.yaml", _case("serving"))],
            2,
            "a.suite.yaml: greedy_text measures time and cannot share this machine with "
            "parallel workers (-n 2) (and 1 more suite file); run it without -n, or select "
            "correctness-only cases (-k / -m)",
        ),
    ],
)
def test_timing_refusal(cases: list[tuple[str, Case]], workers: int, expected: str | None) -> None:
    assert timing_refusal(cases, workers) == expected


SPEED_UNITS = {Unit.SECONDS, Unit.TOKENS_PER_SECOND, Unit.REQUESTS_PER_SECOND}


def _speed_metrics(specs: tuple[MetricSpec, ...]) -> list[str]:
    return [spec.name for spec in specs if spec.unit in SPEED_UNITS]


@pytest.mark.parametrize("name", SCENARIOS.names())
def test_measures_time_matches_the_metrics(name: str) -> None:
    """A scenario recording a time or a rate declares it; one declaring correctness only
    records none (a new scenario cannot slip into parallel runs with a timing)."""
    scenario = SCENARIOS.get(name)
    speed = _speed_metrics(scenario.metrics)
    assert getattr(scenario, "measures_time", True) == bool(speed), (name, speed)


def test_a_policy_finding_over_workers_is_a_failed_test_in_junit(project: pytest.Pytester) -> None:
    skips = "".join(f"  - {{model: {m}, status: skip, reason: 'not today'}}\n" for m in MODELS)
    project.makefile(".suite.yaml", check=CORRECTNESS_SUITE + "expect:\n" + skips)
    result = project.runpytest("-n", "2", "--junitxml", "junit.xml")
    assert result.ret == 1, result.stdout.str()
    result.assert_outcomes(skipped=6, failed=1)
    junit = (project.path / "junit.xml").read_text()
    assert '<testcase classname="mlx-harness" name="policy"' in junit
    assert 'failure message="policy: nothing-ran: all 6 cases were skipped' in junit
