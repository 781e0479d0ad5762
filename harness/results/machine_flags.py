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
    """Why ``result``'s samples were taken on a dirty machine ("machine busy (load 3.1, 45% CPU
    in other processes)"); empty when they were not, or when the record has no machine state
    (older records)."""
    return dirty_in(result.artifacts)


def dirty_in(artifacts: Mapping[str, Any]) -> tuple[str, ...]:
    """:func:`dirty_reasons` of a case's artifacts (before its result is made)."""
    reasons = _state(artifacts).get("dirty")
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


def merged(first: object, later: object) -> object:
    """Two rounds' ``machine_state`` artifacts as one (pin sets taking turns measure a case in
    rounds): the first's state before, the later's after, the later's runs numbered on after
    the first's, every reason kept. Either one missing: the other."""
    if not isinstance(first, Mapping):
        return later
    if not isinstance(later, Mapping):
        return first
    runs_a = [r for r in first.get("runs", []) if isinstance(r, Mapping)]
    offset = max((r["runs"][1] for r in runs_a if _span(r)), default=0)
    runs_b = [
        {**r, "runs": [r["runs"][0] + offset, r["runs"][1] + offset]}
        for r in later.get("runs", [])
        if isinstance(r, Mapping) and _span(r)
    ]
    flagged_b = [n + offset for n in later.get("flagged_runs", []) if isinstance(n, int)]
    out = dict(first)
    out["after"] = later.get("after", first.get("after"))
    out["runs"] = [*runs_a, *runs_b]
    out["flagged_runs"] = [*first.get("flagged_runs", []), *flagged_b]
    out["dirty"] = list(dict.fromkeys([*first.get("dirty", []), *later.get("dirty", [])]))
    return out


def _span(run: Mapping[str, Any]) -> bool:
    runs = run.get("runs")
    return isinstance(runs, list) and len(runs) == 2 and all(isinstance(n, int) for n in runs)
