"""The options ``mlx-harness run`` and the pytest plugin share, declared once: ``--resume``,
``--baseline`` and the exit rules' (:mod:`harness.drive.exit_rules`). ``add`` is argparse's
``add_argument`` or pytest's ``group.addoption``: they take the same words. The options that
differ between the two drivers (``--report-dir``, ``--run-id``, ``--allow-download``,
``--shard``, ...) stay with each driver. Also the one check of ``--run-id`` against
``--resume``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness.drive.exit_rules import add_exit_options


def add_run_options(add: Callable[..., Any]) -> None:
    """Declare ``--resume``, ``--baseline``, ``--no-report`` and the exit rules' options with
    ``add``."""
    add(
        "--resume",
        metavar="RUN_ID",
        default=None,
        help="continue an interrupted run: only cases without a final status run again",
    )
    add(
        "--baseline",
        default=None,
        help="a run record (run.jsonl or its directory) to compare with; enables relative gates",
    )
    add(
        "--no-report",
        action="store_true",
        default=False,
        help="record the run but do not render Markdown/HTML reports",
    )
    add_exit_options(add)


def different_runs(run_id: str | None, resume: str | None) -> str | None:
    """The one-line error when ``--run-id`` and ``--resume`` name different runs, else None."""
    if run_id and resume and run_id != resume:
        return (
            f"--run-id {run_id} and --resume {resume} name different runs; "
            "give only --resume RUN_ID"
        )
    return None
