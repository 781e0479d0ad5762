"""``compare`` of two nightlies of 3,000 cases: the terminal gets the counts and the worst
changes (a bounded number of lines), compare.md lists what changed and counts the rest, and
changes.csv holds every comparison. The runs are written by the project's record writer."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

import pytest
from gfm_facts import gfm_problems, tables_in
from report_fixtures import make_run

from harness.cli import main
from harness.core.types import CaseResult, Metric, RunRecord, Status, Unit
from harness.report.md_tables import CONTINUED, WIDTH
from harness.results.store import write_record

CASES = 3000
REGRESSED = range(0, 12)  # 5 samples a side, decode -53%
IMPROVED = range(12, 15)  # 5 a side, +50%
FAILING = range(15, 18)  # passed, then failed without metrics
BASE = (20.1, 20.3, 19.9, 20.2, 20.0)
SAME = (20.0, 20.2, 20.1, 19.95, 20.15)


def _case(i: int, samples: tuple[float, ...], status: Status = Status.PASSED) -> CaseResult:
    metrics = (Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, samples),)
    return CaseResult(
        f"nightly::m{i % 30}::throughput[pp{i}]",
        "nightly",
        f"m{i % 30}",
        "throughput",
        status,
        params={"prompt_tokens": i},
        point={"prompt_tokens": i},
        metrics=metrics if status is Status.PASSED else (),
        reason=None if status is Status.PASSED else "assertion failed",
    )


def _after(i: int) -> CaseResult:
    if i in REGRESSED:
        return _case(i, tuple(v * 0.47 for v in BASE))
    if i in IMPROVED:
        return _case(i, tuple(v * 1.5 for v in BASE))
    if i in FAILING:
        return _case(i, BASE, Status.FAILED)
    if i % 2:  # three samples a side cannot decide a -20% drop: inconclusive
        return _case(i, tuple(v * 0.8 for v in BASE[:3]))
    return _case(i, SAME)


def _before(i: int) -> CaseResult:
    return _case(i, BASE[:3] if i % 2 and i >= FAILING.stop else BASE)


def _write(tmp_path: Path, run_id: str, cases: list[CaseResult]) -> Path:
    run = make_run(cases)
    write_record(RunRecord(**{**run.__dict__, "run_id": run_id}), tmp_path / run_id)
    return tmp_path / run_id


@pytest.fixture(scope="module")
def nightlies(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    tmp_path = tmp_path_factory.mktemp("nightlies")
    base = _write(tmp_path, "base", [_before(i) for i in range(CASES)])
    return base, _write(tmp_path, "cur", [_after(i) for i in range(CASES)])


INCONCLUSIVE = len([i for i in range(FAILING.stop, CASES) if i % 2])
UNCHANGED = CASES - FAILING.stop - INCONCLUSIVE


def test_the_terminal_gets_counts_and_the_worst_changes_the_files_everything(
    nightlies: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, cur = nightlies
    out_dir = tmp_path / "out"
    assert main(["compare", str(base), str(cur), "--out", str(out_dir)]) == 1
    out, err = capsys.readouterr()
    lines = out.splitlines()
    assert lines[0] == (
        f"vs baseline base: 3 newly_failing, 12 regressed, 3 improved, "
        f"{INCONCLUSIVE} inconclusive, {UNCHANGED} unchanged"
    )
    assert len(lines) <= 15 and len(out) < 3000  # was a line per inconclusive case
    assert [line.split(":")[0] for line in lines[1:11]] == ["  newly_failing"] * 3 + [
        "  regressed"
    ] * 7
    assert lines[11] == (
        f"  ... and {5 + INCONCLUSIVE} more changed or undecided cases "
        f"(every one in {out_dir / 'changes.csv'})"
    )
    assert "policy: regression" in err

    rows = list(csv.DictReader(io.StringIO((out_dir / "changes.csv").read_text())))
    assert {r["case_id"] for r in rows} == {_case(i, BASE).case_id for i in range(CASES)}
    assert Counter(r["verdict"] for r in rows) == {
        "newly_failing": 3,
        "regressed": 12,
        "improved": 3,
        "inconclusive": INCONCLUSIVE,
        "unchanged": UNCHANGED,
    }
    assert rows[0]["verdict"] == "newly_failing" and rows[3]["change"].startswith("-0.5")

    markdown = (out_dir / "compare.md").read_text()
    assert gfm_problems(markdown) == []
    # status changes (3 rows), metric changes (15 rows) over two column groups to fit 120
    assert markdown.count(CONTINUED) == 1 and tables_in(markdown) == 3
    assert max(len(line) for line in markdown.splitlines()) <= WIDTH
    table_rows = [line for line in markdown.splitlines() if line.startswith("| ")]
    assert len(table_rows) == 3 + 3 + 15 * 2  # three header rows, then a row per change a group
    assert (
        f"Not listed here: **{INCONCLUSIVE}** metric comparison(s) inconclusive, "
        f"**{UNCHANGED}** unchanged"
    ) in markdown
    assert "Every comparison: changes.csv (beside this file)." in markdown
    assert len(markdown.splitlines()) < 100


@pytest.mark.parametrize(("show", "listed"), [("0", 0), ("3", 3)])
def test_show_sets_how_many_changes_the_terminal_lists(
    nightlies: tuple[Path, Path], capsys: pytest.CaptureFixture[str], show: str, listed: int
) -> None:
    base, cur = nightlies
    assert main(["compare", str(base), str(cur), "--show", show]) == 1
    lines = capsys.readouterr().out.splitlines()
    cases = [line for line in lines if ": nightly::" in line]
    assert len(cases) == listed
    more = [line for line in lines if line.startswith("  ... and ")]
    assert more == [
        f"  ... and {15 + INCONCLUSIVE - listed} more changed or undecided cases "
        "(compare BASELINE CURRENT --out DIR lists every one in DIR/changes.csv)"
    ]
