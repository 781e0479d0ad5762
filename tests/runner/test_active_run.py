"""Worker isolation: crashes, hangs and load failures become results; the run goes on."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import Case, Expectation, ExpectKind, ModelRef, ModelSource, Status
from harness.results.store import load_run
from harness.runner.active_run import ActiveRun


def _case(
    path: Path,
    scenario: str = "throughput",
    *,
    key: str | None = None,
    timeout_s: float = 20.0,
    expectation: Expectation | None = None,
) -> Case:
    key = key or path.name
    return Case(
        case_id=f"t::{key}::{scenario}",
        suite="t",
        suite_path="t.suite.yaml",
        model=ModelRef(key, ModelSource.PATH, str(path), "fake", (), str(path)),
        scenario=scenario,
        params={"prompt_tokens": 8, "gen_tokens": 4, "ignore_eos": True}
        if scenario == "throughput"
        else {"reloads": 0},
        repeats=2,
        warmup=1,
        timeout_s=timeout_s,
        expectation=expectation,
    )


@pytest.fixture()
def session(tmp_path: Path):  # type: ignore[no-untyped-def]
    s = ActiveRun(tmp_path / "reports", [], run_id="r1")
    yield s
    s.close_worker()


# (behaviour on generate, expected status, text the reason must contain)
MISBEHAVIOURS = [
    ("sigkill", Status.CRASHED, "killed by SIGKILL"),
    ("segfault", Status.CRASHED, "killed by SIGSEGV"),
    ("abort", Status.CRASHED, "killed by SIGABRT"),
    ("exit", Status.CRASHED, "exited with code 3"),
    ("memory_error", Status.CRASHED, "out of memory"),
    ("error", Status.ERRORED, "RuntimeError: fake backend: failure on purpose"),
    ("hang", Status.TIMED_OUT, "no reply within 2 s"),
]


@pytest.mark.parametrize(
    ("behaviour", "status", "reason"), MISBEHAVIOURS, ids=[m[0] for m in MISBEHAVIOURS]
)
def test_misbehaving_worker_is_a_result_and_the_run_goes_on(
    session: ActiveRun, tmp_path: Path, behaviour: str, status: Status, reason: str
) -> None:
    bad = write_fake_model(tmp_path / "bad", on_generate=behaviour)
    good = write_fake_model(tmp_path / "good", per_token_s=0.001)
    results = [
        session.run_case(_case(bad, "load")),
        session.run_case(_case(bad, timeout_s=2.0)),
        session.run_case(_case(bad, "load", key="bad-again")),  # same worker key: respawned
        session.run_case(_case(good)),
    ]
    assert [r.status for r in results] == [Status.PASSED, status, Status.PASSED, Status.PASSED]
    assert reason in (results[1].reason or "")
    assert "\n" not in (results[1].reason or "")
    run = session.finish()
    assert [r.status for r in run.results] == [r.status for r in results]
    assert run.results[3].metric("throughput.decode_tps") is not None


def test_load_failure_errors_every_case_of_that_model_once(
    session: ActiveRun, tmp_path: Path
) -> None:
    bad = write_fake_model(tmp_path / "bad", on_load="error")
    first = session.run_case(_case(bad))
    second = session.run_case(_case(bad, "load"))
    assert first.status is Status.ERRORED and "load failed" in (first.reason or "")
    assert second.status is Status.ERRORED


def test_crash_during_load(session: ActiveRun, tmp_path: Path) -> None:
    bad = write_fake_model(tmp_path / "bad", on_load="sigkill")
    result = session.run_case(_case(bad))
    assert result.status is Status.CRASHED
    assert "during load" in (result.reason or "") and "SIGKILL" in (result.reason or "")


def test_results_are_durable_before_the_run_finishes(session: ActiveRun, tmp_path: Path) -> None:
    good = write_fake_model(tmp_path / "good")
    session.run_case(_case(good))
    run = load_run(session.run_dir)  # read while the run is still open
    assert run.finished_at is None
    assert [r.status for r in run.results] == [Status.PASSED]


def test_expectations(session: ActiveRun, tmp_path: Path) -> None:
    bad = write_fake_model(tmp_path / "bad", on_generate="error")
    good = write_fake_model(tmp_path / "good")
    xfail = Expectation(ExpectKind.XFAIL, "known bug", "https://example.invalid/1")
    skip = Expectation(ExpectKind.SKIP, "not on this machine")
    assert session.run_case(_case(bad, expectation=xfail)).status is Status.XFAILED
    assert session.run_case(_case(good, expectation=xfail)).status is Status.XPASSED
    skipped = session.run_case(_case(good, expectation=skip))
    assert skipped.status is Status.SKIPPED and skipped.reason == "not on this machine"


def test_memory_views_are_labelled(session: ActiveRun, tmp_path: Path) -> None:
    good = write_fake_model(tmp_path / "good")
    result = session.run_case(_case(good))
    rss = result.metric("memory.process_peak_rss_bytes")
    assert rss is not None and rss.view is not None and rss.view.startswith("process peak RSS")
    assert rss.median > 1_000_000
