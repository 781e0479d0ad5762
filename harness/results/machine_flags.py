"""What a case's record says about the machine's state while it was measured (issue 30).

The worker writes the ``machine_state`` artifact (:mod:`harness.runner.sample_guard`): the state
before and after the case, the CPU share other processes took, one entry per measured run where
the scenario reports its runs, and ``dirty``: why its samples cannot be trusted (empty when they
can). Readers (gates, compare, history, the site) ask here, never the artifact's shape; the
``remeasure`` artifact of a case measured again once the machine was quiet too
(:func:`remeasured`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult

ARTIFACT = "machine_state"
BUSY = "machine busy"  # how a reason that other processes took the CPU begins


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


def busy_only(reasons: tuple[str, ...]) -> bool:
    """Whether ``reasons`` are all of the kind a wait for quiet can end: other processes took
    the CPU (``machine busy (...)``); False when there are none."""
    return bool(reasons) and all(r.startswith(BUSY) for r in reasons)


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


REMEASURE = "remeasure"  # the artifact of a case measured once more once the machine was quiet


@dataclass(frozen=True)
class Remeasure:
    """What a case's ``remeasure`` artifact says (:mod:`harness.runner.remeasure`): its first
    measurement missed a gate on a busy machine, so the runner waited up to ``bound_s`` for
    quiet (``waited_s``; ``quiet``: whether it came) and, when it did, measured the case again:
    the result's metrics and machine state are then the second measurement's, and the first's
    are here (``first_state``: its ``machine_state`` artifact, ``first_metrics``: its samples,
    ``first_gates``: its gates' messages; all empty when the wait ran out: the result's own are
    the first measurement's)."""

    waited_s: float
    bound_s: float
    quiet: bool
    first_state: Mapping[str, Any]
    first_metrics: Mapping[str, tuple[float, ...]]
    first_gates: tuple[str, ...]

    @property
    def first_dirty(self) -> tuple[str, ...]:
        """Why the first measurement's samples could not be trusted."""
        return dirty_in({ARTIFACT: self.first_state})

    def line(self, again: tuple[str, ...], first: str = "") -> str:
        """``re-measured once quiet (waited 4.2 s)``, ``re-measured once quiet (waited 4.2 s),
        busy again: ...`` (``again``: the second measurement's dirty reasons), or ``not
        re-measured: still busy after the 60 s wait for quiet``; ``first``: what the first
        measurement gave, said in the parentheses."""
        if not self.quiet:
            return f"not re-measured: still busy after the {self.bound_s:.0f} s wait for quiet"
        more = f"; {first}" if first else ""
        said = f"re-measured once quiet (waited {self.waited_s:.1f} s{more})"
        return f"{said}, busy again: {dirty_line(again)}" if again else said

    def to_json(self) -> dict[str, Any]:
        return {
            "waited_s": round(self.waited_s, 3),
            "bound_s": self.bound_s,
            "quiet": self.quiet,
            "first": {
                ARTIFACT: dict(self.first_state),
                "metrics": {k: list(v) for k, v in self.first_metrics.items()},
                "gates": list(self.first_gates),
            },
        }


def remeasured(result: CaseResult) -> Remeasure | None:
    """The case's re-measure (None when it had none, or the artifact is not one)."""
    found = result.artifacts.get(REMEASURE)
    if not isinstance(found, Mapping):
        return None
    first = found.get("first")
    first = first if isinstance(first, Mapping) else {}
    waited, bound = found.get("waited_s"), found.get("bound_s")
    if not _number(waited) or not _number(bound):
        return None
    metrics = first.get("metrics")
    return Remeasure(
        float(waited),  # type: ignore[arg-type]
        float(bound),  # type: ignore[arg-type]
        found.get("quiet") is True,
        _state(first),
        {
            str(k): tuple(float(x) for x in v if _number(x))
            for k, v in (metrics.items() if isinstance(metrics, Mapping) else ())
            if isinstance(v, list)
        },
        _strings(first.get("gates")),
    )


def _number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _strings(value: object) -> tuple[str, ...]:
    return tuple(str(v) for v in value if isinstance(v, str)) if isinstance(value, list) else ()
