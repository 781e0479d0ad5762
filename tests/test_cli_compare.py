"""``compare`` and ``report --baseline`` on real (fake-backend) runs: inconclusive is said."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.core.types import Status
from harness.results.store import load_run


def _run(tmp_path: Path, run_id: str, per_token_s: float, repeats: int) -> Path:
    model = write_fake_model(
        tmp_path / run_id / "m", per_token_s=per_token_s, prefill_per_token_s=0.001
    )
    suite = tmp_path / run_id / "s.suite.yaml"
    suite.write_text(
        f"schema_version: 1\ndefaults: {{repeats: {repeats}}}\nmodels:\n"
        f"  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 12, prompt_tokens: 8}\n"
    )
    reports = tmp_path / "reports"
    assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", run_id]) == 0
    return reports / run_id


def test_three_samples_a_side_say_inconclusive_not_unchanged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _run(tmp_path, "base", 0.002, repeats=3)
    slow = _run(tmp_path, "slow", 0.1, repeats=3)  # decode 50x slower: no load closes that
    capsys.readouterr()

    out_dir = tmp_path / "compared"
    # nothing can be called a regression
    assert main(["compare", str(base), str(slow), "--out", str(out_dir)]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0] == "vs baseline base: 1 inconclusive"
    assert "throughput.decode_tps -" in out and "inconclusive (needs n >= 4 a side)" in out
    assert "wrote " in err
    markdown = (out_dir / "compare.md").read_text()
    assert "❔ inconclusive: **1**" in markdown and "needs n >= 4 a side" in markdown
    assert (
        "inconclusive,metric,s::m::throughput,m,throughput,,throughput.decode_tps,tok/s,"
        in (out_dir / "changes.csv").read_text()
    )

    assert main(["report", str(slow), "--baseline", str(base)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0] == "vs baseline base: 1 inconclusive"
    report = (slow / "report.md").read_text()
    assert "## Comparison with baseline" in report and "needs n >= 4 a side" in report

    assert main(["report", str(slow)]) == 0  # without --baseline: no comparison section
    assert "## Comparison with baseline" not in (slow / "report.md").read_text()


def test_a_bad_baseline_for_report_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = _run(tmp_path, "r", 0.001, repeats=1)
    capsys.readouterr()
    assert main(["report", str(run), "--baseline", str(tmp_path / "nowhere")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlx-harness: error: --baseline: ") and err.count("\n") == 1


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1", "five"])
def test_compare_refuses_an_impossible_alpha(
    alpha: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(["compare", "a", "b", "--alpha", alpha])
    assert exit_info.value.code == 2
    assert "is not a level between 0 and 1" in capsys.readouterr().err


def test_a_relative_gate_without_baseline_is_shown_not_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_fake_model(tmp_path / "m", per_token_s=0.001)
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(
        f"schema_version: 1\ndefaults: {{repeats: 4}}\nmodels:\n"
        f"  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 4, prompt_tokens: 8}\n"
        'gates:\n  throughput.decode_tps: "-5%"\n'
    )
    reports = tmp_path / "reports"
    # a relative gate without a baseline waits for one: this run can be the baseline
    assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"]) == 0
    assert "note: 1 relative gates not judged" in capsys.readouterr().out
    (result,) = load_run(reports / "r").results
    (gate,) = result.gates
    assert result.status is Status.PASSED and gate.passed is None
    assert "throughput.decode_tps -5%: not evaluated: no baseline" in gate.message
    report = (reports / "r" / "report.md").read_text()
    assert "### Gates" in report and "not evaluated: no baseline" in report
