"""Planning: a loaded suite becomes cases (models x scenarios x sweep points), grouped by model."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, TypeVar

from harness.core.types import (
    Case,
    Expectation,
    ExpectKind,
    Gate,
    ModelRef,
    ModelSource,
    ServerRef,
    SuiteInfo,
)
from harness.probe.installed import detect_stack
from harness.probe.probe import ProbeError, probe_model
from harness.probe.source import installed_versions
from harness.results.fail_on import FailOn
from harness.scenarios import SCENARIOS
from harness.scenarios.second_model import SecondModel as DraftRef
from harness.scenarios.second_model import SecondModelError, second_model_path
from harness.spec.fields import names_model
from harness.spec.gates import parse_gate
from harness.spec.ledger import expectation_for, ledger_entries, needs_family, needs_versions
from harness.spec.loaded import LoadedSuite, SourcedModel
from harness.spec.repeats import resolved
from harness.spec.resolve import ResolveError, resolve_model
from harness.spec.schema import ModelEntry, ScenarioEntry

T = TypeVar("T")


def group_by_first_seen(items: Sequence[T], key: Callable[[T], Hashable | None]) -> list[T]:
    """Stable reorder so items with the same key are adjacent, at the first one's place.

    Items whose key is None keep their own place. Used to load each model once per run.
    """
    first: dict[Hashable, int] = {}
    for index, item in enumerate(items):
        k = key(item)
        if k is not None:
            first.setdefault(k, index)

    def rank(pair: tuple[int, T]) -> tuple[int, int]:
        k = key(pair[1])
        return (first[k] if k is not None else pair[0], pair[0])

    return [item for _, item in sorted(enumerate(items), key=rank)]


def worker_key(case: Case) -> tuple[str, str, ServerRef | None]:
    """Cases with the same key share one worker (one load): the same backend and files, and
    for a served model the same server (engine, arguments, environment or URL), so two engines
    serving one folder never share a worker."""
    return (case.model.backend, case.model.path or case.model.location, case.model.server)


def point_id(point: Mapping[str, Any]) -> str:
    """Readable, stable id of a sweep point: ``prompt_tokens=128-gen_tokens=32``."""
    return "-".join(f"{k}={point[k]}" for k in point)


def case_name(scenario: str, point: Mapping[str, Any]) -> str:
    return f"{scenario}[{point_id(point)}]" if point else scenario


def sweep_points(entry: ScenarioEntry) -> list[dict[str, Any]]:
    if not entry.sweep:
        return [{}]
    keys = list(entry.sweep)
    return [
        dict(zip(keys, combo, strict=True))
        for combo in itertools.product(*(entry.sweep[k] for k in keys))
    ]


def _model_ref(sourced: SourcedModel, allow_download: bool) -> tuple[ModelRef, str | None]:

    entry = sourced.entry
    source = (
        ModelSource.PATH
        if entry.path
        else ModelSource.HUB
        if entry.hub
        else ModelSource.EMBEDDED
        if entry.embedded
        else ModelSource.URL
    )
    resolved: str | None = None
    problem = None
    if source is not ModelSource.URL:
        try:
            resolved = str(resolve_model(entry, sourced.path.parent, allow_download=allow_download))
        except ResolveError as exc:
            problem = f"{exc.message} ({exc.hint})"
    server = _server_ref(entry)
    ref = ModelRef(
        entry.key, source, entry.location, entry.backend_name, tuple(entry.tags), resolved, server
    )
    return ref, problem


def _server_ref(entry: ModelEntry) -> ServerRef | None:
    if entry.serve is not None:
        draft, problem = _draft_path(entry.serve.draft)
        return ServerRef(
            engine=entry.serve.engine.value,
            args=(*entry.serve.template_args(), *entry.serve.args),
            env=tuple(sorted(entry.serve.env.items())),
            startup_timeout_s=entry.serve.startup_timeout_s,
            draft=draft,
            draft_problem=problem,
            draft_tokens=entry.serve.draft_tokens,
            request_model=entry.serve.request_model,
        )
    if entry.url is not None:
        return ServerRef(
            url=entry.url, api_key_env=entry.api_key_env, request_model=entry.served_model
        )
    return None


def _draft_path(ref: DraftRef | None) -> tuple[str | None, str | None]:
    """The served draft's folder or file, or why it does not resolve (the load fails with it)."""
    if ref is None:
        return None, None
    try:
        return str(second_model_path(ref, "serve draft")), None
    except SecondModelError as exc:
        return None, str(exc)


