"""A suite's ``baseline:``: a path relative to the suite, or ``last`` (the newest earlier run of
the suite in the report folder); missing is one line, never a silent run without one."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from harness.core.types import SuiteInfo
from harness.results.named_baseline import NamedBaseline, NamedBaselineError, named_baseline
from harness.results.store import RUN_FILE, write_record
from tests.report.report_fixtures import case, make_run


def _suite(tmp_path: Path, baseline: str | None, name: str = "smoke") -> SuiteInfo:
    return SuiteInfo(
        name, str(tmp_path / "suites" / f"{name}.suite.yaml"), "f" * 64, baseline=baseline
    )


def _record(root: Path, run_id: str, suite: str = "smoke", age_s: float = 0.0) -> Path:
    run = dataclasses.replace(
        make_run([case("m", "load")]),
        run_id=run_id,
        suites=(SuiteInfo(suite, f"suites/{suite}.suite.yaml", "f" * 64),),
    )
    write_record(run, root / run_id)
    file = root / run_id / RUN_FILE
    stamp = 1_700_000_000 - age_s
    os.utime(file, (stamp, stamp))
    return root / run_id


def test_no_suite_names_one(tmp_path: Path) -> None:
    assert named_baseline([_suite(tmp_path, None)], tmp_path / "reports") == NamedBaseline(
        None, None
    )


def test_a_path_is_relative_to_the_suite(tmp_path: Path) -> None:
    _record(tmp_path / "suites" / "runs", "base")
    chosen = named_baseline([_suite(tmp_path, "runs/base")], tmp_path / "reports")
    assert chosen.run is not None and chosen.run.run_id == "base"
    assert chosen.line is not None and chosen.line.startswith("baseline: ")


def test_a_missing_path_is_one_line_naming_the_suite(tmp_path: Path) -> None:
    with pytest.raises(NamedBaselineError) as info:
        named_baseline([_suite(tmp_path, "runs/nowhere")], tmp_path / "reports")
    line = str(info.value)
    assert "smoke.suite.yaml: baseline: runs/nowhere: " in line and "\n" not in line


def test_suites_that_name_different_baselines_are_refused(tmp_path: Path) -> None:
    suites = [_suite(tmp_path, "runs/a"), _suite(tmp_path, "last", name="other")]
    with pytest.raises(NamedBaselineError, match="name different baselines"):
        named_baseline(suites, tmp_path / "reports")


def test_last_without_an_earlier_run_says_so(tmp_path: Path) -> None:
    chosen = named_baseline([_suite(tmp_path, "last")], tmp_path / "reports")
    assert chosen.run is None and chosen.line is not None and "none yet" in chosen.line


def test_last_is_the_newest_earlier_run_of_the_suite(tmp_path: Path) -> None:
    reports = tmp_path / "reports"
    _record(reports, "old", age_s=300)
    _record(reports, "newer", age_s=200)
    _record(reports, "other-suite", suite="perf", age_s=100)  # newer, another suite
    _record(reports, "current", age_s=0)  # this run itself (a --resume)
    (reports / "broken").mkdir()
    (reports / "broken" / RUN_FILE).write_text("not json\n")  # unreadable: passed over
    chosen = named_baseline([_suite(tmp_path, "last")], reports, current_run_id="current")
    assert chosen.run is not None and chosen.run.run_id == "newer"
    suite = tmp_path / "suites" / "smoke.suite.yaml"
    assert chosen.line == f"baseline: {reports / 'newer'} (the last earlier run; {suite})"
