"""What the pytest plugin keeps for one pytest session: :class:`HarnessState`, on
``config.stash[STATE]``. The hooks (:mod:`harness.pytest_plugin`), the pytest-xdist controller
(:mod:`~harness.pytest_plugin.xdist_parts`) and the exit rules' test report
(:mod:`~harness.pytest_plugin.exit_report`) read and set it."""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pytest

from harness.core.types import Case, CaseResult, RunRecord, Shard, SuiteInfo

if TYPE_CHECKING:  # imported when a run starts, not when pytest loads the plugin
    from harness.drive.exit_rules import ExitRules
    from harness.drive.run_end import RunEnd
    from harness.runner.active_run import ActiveRun
    from harness.runner.signals import RunInterrupted


@dataclass
class HarnessState:
    """Everything the plugin keeps for one pytest session (lives on ``config.stash``)."""

    suites: dict[str, SuiteInfo] = field(default_factory=dict)
    active: ActiveRun | None = None  # created on the first case (or at collection's end)
    results: list[CaseResult] = field(default_factory=list)
    end: RunEnd | None = None  # once the run has ended
    baseline: RunRecord | None = None  # --baseline, else the run the suites name
    markers: set[str] = field(default_factory=set)
    planned: list[Case] = field(default_factory=list)  # the cases selected to run
    stop: RunInterrupted | None = None  # once the run is stopped
    signals: ExitStack = field(default_factory=ExitStack)  # stop-signal handlers while running
    split: tuple[int, int] | None = None  # --shard I/N
    shard: Shard | None = None  # once the plan is split
    exit_rules: ExitRules | None = None  # what fails the run besides failed cases
    exit_lines: list[str] = field(default_factory=list)  # what the exit rules found at the end
    bad_input: bool = False  # a suite did not load: a usage error (exit 4), as for bad options


STATE = pytest.StashKey[HarnessState]()
