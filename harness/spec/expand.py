"""Expanding ``select:`` entries into ordinary model entries, at the selector's place.

Each chosen model becomes the entry a person would have written (``embedded:``, ``hub:`` or
``path:`` with its stable name), so case ids do not depend on how a model was found. A model
that the suite lists explicitly, or that an earlier selector chose, is not chosen twice. What
every selector chose and left out (with the reason) is kept for ``mlx-harness validate``; a
selector that chooses nothing is a warning, not an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends import BACKENDS
from harness.probe.installed import Stack, detect_stack
from harness.probe.machine import MemoryBudget, available_memory
from harness.probe.probe import ProbeError, probe_model
from harness.spec.candidates import Candidate, discover
from harness.spec.errors import SuiteError
from harness.spec.hub_cache import hub_cache_dir
from harness.spec.loaded import Chosen, LeftOut, Selection, SourcedModel
from harness.spec.resolve import ResolveError, resolve_model
from harness.spec.schema import Selector
from harness.spec.select import Facts, backend_for, facts_of, why_not


@dataclass(frozen=True)
class Expansion:
    models: tuple[SourcedModel, ...]
    selections: tuple[Selection, ...]
    errors: tuple[SuiteError, ...]
    warnings: tuple[SuiteError, ...]


@dataclass
class _Context:
    """Per-expansion memo (candidates per source, one probe per directory); never shared."""

    hub_cache: Path
    runnable: tuple[str, ...]
    budget: MemoryBudget | None = None
    stack: Stack | None = None
    facts: dict[Path, Facts | str] = field(default_factory=dict)

    def probe(self, path: Path) -> Facts | str:

        if path not in self.facts:
            if self.stack is None:
                self.stack = detect_stack()
            try:
                self.facts[path] = facts_of(probe_model(path, stack=self.stack))
            except ProbeError as exc:
                self.facts[path] = f"probe: {exc}"
        return self.facts[path]

    def memory(self) -> MemoryBudget:
        if self.budget is None:
            self.budget = available_memory()
        return self.budget


def expand_models(
    models: Sequence[SourcedModel],
    *,
    hub_cache: Path | None = None,
    budget: MemoryBudget | None = None,
    runnable: Sequence[str] | None = None,
) -> Expansion:
    """Replace every ``select:`` entry of ``models`` by the entries it chooses.

    ``hub_cache`` defaults to the environment's, ``budget`` to this machine's memory (read only
    when a selector asks ``fits_memory``), ``runnable`` to the registered backends.
    """

    if not any(m.entry.select for m in models):
        return Expansion(tuple(models), (), (), ())
    if hub_cache is None:
        hub_cache = hub_cache_dir()
    if runnable is None:
        runnable = BACKENDS.names()
    ctx = _Context(hub_cache, tuple(runnable), budget)
    taken = {path: f"listed as '{m.entry.key}'" for m, path in _explicit_paths(models)}
    out: list[SourcedModel] = []
    selections: list[Selection] = []
    errors: list[SuiteError] = []
    warnings: list[SuiteError] = []
    for sourced in models:
        selector = sourced.entry.select
        if selector is None:
            out.append(sourced)
            continue
        roots, missing = _roots(selector, sourced)
        errors.extend(missing)
        chosen, left_out = [], []
        where = f"{sourced.path}:{sourced.line}"
        for candidate in discover(selector.sources, roots, hub_cache=ctx.hub_cache):
            reason, facts = _judge(selector, candidate, ctx, taken)
            if reason is not None or facts is None:
                left_out.append(LeftOut(candidate.name, candidate.source, reason or "?"))
                continue
            backend = backend_for(candidate, facts)
            taken[candidate.path.resolve()] = f"chosen by the selector at {where}"
            chosen.append(Chosen(candidate.name, candidate.source, backend, facts))
            entry = candidate.entry(backend, sourced.entry.tags)
            out.append(SourcedModel(entry, sourced.path, sourced.line, sourced.column))
        selection = Selection(
            sourced.path, sourced.line, sourced.column, tuple(chosen), tuple(left_out)
        )
        selections.append(selection)
        if not chosen:
            warnings.append(_nothing_chosen(selection, selector))
    return Expansion(tuple(out), tuple(selections), tuple(errors), tuple(warnings))


def _judge(
    selector: Selector, candidate: Candidate, ctx: _Context, taken: dict[Path, str]
) -> tuple[str | None, Facts | None]:
    if candidate.unavailable:
        return candidate.unavailable, None
    already = taken.get(candidate.path.resolve())
    if already:
        return already, None
    facts = ctx.probe(candidate.path)
    if isinstance(facts, str):
        return facts, None
    budget = ctx.memory() if selector.fits_memory else None
    return why_not(selector, candidate, facts, budget=budget, runnable=ctx.runnable), facts


def _explicit_paths(models: Sequence[SourcedModel]) -> list[tuple[SourcedModel, Path]]:
    """Local directories of the explicitly listed models that resolve (others cannot collide)."""

    found = []
    for sourced in models:
        if sourced.entry.select is None:
            try:
                found.append((sourced, resolve_model(sourced.entry, sourced.path.parent).resolve()))
            except ResolveError:
                continue
    return found


def _roots(selector: Selector, sourced: SourcedModel) -> tuple[list[Path], list[SuiteError]]:
    roots, errors = [], []
    for raw in selector.roots:
        root = Path(raw).expanduser()
        root = root if root.is_absolute() else (sourced.path.parent / root).resolve()
        if root.is_dir():
            roots.append(root)
        else:
            errors.append(
                SuiteError(
                    str(sourced.path),
                    sourced.line,
                    sourced.column,
                    f"select root '{raw}' is not a directory (resolved to {root})",
                    "fix the path (relative to this file)",
                )
            )
    return roots, errors


def _nothing_chosen(selection: Selection, selector: Selector) -> SuiteError:
    sources = ", ".join(s.value for s in selector.sources)
    if not selection.left_out:
        message = f"warning: selector found no models at all (looked in {sources})"
        hint = "prepare embedded models (mlx-harness models prepare) or check HF_HUB_CACHE/roots"
    else:
        first = selection.left_out[0]
        message = (
            f"warning: selector chose none of {len(selection.left_out)} models "
            f"(e.g. {first.name}: {first.reason})"
        )
        hint = "see why each was left out: mlx-harness validate --expand"
    return SuiteError(str(selection.path), selection.line, selection.column, message, hint)
