"""Whether a baseline's case can be compared with the current one: the one rule that compare's
verdicts and relative gates both follow.

Two results of one case id are not comparable when the scenario's version changed, any param
changed (``prompt_tokens 64 -> 1024``: never judged against the old point), the model's files
changed (revision, config.json, weight bytes, chat template, backend, server; unless
``--allow-model-change`` compares variants on purpose), or an input the scenario fingerprinted
in its artifacts changed. :func:`not_comparable` names each reason; empty means comparable.
Two runs' cases are none of them comparable when the machine changed (:func:`machine_apart`,
``machine changed (cpu: Apple M1 -> Apple M2)``; unless ``--allow-machine-change``): compare and
relative gates add that run-wide reason from here too, in the same words. Samples taken on a
dirty machine are each side's own matter (compare's ``dirty_sides``, the judge's dirty rule).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core.types import CaseResult, Machine, ModelIdentity, RunRecord

# what makes two runs' machines "the same"
MACHINE_FIELDS = ("cpu", "cores", "memory_bytes", "os", "arch", "mlx_device", "blas")

# what makes a model's files "the same" between runs: (field, what a change of it is called)
IDENTITY_FIELDS = (
    ("revision", "revision"),
    ("config_sha256", "config.json"),
    ("weights_bytes", "weights"),
    ("chat_template_sha256", "chat template"),
    ("backend", "backend"),
    ("server", "server"),
)


def not_comparable(
    base: CaseResult,
    cur: CaseResult,
    identities: tuple[ModelIdentity | None, ModelIdentity | None],
    *,
    allow_model_change: bool = False,
) -> list[str]:
    """Why ``base`` (the baseline's result) cannot be compared with ``cur``, a reason each;
    ``identities``: the model's identity in the baseline run and in the current one (None where
    a run did not record it: then the model is not held against them)."""
    reasons: list[str] = []
    if base.scenario_version != cur.scenario_version:
        reasons.append(f"scenario version {base.scenario_version} -> {cur.scenario_version}")
    changed = sorted(
        k for k in set(base.params) | set(cur.params) if base.params.get(k) != cur.params.get(k)
    )
    if changed:
        reasons.append(
            "params changed: "
            + ", ".join(f"{k} {base.params.get(k)!r} -> {cur.params.get(k)!r}" for k in changed)
        )
    if not allow_model_change:
        reasons.extend(identity_changes(*identities))
    reasons.extend(input_changes(base.artifacts, cur.artifacts))
    return reasons


def machine_changes(baseline: Machine, current: Machine) -> tuple[str, ...]:
    """``cpu: Apple M1 -> Apple M2`` for each field of :data:`MACHINE_FIELDS` that differs."""
    return tuple(
        f"{name}: {getattr(baseline, name)} -> {getattr(current, name)}"
        for name in MACHINE_FIELDS
        if getattr(baseline, name) != getattr(current, name)
    )


def machine_apart(
    baseline: Machine, current: Machine, *, allow_machine_change: bool = False
) -> tuple[str, ...]:
    """The run-wide reason no case of the two runs is comparable: ``machine changed (cpu: M1 ->
    M2)`` (empty when the same machine, or when ``allow_machine_change``)."""
    changes = machine_changes(baseline, current)
    if allow_machine_change or not changes:
        return ()
    return (f"machine changed ({'; '.join(changes)})",)


def input_changes(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[str]:
    """Inputs a scenario fingerprinted in its artifacts (keys ending in ``_sha256``, e.g. the
    tool_calls template swapped in by name) that differ between the two runs."""
    keys = sorted(k for k in set(before) & set(after) if k.endswith("_sha256"))
    return [
        f"{k.removesuffix('_sha256').replace('_', ' ')} changed: "
        f"{str(before[k])[:12]} -> {str(after[k])[:12]}"
        for k in keys
        if before[k] != after[k]
    ]


def model_changes(baseline: RunRecord, current: RunRecord, before: str, after: str) -> list[str]:
    """What differs between a model's identity in two runs (:func:`identity_changes`), the
    model named ``before`` in ``baseline`` and ``after`` in ``current``."""
    return identity_changes(baseline.models.get(before), current.models.get(after))


def identity_changes(before: ModelIdentity | None, after: ModelIdentity | None) -> list[str]:
    """One line with both values of each field that differs: ``model files changed: revision
    1a2b3c4d5e6f -> 9f8e7d6c5b4a, weights 513.0 MiB -> 98.2 MiB`` (empty when the same, or when
    either identity is missing)."""
    if before is None or after is None:
        return []
    changes = [
        f"{label} {_identity_value(name, getattr(before, name))} -> "
        f"{_identity_value(name, getattr(after, name))}"
        for name, label in IDENTITY_FIELDS
        if getattr(before, name) != getattr(after, name)
    ]
    return [f"model files changed: {', '.join(changes)}"] if changes else []


def _identity_value(name: str, value: object) -> str:
    if value is None or value == "":
        return "none"
    if name == "weights_bytes" and isinstance(value, int):
        return f"{value / 2**20:.1f} MiB"
    text = str(value)
    return text[:12] if name.endswith("sha256") or name == "revision" else text
