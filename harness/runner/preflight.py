"""Probe and policy before load: may this case run on this model, here, and how much memory.

For each case, before its model's worker starts: a scenario requiring a backend capability
its backend does not declare (``backend_needs`` against the backend's ``capabilities``) is
skipped with ``capability_missing: backend fake has no prompt cache``; then the model's files
are probed once per model (``probe_model``, no mlx; a backend outside the probe's libraries may
probe its own files, :class:`harness.backends.base.Probing`), and the policy decides from the
model capabilities the scenario ``needs``, the tokens a request of the case holds at its largest
(the scenario's ``workload``) and this machine's memory. A block skips the case with
``"<code>: <message>"`` and no worker starts; a warning runs it. Either way the
decision, its findings and the memory estimate go into the case's record, so the report can set
the predicted MLX peak beside the measured one. Nothing switches silently: a suite's backend
that differs from the one the files call for is judged as named, and the mismatch is a finding.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.backends import BACKENDS
from harness.backends.base import (
    BackendCapability,
    BackendError,
    Probing,
    capability_missing,
    declared_capabilities,
)
from harness.core.preflight_types import (
    ContextSource,
    FindingRecord,
    MemoryRecord,
    PolicyAction,
    PreflightRecord,
    WorkloadRecord,
)
from harness.core.types import Case, JSONValue
from harness.probe.installed import Stack, detect_stack
from harness.probe.machine import MemoryBudget, available_memory
from harness.probe.memory import MemoryEstimate, estimate_memory, with_reference
from harness.probe.policy import Action, Decision, Judged, decide
from harness.probe.probe import ProbeError, probe_model
from harness.probe.serialize import estimate_dict, probe_dict
from harness.probe.types import Capability, Library, Probe, ReasonCode
from harness.scenarios import SCENARIOS
from harness.scenarios.base import Scenario, Workload

LIBRARY_BACKENDS = frozenset(b.value for b in Library if b is not Library.NONE)


@dataclass(frozen=True)
class Preflight:
    """The policy's answer for one case; ``decision`` None when the case could not be judged."""

    backend: str
    needs: frozenset[Capability]
    decision: Decision | None
    workload: Workload | None = None
    recommended: Library | None = None  # what the files call for (None: not probed)
    note: str | None = None  # why not judged (decision None), or a remark on the decision

    @property
    def blocked(self) -> bool:
        return self.decision is not None and self.decision.action is Action.BLOCK

    @property
    def reason(self) -> str:
        """``"<code>: <message>"``: a skipped case's reason, a warning's one line."""
        if self.decision is None:
            return f"not judged: {self.note}"
        note = f" ({self.note})" if self.note else ""
        return f"{self.decision.code.value}: {self.decision.message}{note}"

    def record(self) -> PreflightRecord:
        """The typed record of this answer, for the case's run record."""
        workload, decision = self.workload, self.decision
        estimate = decision.memory if decision is not None else None
        return PreflightRecord(
            backend=self.backend,
            recommended_backend=self.recommended.value if self.recommended else None,
            needs=tuple(sorted(c.value for c in self.needs)),
            workload=(
                WorkloadRecord(workload.prompt_tokens, workload.generated_tokens)
                if workload is not None
                else None
            ),
            context_source=ContextSource.DEFAULT if workload is None else ContextSource.SCENARIO,
            memory=(
                MemoryRecord(**{**estimate_dict(estimate), "approximate": estimate.approximate})
                if estimate is not None
                else None
            ),
            action=PolicyAction(decision.action.value) if decision is not None else None,
            code=decision.code.value if decision is not None else None,
            message=decision.message if decision is not None else None,
            http_status=decision.code.http_status if decision is not None else None,
            findings=tuple(
                FindingRecord(PolicyAction(f.action.value), f.code.value, f.message)
                for f in (decision.findings if decision is not None else ())
            ),
            note=self.note,
        )


def scenario_needs(scenario: Scenario[Any] | None) -> frozenset[Capability]:
    """The MODEL capabilities a scenario declares (``needs``); none for an unknown one."""
    return scenario.needs if scenario is not None else frozenset()


def scenario_backend_needs(scenario: Scenario[Any] | None) -> frozenset[BackendCapability]:
    """The BACKEND capabilities a scenario requires (``backend_needs``); none for an unknown
    one."""
    return scenario.backend_needs if scenario is not None else frozenset()


