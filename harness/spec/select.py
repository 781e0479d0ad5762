"""A selector's filters over one candidate: chosen, or the one reason it was left out.

Pure: the facts come from the probe (``facts_of``), the memory budget and the runnable backends
are passed in. The first filter that fails is the reason, in the order the schema lists them,
then whether the harness can load the model at all (probe problems, a registered backend).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Collection
from dataclasses import dataclass

from harness.probe.machine import MemoryBudget
from harness.probe.memory import estimate_memory
from harness.probe.policy import DEFAULT_CONTEXT
from harness.probe.types import Capability, Library, Probe
from harness.spec.candidates import Candidate
from harness.spec.schema import Selector
from harness.spec.sizes import format_size

FLOAT_BITS = {"F64": 64, "F32": 32, "F16": 16, "BF16": 16, "F8_E4M3": 8, "F8_E5M2": 8}


@dataclass(frozen=True)
class Facts:
    """What the filters look at, read from a probe."""

    family: str | None
    capabilities: frozenset[Capability]
    backend: Library
    bits: float | None  # quantization bits, else the stored float width
    weights_bytes: int | None
    memory_bytes: int | None  # estimated total at the policy's default context
    problem: str | None  # the first thing that makes the files unloadable as they are


def facts_of(probe: Probe) -> Facts:

    quant = probe.quantization
    bits = quant.bits if quant is not None and quant.bits else FLOAT_BITS.get(probe.dtype or "")
    memory = None
    if probe.weights_bytes is not None:
        tokens = min(probe.context_length or DEFAULT_CONTEXT, DEFAULT_CONTEXT)
        memory = estimate_memory(probe, tokens).total_bytes
    problem = next((f"{p.code.value}: {p.message}" for p in probe.problems), None)
    return Facts(
        family=probe.model_type,
        capabilities=probe.capabilities,
        backend=probe.backend,
        bits=bits,
        weights_bytes=probe.weights_bytes,
        memory_bytes=memory,
        problem=problem,
    )


def backend_for(candidate: Candidate, facts: Facts) -> str:
    """The backend that loads the candidate: the catalog's for embedded models, else the probe's."""
    return candidate.backend or facts.backend.value


def why_not(
    selector: Selector,
    candidate: Candidate,
    facts: Facts,
    *,
    budget: MemoryBudget | None,
    runnable: Collection[str],
) -> str | None:
    """None when ``selector`` chooses ``candidate``, else one short reason."""
    for check in (_names, _tags, _family, _capabilities, _backend, _bits, _size):
        reason = check(selector, candidate, facts)
        if reason:
            return reason
    if selector.fits_memory and budget is not None:
        reason = _memory(facts, budget)
        if reason:
            return reason
    if facts.problem:
        return f"cannot load as it is: {facts.problem}"
    backend = backend_for(candidate, facts)
    if backend not in runnable:
        if facts.backend is Library.NONE:
            return f"no backend knows model_type {facts.family!r}"
        return f"backend {backend} is not available in this harness ({', '.join(runnable)})"
    return None


def _names(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    if selector.name and not _any_glob(candidate.name, selector.name):
        return f"name: not {' or '.join(selector.name)}"
    hit = next((g for g in selector.exclude if fnmatch.fnmatchcase(candidate.name, g)), None)
    return f"excluded by '{hit}'" if hit else None


def _tags(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    missing = [t for t in selector.tags if t not in candidate.tags]
    return f"tags: lacks {', '.join(missing)}" if missing else None


def _family(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    if not selector.family or (facts.family and _any_glob(facts.family, selector.family)):
        return None
    return f"family: {facts.family or 'unknown'} is not {' or '.join(selector.family)}"


def _capabilities(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    missing = [c.value for c in selector.capability if c not in facts.capabilities]
    if not missing:
        return None
    has = ", ".join(sorted(c.value for c in facts.capabilities)) or "nothing"
    return f"capability: lacks {', '.join(missing)} (has {has})"


def _backend(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    wanted = [b.value for b in selector.backend]
    backend = backend_for(candidate, facts)
    if not wanted or backend in wanted:
        return None
    return f"backend: {backend} is not {' or '.join(wanted)}"


def _bits(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    if not selector.bits or (facts.bits is not None and facts.bits in selector.bits):
        return None
    shown = "unknown" if facts.bits is None else f"{facts.bits:g}"
    return f"bits: {shown} is not {' or '.join(str(b) for b in selector.bits)}"


def _size(selector: Selector, candidate: Candidate, facts: Facts) -> str | None:
    limit = selector.max_weights
    if limit is None:
        return None
    if facts.weights_bytes is None:
        return "max_weights: weights size unknown"
    if facts.weights_bytes > limit:
        return f"max_weights: {format_size(facts.weights_bytes)} > {format_size(limit)}"
    return None


def _memory(facts: Facts, budget: MemoryBudget) -> str | None:
    if budget.total_bytes <= 0:
        return None  # unknown machine memory: nothing to judge by
    if facts.memory_bytes is None:
        return "fits_memory: memory need unknown"
    if facts.memory_bytes > budget.limit_bytes:
        return (
            f"fits_memory: needs {format_size(facts.memory_bytes)}, budget "
            f"{format_size(budget.limit_bytes)}"
        )
    return None


def _any_glob(value: str, globs: Collection[str]) -> bool:
    return any(fnmatch.fnmatchcase(value, g) for g in globs)
