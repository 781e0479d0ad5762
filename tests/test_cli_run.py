"""``mlx-harness run``'s line per case: status, id, reason and the policy's warning, safe to
print to a terminal."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli.run import case_line
from harness.core.preflight_types import PolicyAction, PreflightRecord
from harness.core.types import CaseResult, Status

WARNED = PreflightRecord(
    backend="mlx_lm", action=PolicyAction.WARN, code="backend_mismatch", message="no vision"
)


def _result(preflight: PreflightRecord | None, reason: str | None = None) -> CaseResult:
    return CaseResult("s::m::t", "s", "m", "t", Status.PASSED, reason=reason, preflight=preflight)


@pytest.mark.parametrize(
    ("result", "line"),
    [
        (_result(None), "     passed  s::m::t"),
        (_result(WARNED), "     passed  s::m::t  [warn backend_mismatch: no vision]"),
        (
            _result(PreflightRecord(backend="mlx_lm", action=PolicyAction.ALLOW, code="ok")),
            "     passed  s::m::t",
        ),
        (
            _result(PreflightRecord(action=PolicyAction.WARN, code="x", message="\x1b[2Jgone\n")),
            "     passed  s::m::t  [warn x: \\x1b[2Jgone]",
        ),
    ],
    ids=["not_judged", "warned", "allowed", "escapes_shown"],
)
def test_case_line(result: CaseResult, line: str) -> None:
    assert case_line(result) == line


SLOW_SUITE = """\
schema_version: 1
defaults: {repeats: 2, warmup: 0, timeout_s: 30}
models:
  - {name: "[bold red]slow[/]", path: slow, backend: fake}
scenarios:
  - scenario: throughput
    params: {prompt_tokens: 8, gen_tokens: 8}
"""


@pytest.mark.parametrize(("progress", "shown"), [("auto", True), ("lines", True), ("off", False)])
def test_run_in_a_log_prints_still_running_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], progress: str, shown: bool
) -> None:
    from harness.backends.fake import write_fake_model
    from harness.cli import main

    write_fake_model(tmp_path / "slow", per_token_s=0.1)
    suite = tmp_path / "slow.suite.yaml"
    suite.write_text(SLOW_SUITE)
    args = ["run", str(suite), "--report-dir", str(tmp_path / "r"), "--progress", progress]
    assert main([*args, "--still-running-every", "0.2"]) == 0
    out = capsys.readouterr().out.splitlines()
    still = [line for line in out if line.startswith("still running: ")]
    assert bool(still) is shown  # auto: captured output is not a terminal, so lines
    if shown:
        assert still[0].startswith("still running: slow::[bold red]slow[/]::throughput (case 1/1")
        # once the worker has ended a run, the line says which (each generates 8 tokens)
        told = [line for line in still if "(case 1/1, repeat 1/2 · 8 tokens) " in line]
        assert told, still
    assert "     passed  slow::[bold red]slow[/]::throughput" in out
    assert all("\x1b[" not in line for line in out)  # no animation, no colour codes in a log


def test_no_report_records_the_run_and_renders_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--no-report`, as the pytest plugin has it: run.jsonl is written, no report."""
    from harness.backends.fake import write_fake_model
    from harness.cli import main

    write_fake_model(tmp_path / "slow", per_token_s=0.001)
    suite = tmp_path / "slow.suite.yaml"
    suite.write_text(SLOW_SUITE)
    reports = tmp_path / "r"
    assert (
        main(["run", str(suite), "--report-dir", str(reports), "--run-id", "x", "--no-report"]) == 0
    )
    assert (reports / "x" / "run.jsonl").is_file()
    assert not (reports / "x" / "report.html").exists()
    assert not any(line.startswith("report: ") for line in capsys.readouterr().out.splitlines())