class Preflighter:
    """Probes each model once (per backend and path) and decides each case.

    ``budget`` fixes the memory budget (tests); by default this machine's is read for every
    decision (the free memory changes as workers come and go).
    """

    def __init__(self, *, budget: MemoryBudget | None = None, stack: Stack | None = None) -> None:
        self._budget = budget
        self._stack = stack
        self._probes: dict[tuple[str, str], Probe | str] = {}

    def _library_probe(self, path: Path) -> Probe:
        if self._stack is None:
            self._stack = detect_stack()
        return probe_model(path, stack=self._stack)

    def probe(self, case: Case) -> Probe | str:
        """The model's probe, or why there is none (one line); cached per backend and path."""
        assert case.model.path is not None
        return self._probe_cached(case.model.backend, case.model.path)

    def _probe_cached(self, backend: str, path: str) -> Probe | str:
        key = (backend, path)
        if key not in self._probes:
            self._probes[key] = self._probe(backend, Path(path))
        return self._probes[key]

    @staticmethod
    def _estimate(probe: Probe, workload: Workload, backend: str) -> MemoryEstimate:
        return estimate_memory(
            probe,
            workload.context_tokens,
            prompt_tokens=workload.prompt_tokens,
            text_only=backend == Library.MLX_LM.value,
            logits_rows=workload.logits_rows,
        )

    def _probe(self, backend_name: str, path: Path) -> Probe | str:

        backend = BACKENDS.get(backend_name)
        try:
            if isinstance(backend, Probing):
                return backend.probe(path)
            return self._library_probe(path)
        except ProbeError as exc:
            return str(exc)

    def check(self, case: Case) -> Preflight | None:
        """The decision for ``case``; None when there is nothing to judge here: no local path,
        or a ``url:`` server, which loaded its model itself (local files there are only for
        the tokenizer)."""

        backend = case.model.backend
        scenario = SCENARIOS.get(case.scenario) if case.scenario in SCENARIOS else None
        needs = scenario_needs(scenario)
        if backend not in BACKENDS:
            return _blocked(
                backend,
                needs,
                ReasonCode.MISSING_DEPENDENCY,
                f"no runner backend {backend!r} (registered: {', '.join(BACKENDS.names())})",
            )
        lacking = self._lacking(backend, scenario_backend_needs(scenario))
        if isinstance(lacking, str):  # the backend is broken: its load says so, as an error
            return Preflight(backend, needs, None, note=lacking)
        if lacking:
            message = capability_missing(backend, lacking)
            return _blocked(backend, needs, ReasonCode.CAPABILITY_MISSING, message)
        server = case.model.server
        if case.model.path is None or (server is not None and server.url is not None):
            return None
        probe = self.probe(case)
        if isinstance(probe, str):
            if backend in LIBRARY_BACKENDS:
                return _blocked(backend, needs, ReasonCode.CORRUPT_MODEL, probe)
            return Preflight(backend, needs, None, note=f"{backend} has no probe: {probe}")
        workload = _workload(scenario, case)
        estimate = None
        if workload is not None and probe.weights_bytes is not None:
            estimate = self._estimate(probe, workload, backend)
            for reference in workload.references:  # loaded beside the model for the case
                probed = self._probe_cached(backend, reference)
                if isinstance(probed, Probe) and probed.weights_bytes is not None:
                    estimate = with_reference(estimate, self._estimate(probed, workload, backend))
        decision = decide(
            probe,
            scenario_needs=needs,
            memory=self._memory(case.memory_threshold),
            estimate=estimate,
            backend=backend,
        )
        note = None
        wanted = probe.backend.value
        if probe.backend is not Library.NONE and wanted != backend and wanted not in BACKENDS:
            note = f"the runner has no {wanted} backend yet"
        return Preflight(backend, needs, decision, workload, probe.backend, note)

    @staticmethod
    def _lacking(
        backend: str, needed: frozenset[BackendCapability]
    ) -> frozenset[BackendCapability] | str:
        """What of ``needed`` the backend does not declare, or why it declares nothing."""

        if not needed:
            return frozenset()
        try:
            return needed - declared_capabilities(BACKENDS.get(backend), backend)
        except BackendError as exc:
            return str(exc)

    def _memory(self, threshold: float) -> MemoryBudget:
        """The fixed budget (tests) or this machine's now, at the suite's threshold."""
        if self._budget is not None:
            return dataclasses.replace(self._budget, threshold=threshold)
        return available_memory(threshold)

    def probe_record(self, case: Case) -> dict[str, JSONValue] | None:
        """The cached probe as JSON-ready data, None when there is none."""
        probe = self._probes.get((case.model.backend, case.model.path or ""))
        return probe_dict(probe) if isinstance(probe, Probe) else None


def _workload(scenario: Scenario[Any] | None, case: Case) -> Workload | None:
    """The case's workload; None when the scenario declares none or its params do not
    validate (the worker then reports the invalid params as the case's error)."""
    if scenario is None:
        return None
    from pydantic import ValidationError

    try:
        params = scenario.params_model.model_validate(dict(case.params))
    except ValidationError:
        return None
    return scenario.workload(params)


def _blocked(
    backend: str, needs: frozenset[Capability], code: ReasonCode, message: str
) -> Preflight:
    judged = Judged(Action.BLOCK, code, message)
    return Preflight(backend, needs, Decision(Action.BLOCK, code, message, (judged,)))