def _families(refs: Sequence[ModelRef]) -> dict[str, str | None]:
    """Each resolved model's family (config.json model_type, from the probe); None if unknown."""

    stack = detect_stack()
    families: dict[str, str | None] = {}
    for ref in refs:
        families[ref.key] = None
        if ref.path is not None:
            try:
                families[ref.key] = probe_model(ref.path, stack=stack).model_type
            except ProbeError:
                continue
    return families


def _gates(suite_gates: Mapping[str, str], entry: ScenarioEntry) -> tuple[Gate, ...]:
    gates = [
        parse_gate(m, e)
        for m, e in suite_gates.items()
        if m.split(".")[0] in (entry.scenario, "memory")
    ]
    gates.extend(parse_gate(m, e) for m, e in entry.gates.items())
    return tuple(gates)


def plan(loaded: LoadedSuite, *, allow_download: bool = False) -> list[Case]:
    """All cases of the suite, ordered so each model's cases are adjacent (one load each)."""

    suite = loaded.suite
    allow = allow_download or suite.allow_download
    refs = [_model_ref(m, allow) for m in loaded.models]
    families = _families([r for r, _ in refs]) if needs_family(loaded.expect) else {}
    installed = installed_versions() if needs_versions(loaded.expect) else {}
    cases: list[Case] = []
    for ref, problem in refs:
        for entry in suite.scenarios:
            if not names_model(entry.models, ref.key):
                continue
            params_model = SCENARIOS.get(entry.scenario).params_model
            first_batch, auto = resolved(entry.repeats or suite.defaults.repeats)
            for point in sweep_points(entry):
                params = params_model.model_validate({**entry.params, **point}).model_dump()
                expectation = expectation_for(
                    loaded.expect,
                    model=ref.key,
                    scenario=entry.scenario,
                    family=families.get(ref.key),
                    backend=ref.backend,
                    installed=installed,
                    entry_id=entry.id,
                    checks=params.get("checks"),
                )
                if problem is not None and expectation is None:
                    expectation = Expectation(ExpectKind.SKIP, problem)
                cases.append(
                    Case(
                        case_id=f"{loaded.name}::{ref.key}::"
                        f"{case_name(entry.id or entry.scenario, point)}",
                        suite=loaded.name,
                        suite_path=str(loaded.path),
                        model=ref,
                        scenario=entry.scenario,
                        params=params,
                        point=point,
                        repeats=first_batch,
                        auto_repeats=auto,
                        warmup=entry.warmup if entry.warmup is not None else suite.defaults.warmup,
                        timeout_s=entry.timeout_s or suite.defaults.timeout_s,
                        memory_threshold=suite.defaults.memory_threshold,
                        cooldown_s=suite.defaults.cooldown_s,
                        wait_for_quiet_s=suite.defaults.wait_for_quiet_s,
                        expectation=expectation,
                        gates=_gates(suite.gates, entry),
                        marks=(entry.scenario, ref.backend, *ref.tags),
                    )
                )
    return cases


def suite_info(loaded: LoadedSuite, cases: Sequence[Case]) -> SuiteInfo:
    """What the run record keeps of a planned suite: identity, ledger, warnings."""
    return SuiteInfo(
        loaded.name,
        str(loaded.path),
        loaded.sha256,
        ledger=ledger_entries(loaded, cases),
        warnings=tuple(str(w) for w in loaded.warnings),
        fail_on=(
            tuple(k.value if isinstance(k, FailOn) else k for k in loaded.suite.fail_on)
            if loaded.suite.fail_on is not None
            else None
        ),
        baseline=loaded.suite.baseline,
        reference=loaded.suite.side_by_side.reference if loaded.suite.side_by_side else None,
    )
