"""``api_contracts`` run for real (the runner, a planted server per run) and compared check by
check: a clean run, a run where one planted bug fails one check, and a run where another bug
fails another. compare and the pin-set matrix flag exactly the check that changed, also
between the two planted runs, where the case failed both times."""

from __future__ import annotations

import json
from contextlib import ExitStack
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.check_types import CheckStatus
from harness.core.types import Status
from harness.results.store import load_run
from harness.scenarios.api_contracts.catalog import DEFAULT_CHECKS
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant

RUNS = {"clean": None, "topk": Plant.TOP_K_IGNORED, "seed": Plant.SEED_IGNORED}
CASE = "served::srv::api_contracts"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """One real run per server, the same suite (so the same case id) each time."""
    root = tmp_path_factory.mktemp("changes")
    folders = {}
    with ExitStack() as stack:
        urls = {name: stack.enter_context(planted_server(plant)) for name, plant in RUNS.items()}
        for name, url in urls.items():
            suite = root / "served.suite.yaml"
            suite.write_text(
                "schema_version: 1\nname: served\n"
                f"models:\n  - {{name: srv, url: '{url}'}}\n"
                "scenarios:\n  - scenario: api_contracts\n"
                "    params: {max_tokens: 16, long_max_tokens: 48, settle_s: 0.2}\n"
            )
            main(["run", str(suite), "--report-dir", str(root / "reports"), "--run-id", name])
            folders[name] = root / "reports" / name
    return folders


def test_each_run_records_every_checks_own_verdict(runs: dict[str, Path]) -> None:
    line = next(
        json.loads(text)
        for text in (runs["topk"] / "run.jsonl").read_text().splitlines()
        if '"event": "case"' in text
    )
    assert {c["name"]: c["status"] for c in line["result"]["checks"]}["top_k"] == "fail"
    for name, failing in (("clean", set()), ("topk", {"top_k"}), ("seed", {"seed"})):
        (result,) = load_run(runs[name]).results
        assert [c.name for c in result.checks] == list(DEFAULT_CHECKS)
        assert {c.name for c in result.checks if c.status is not CheckStatus.PASS} == failing
        assert result.status is (Status.FAILED if failing else Status.PASSED)


def _compare(
    runs: dict[str, Path], before: str, after: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, list[str]]:
    """The exit status, compare.md, and the terminal's lines (stdout, then stderr)."""
    out_dir = runs[after].parent.parent / f"compared-{before}-{after}"
    status = main(["compare", str(runs[before]), str(runs[after]), "--out", str(out_dir)])
    out, err = capsys.readouterr()
    return status, (out_dir / "compare.md").read_text(), [*out.splitlines(), *err.splitlines()]


def test_compare_flags_exactly_the_planted_check(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, lines = _compare(runs, "clean", "topk", capsys)
    assert status == 1
    (line,) = [ln for ln in lines if ln.startswith("  check ")]
    assert line.startswith(f"  check newly_failing: {CASE}: top_k: pass -> FAIL (")
    assert "### Check changes" in out
    rows = [r for r in out.splitlines() if r.startswith("| 🔴 newly failing | srv |")]
    assert len(rows) == 2  # the case's status, and its one check
    assert "| top_k | pass | FAIL |" in rows[1]


def test_compare_sees_a_new_check_failure_where_the_case_failed_both_times(
    runs: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    status, _, lines = _compare(runs, "topk", "seed", capsys)
    assert status == 1  # new-failure: the seed check, though the case failed before too
    assert [ln.split(": ")[0:3] for ln in lines if ln.startswith("  check ")] == [
        ["  check newly_failing", CASE, "seed"],
        ["  check fixed", CASE, "top_k"],
    ]
    assert any(ln.startswith("policy: new-failure: 1 checks newly failing") for ln in lines)


def test_the_matrix_has_a_row_for_each_changed_check_only(
    runs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "matrix"
    folders = [str(runs[name]) for name in ("clean", "topk", "seed")]
    assert main(["pin-matrix", *folders, "--out", str(out), "--fail-on-regression"]) == 1
    summary = capsys.readouterr().out.splitlines()
    assert summary[0].startswith("clean → topk: 1 newly failing (of 1 cases); checks: 1 newly")
    assert summary[1].startswith(
        "topk → seed: 1 unchanged (of 1 cases); checks: 1 newly failing, 1 fixed"
    )
    md = (out / "matrix.md").read_text()
    checks = md.split("## Checks that change", 1)[1]
    rows = [r for r in checks.splitlines() if r.startswith("| srv |")]
    # each cell without its note: model, scenario, point, check, clean, →, topk, →, seed
    cells = sorted([c.split("<br>")[0].strip() for c in r.strip(" |").split(" | ")] for r in rows)
    assert cells == [  # of 19 checks, the two that moved
        ["srv", "api_contracts", "—", "seed", "pass", "—", "pass", "🔴 newly failing", "FAIL"],
        ["srv", "api_contracts", "—", "top_k", "pass", "🔴 newly failing", "FAIL", "🟢 fixed",
         "pass"],
    ]  # fmt: skip
