"""The exit rules as a test result: a finding (or reports that could not be written) is one
failed test ``mlx-harness::policy``, so pytest's summary line (``1 passed, 1 failed``), its
short summary and the ``--junitxml`` file all carry what the exit status says.

The report goes through pytest's own ``pytest_runtest_logreport`` hook: the terminal reporter
counts it, junitxml writes it as a ``<testcase>`` with a ``<failure>``, ``--report-log`` and
pytest-xdist see it as any other test. Nothing is reported when the exit rules find nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from harness.drive.run_end import RunEnd
    from harness.pytest_plugin.state import HarnessState

NODE_ID = "mlx-harness::policy"


def findings_report(lines: Sequence[str]) -> pytest.TestReport:
    """A failed ``mlx-harness::policy`` test whose message is the findings, one a line."""
    text = "\n".join(lines)
    return pytest.TestReport(
        nodeid=NODE_ID,
        location=("mlx-harness", None, "policy"),
        keywords={"mlx-harness": 1, "policy": 1},
        outcome="failed",
        longrepr=text,
        when="call",
        user_properties=[("finding", line) for line in lines],
    )


def report_exit_findings(config: pytest.Config, lines: Sequence[str]) -> None:
    """Log the findings (if any) as one failed test, through pytest's hooks."""
    if lines:
        config.hook.pytest_runtest_logreport(report=findings_report(lines))


def failing_lines(state: HarnessState, end: RunEnd) -> list[str]:
    """What fails an otherwise passing session: the exit rules' lines (``state.exit_lines``)
    and reports that could not be written (``end.report_error``)."""
    lines = list(state.exit_lines)
    if end.report_error is not None:
        lines.append(f"error: {end.report_error}")
    return lines


def judge_pytest_session(
    session: pytest.Session, state: HarnessState, end: RunEnd, *, shard: bool
) -> None:
    """The exit rules' findings on the ended run (``end``, a RunEnd), kept on
    ``state.exit_lines`` for the summary; any of them, or reports that could not be written,
    turn an otherwise passing session's exit status to 1."""
    from harness.drive.exit_rules import exit_lines

    if state.exit_rules is not None:
        state.exit_lines = exit_lines(end.run, end.comparison, state.exit_rules, shard=shard)
    failed = bool(state.exit_lines) or end.report_error is not None
    if failed and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
