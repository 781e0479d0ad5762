"""Checks that need more than the schema: names that must exist, params, gates, model paths."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from harness.backends import BACKENDS
from harness.models.catalog import find_embedded
from harness.scenarios import SCENARIOS
from harness.scenarios.specs import all_specs
from harness.spec.errors import SuiteError, describe_value
from harness.spec.fields import names_model
from harness.spec.gates import GateSyntaxError, parse_gate
from harness.spec.loaded import LoadedSuite
from harness.spec.plan import case_name, sweep_points
from harness.spec.resolve import ResolveError, resolve_model


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f"did you mean '{close[0]}'?" if close else "known: " + ", ".join(sorted(known))


def hub_warnings(loaded: LoadedSuite, hub_cache: Path | None = None) -> tuple[SuiteError, ...]:
    """One warning per ``hub:`` model that is not in the local cache while downloads are off:
    its cases will be skipped (and a run of nothing but those fails by the exit rules)."""
    from harness.spec.hub_cache import cached_near, hub_cache_dir, is_cached

    if loaded.suite.allow_download:
        return ()
    cache = hub_cache if hub_cache is not None else hub_cache_dir()
    warnings = []
    for sourced in loaded.models:
        repo = sourced.entry.hub
        if not repo or is_cached(repo, cache):
            continue
        near = cached_near(repo, cache)
        hint = f"did you mean '{near}'?" if near else f"download it first (hf download {repo})"
        warnings.append(
            SuiteError(
                str(sourced.path),
                sourced.line,
                sourced.column,
                f"warning: hub model '{repo}' is not in the local Hugging Face cache ({cache}); "
                "its cases will be skipped",
                hint,
            )
        )
    return tuple(warnings)


def check_suite(loaded: LoadedSuite, *, require_prepared: bool = True) -> list[SuiteError]:
    """Every error of ``loaded`` past its schema. ``require_prepared=False``: an embedded
    model that exists but is not prepared yet is no error (``models prepare --suite`` reads
    the suite to prepare them)."""

    path = str(loaded.path)
    pos = loaded.located.position
    errors: list[SuiteError] = []

    keys: dict[str, int] = {}
    for sourced in loaded.models:
        entry, where = sourced.entry, str(sourced.path)
        if entry.key in keys:
            errors.append(
                SuiteError(
                    where,
                    sourced.line,
                    sourced.column,
                    f"model name '{entry.key}' is used twice",
                    "give one of them a distinct 'name:'",
                )
            )
        keys[entry.key] = sourced.line
        if entry.backend_name not in BACKENDS:
            errors.append(
                SuiteError(
                    where,
                    sourced.line,
                    sourced.column,
                    f"unknown backend '{entry.backend_name}'",
                    _did_you_mean(entry.backend_name, BACKENDS.names()),
                )
            )
        if entry.hub or (entry.url is not None and not (entry.path or entry.embedded)):
            continue  # an uncached hub model is a skip at run time, not a suite error
        if not require_prepared and entry.embedded and find_embedded(entry.embedded) is not None:
            continue
        try:
            resolve_model(entry, sourced.path.parent)
        except ResolveError as exc:
            errors.append(SuiteError(where, sourced.line, sourced.column, exc.message, exc.hint))

    model_names = list(keys)
    specs = all_specs()
    for i, scenario in enumerate(loaded.suite.scenarios):
        if scenario.scenario not in SCENARIOS:
            line, col = pos(("scenarios", i, "scenario"))
            errors.append(
                SuiteError(
                    path,
                    line,
                    col,
                    f"unknown scenario '{scenario.scenario}'",
                    SCENARIOS.hint(scenario.scenario),
                )
            )
            continue
        errors.extend(_check_params(loaded, i, scenario.scenario, scenario.params, scenario.sweep))
        for j, name in enumerate(scenario.models or []):
            # a glob may match nothing (a selector found no model); a plain name must exist
            if not any(ch in name for ch in "*?[") and name not in keys:
                line, col = pos(("scenarios", i, "models", j))
                errors.append(
                    SuiteError(
                        path, line, col, f"unknown model '{name}'", _did_you_mean(name, model_names)
                    )
                )
        for metric, expression in scenario.gates.items():
            errors.extend(
                _check_gate(loaded, ("scenarios", i, "gates", metric), metric, expression, specs)
            )
    for metric, expression in loaded.suite.gates.items():
        errors.extend(_check_gate(loaded, ("gates", metric), metric, expression, specs))
    errors.extend(_check_duplicate_ids(loaded, model_names))
    side = loaded.suite.side_by_side
    if side is not None and side.reference not in keys:
        line, col = pos(("side_by_side", "reference"))
        errors.append(
            SuiteError(
                path,
                line,
                col,
                f"side_by_side.reference names unknown model '{side.reference}'",
                _did_you_mean(side.reference, model_names),
            )
        )
    for i, expect in enumerate(loaded.suite.expect):
        if not any(ch in expect.model for ch in "*?[") and expect.model not in keys:
            line, col = pos(("expect", i, "model"))
            errors.append(
                SuiteError(
                    path,
                    line,
                    col,
                    f"expect names unknown model '{expect.model}'",
                    _did_you_mean(expect.model, model_names),
                )
            )
    return errors


def _check_params(
    loaded: LoadedSuite,
    index: int,
    scenario: str,
    params: dict[str, Any],
    sweep: dict[str, list[Any]],
) -> list[SuiteError]:

    model = SCENARIOS.get(scenario).params_model
    allowed = sorted(model.model_fields)
    path = str(loaded.path)
    pos = loaded.located.position
    errors: list[SuiteError] = []
    points: list[tuple[tuple[str | int, ...], dict[str, Any]]] = [(("params",), dict(params))]
    for key, values in sweep.items():
        for j, value in enumerate(values):
            points.append((("sweep", key, j), {**params, key: value}))
    seen: set[str] = set()
    for where, candidate in points:
        try:
            model.model_validate(candidate)
        except ValidationError as exc:
            for error in exc.errors():
                key = str(error["loc"][0]) if error["loc"] else ""
                loc = ("scenarios", index, *where)
                if where == ("params",):
                    loc = (*loc, key)
                elif key not in sweep:
                    continue  # reported once, at params
                if error["type"] == "extra_forbidden":
                    text = f"unknown parameter '{key}' for scenario '{scenario}'"
                    hint = _did_you_mean(key, allowed)
                else:
                    text, hint = describe_value(f"parameter '{key}' of '{scenario}'", key, error)
                if text in seen:
                    continue
                seen.add(text)
                line, col = pos(loc, prefer_key=error["type"] == "extra_forbidden")
                errors.append(SuiteError(path, line, col, text, hint))
    return errors


def _check_gate(
    loaded: LoadedSuite,
    loc: tuple[str | int, ...],
    metric: str,
    expression: str,
    specs: Mapping[str, Any],
) -> list[SuiteError]:
    path = str(loaded.path)
    errors: list[SuiteError] = []
    if metric not in specs:
        line, col = loaded.located.position(loc, prefer_key=True)
        errors.append(
            SuiteError(
                path,
                line,
                col,
                f"unknown metric '{metric}' in gates",
                _did_you_mean(metric, list(specs)),
            )
        )
    try:
        parse_gate(metric, expression)
    except GateSyntaxError as exc:
        line, col = loaded.located.position(loc)
        errors.append(
            SuiteError(path, line, col, str(exc).split(";")[0], str(exc).split("; ", 1)[-1])
        )
    return errors


def _check_duplicate_ids(loaded: LoadedSuite, model_names: list[str]) -> list[SuiteError]:
    """Two scenario entries that would plan the same case id for one model."""

    seen: dict[tuple[str, str], int] = {}
    errors: list[SuiteError] = []
    for i, entry in enumerate(loaded.suite.scenarios):
        for model in model_names:
            if not names_model(entry.models, model):
                continue
            for point in sweep_points(entry):
                key = (model, case_name(entry.id or entry.scenario, point))
                if key in seen and seen[key] != i:
                    line, col = loaded.located.position(("scenarios", i))
                    errors.append(
                        SuiteError(
                            str(loaded.path),
                            line,
                            col,
                            f"case '{key[1]}' of model '{model}' is also planned by scenario entry "
                            f"{seen[key] + 1}",
                            "give one of the two entries an 'id:'",
                        )
                    )
                    return errors
                seen[key] = i
    return errors
