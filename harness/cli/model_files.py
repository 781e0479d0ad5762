"""``validate``'s look at the models themselves: what a run would skip because of the suite's
input (a ``hub:`` id not in the cache, a model folder that is empty, corrupt or lacks its
weights) is an error here, one line naming the suite file, the model entry's line and the fix,
so a suite that would fail CI with ``input-skip`` fails validation first."""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.types import Case, ExpectKind
from harness.runner.outcome import INPUT_CODES
from harness.runner.preflight import Preflighter
from harness.spec.loaded import LoadedSuite


def model_problems(loaded: LoadedSuite, cases: Sequence[Case]) -> list[str]:
    """One line per model whose cases the run would skip for its input (first case's why)."""
    lines: dict[str, str] = {}
    preflighter = Preflighter()
    where = {m.entry.key: f"{m.path}:{m.line}:{m.column}" for m in loaded.models}
    for case in cases:
        key = case.model.key
        if key in lines:
            continue
        why = _input_problem(preflighter, case)
        if why is not None:
            place = where.get(key, str(loaded.path))
            lines[key] = f"{place}: model '{key}': {why}; its cases would be skipped (input-skip)"
    return list(lines.values())


def _input_problem(preflighter: Preflighter, case: Case) -> str | None:
    expectation = case.expectation
    if expectation is not None and expectation.kind is ExpectKind.SKIP:
        return expectation.reason if expectation.source is None else None  # planned: no model
    if case.model.path is None:
        return None
    preflight = preflighter.check(case)
    if preflight is None or not preflight.blocked or preflight.decision is None:
        return None
    if preflight.decision.code.value not in INPUT_CODES:
        return None  # memory, a capability: this machine's or the backend's, not the suite's
    return preflight.reason
