"""The exit rules' options and verdict, shared by ``mlx-harness run`` and the pytest plugin:
``--fail-on``, ``--fail-on-regression``, ``--allow-model-change``, ``--allow-machine-change``,
``--allow-dirty-machine`` declared once (argparse's ``add_argument`` and pytest's ``addoption``
take the same words), and the lines of :mod:`harness.results.fail_on` after a run, which
each driver turns into its exit status (``cli/run.py``; under pytest,
:func:`harness.pytest_plugin.exit_report.judge_pytest_session`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harness.core.types import RunRecord
from harness.results.compare import Comparison, Thresholds
from harness.results.fail_on import (
    DEFAULT,
    FailOn,
    FailOnError,
    chosen_kinds,
    findings,
    kinds,
    notes,
    parse_fail_on,
)

ALLOW_DIRTY_ENV = "MLX_HARNESS_ALLOW_DIRTY_MACHINE"  # "1": as --allow-dirty-machine


EXIT_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--fail-on",
        {
            "default": None,
            "metavar": "KINDS",
            "help": "what besides failed cases makes the exit status 1, comma-separated: "
            f"{kinds()}, or none (default: {','.join(k.value for k in FailOn if k in DEFAULT)})",
        },
    ),
    (
        "--fail-on-regression",
        {
            "action": "store_true",
            "default": False,
            "help": "also exit 1 when the comparison with --baseline finds a regression "
            "(adds 'regression' to --fail-on)",
        },
    ),
    (
        "--allow-model-change",
        {
            "action": "store_true",
            "default": False,
            "help": "compare with --baseline even where a model's files changed (a 4-bit "
            "variant on purpose); the change is still named",
        },
    ),
    (
        "--allow-machine-change",
        {
            "action": "store_true",
            "default": False,
            "help": "compare with --baseline even though the machine changed",
        },
    ),
    (
        "--allow-dirty-machine",
        {
            "action": "store_true",
            "default": False,
            "help": "judge gates and compare cases even where the machine was busy, throttled, "
            f"on battery or swapping while they were measured (or set {ALLOW_DIRTY_ENV}=1); "
            "the state is still recorded",
        },
    ),
)


def allow_dirty_machine(flag: object) -> bool:
    """``--allow-dirty-machine`` given, or its environment variable set (a shared machine whose
    other work is known and accepted, such as a test suite's own parallel jobs)."""
    return bool(flag) or os.environ.get(ALLOW_DIRTY_ENV, "").strip() not in ("", "0")


def add_exit_options(add: Callable[..., Any]) -> None:
    """Declare the exit rules' options with ``add`` (``parser.add_argument`` or pytest's
    ``group.addoption``)."""
    for name, kwargs in EXIT_OPTIONS:
        add(name, **kwargs)


@dataclass(frozen=True)
class ExitRules:
    """The exit rules the options chose: ``--fail-on`` as given (None: the suites'
    ``fail_on:``, else the default), ``--fail-on-regression``, and what may be compared anyway."""

    fail_on: str | None
    regression: bool
    thresholds: Thresholds

    def kinds(self, run: RunRecord) -> frozenset[FailOn]:
        """What fails ``run``: the command line's, else its suites', else the default."""
        return chosen_kinds(self.fail_on, run.suites, regression=self.regression)


def exit_rules_from(option: Callable[[str], Any]) -> ExitRules:
    """The exit rules the options chose (``option(dest)`` reads one); FailOnError on a bad
    ``--fail-on`` (one line)."""
    text, regression = option("fail_on"), bool(option("fail_on_regression"))
    parse_fail_on(text, regression=regression)  # a bad value is one line now, not at the end
    return ExitRules(
        text,
        regression,
        Thresholds(
            allow_model_change=bool(option("allow_model_change")),
            allow_machine_change=bool(option("allow_machine_change")),
            allow_dirty_machine=allow_dirty_machine(option("allow_dirty_machine")),
        ),
    )


def exit_lines(
    run: RunRecord, comparison: Comparison | None, rules: ExitRules, *, shard: bool
) -> list[str]:
    """One ``policy: ...`` line per finding (empty: the cases alone decide the exit)."""
    kinds_ = rules.kinds(run)
    return [f"policy: {f.line}" for f in findings(run, comparison, kinds_, shard=shard)]


def note_lines(run: RunRecord, comparison: Comparison | None) -> list[str]:
    """Lines that explain the verdict without changing it (relative gates without a
    baseline)."""
    return notes(run, comparison)


__all__ = [
    "ExitRules",
    "FailOnError",
    "add_exit_options",
    "allow_dirty_machine",
    "exit_lines",
    "exit_rules_from",
    "note_lines",
]
