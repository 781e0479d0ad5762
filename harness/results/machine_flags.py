"""What a case's record says about the machine's state while it was measured (issue 30).

The worker writes the ``machine_state`` artifact (:mod:`harness.runner.sample_guard`): the state
before and after the case, the CPU share other processes took, one entry per measured run where
the scenario reports its runs, and ``dirty``: why its samples cannot be trusted (empty when they
can). Readers (gates, compare, history, the site) ask here, never the artifact's shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core.types import CaseResult

ARTIFACT = "machine_state"


def _state(artifacts: Mapping[str, Any]) -> Mapping[str, Any]:
    found = artifacts.get(ARTIFACT)
    return found if isinstance(found, Mapping) else {}


def dirty_reasons(result: CaseResult) -> tuple[str, ...]:
    """Why ``result``'s samples were taken on a dirty machine ("busy: load 3.1, 45% CPU in other
    processes"); empty when they were not, or when the record has no machine state (older
    records)."""
    reasons = _state(result.artifacts).get("dirty")
    if not isinstance(reasons, list):
        return ()
    return tuple(str(r) for r in reasons if isinstance(r, str) and r)


def flagged_runs(result: CaseResult) -> tuple[int, ...]:
    """The measured runs (1-based) taken while the machine was dirty, where the scenario
    reported its runs one by one; empty otherwise (then :func:`dirty_reasons` speaks for all)."""
    runs = _state(result.artifacts).get("flagged_runs")
    if not isinstance(runs, list):
        return ()
    return tuple(r for r in runs if isinstance(r, int) and not isinstance(r, bool) and r >= 1)


def dirty_line(reasons: tuple[str, ...]) -> str:
    """``machine busy (load 3.1, 45% CPU in other processes)``: the reasons as one phrase."""
    return "; ".join(reasons)
