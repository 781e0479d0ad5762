"""Read a suite file (and its includes) into a validated :class:`LoadedSuite`.

Every problem becomes a :class:`SuiteError` naming file:line:column, what is wrong and the fix.
"""

from __future__ import annotations

import dataclasses
import difflib
import hashlib
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from harness.core.yamlpos import Located, YamlSyntaxError, load_located
from harness.spec.checks import check_suite, hub_warnings
from harness.spec.errors import SuiteError, SuiteInvalid, describe_value, shorten
from harness.spec.expand import expand_models
from harness.spec.loaded import LoadedSuite, SourcedExpect, SourcedModel, suite_name
from harness.spec.power import repeat_warnings  # repeats too few for compare to decide
from harness.spec.schema import IncludeFile, Suite
from harness.spec.suite_text import read_suite_text
from harness.spec.tokenizer_warnings import tokenizer_warnings  # url: models counted by chunks

M = TypeVar("M", bound=BaseModel)


def _describe(
    error: dict[str, Any], model: type[BaseModel], loc: tuple[Any, ...]
) -> tuple[str, str]:
    kind = error["type"]
    where = ".".join(shorten(str(p)) for p in loc) or "suite"
    if kind == "extra_forbidden":
        key = shorten(str(loc[-1]))
        parent = ".".join(shorten(str(p)) for p in loc[:-1]) or "the suite"
        allowed = _allowed_keys(model, loc[:-1])
        close = difflib.get_close_matches(key, allowed, n=1)
        hint = f"did you mean '{close[0]}'?" if close else f"allowed keys: {', '.join(allowed)}"
        return f"unknown key '{key}' in {parent}", hint
    if kind == "missing":
        return f"missing required key '{loc[-1]}'", f"add '{loc[-1]}:' here"
    return describe_value(where, str(loc[-1]) if loc else "", error)


def _allowed_keys(model: type[BaseModel], loc: tuple[Any, ...]) -> list[str]:
    """Field names of the pydantic model found by walking ``loc`` from ``model``."""
    current: Any = model
    for part in loc:
        if isinstance(part, int):
            continue
        field_info = getattr(current, "model_fields", {}).get(part)
        if field_info is None:
            return []
        annotation = field_info.annotation
        for arg in getattr(annotation, "__args__", ()) or (annotation,):
            if isinstance(arg, type) and issubclass(arg, BaseModel):
                current = arg
                break
            inner = getattr(arg, "__args__", ())
            found = [a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)]
            if found:
                current = found[0]
                break
        else:
            if isinstance(annotation, type) and issubclass(annotation, BaseModel):
                current = annotation
    return sorted(getattr(current, "model_fields", {}))


def _validate(model: type[M], located: Located, path: Path) -> tuple[M | None, list[SuiteError]]:
    data = located.data if located.data is not None else {}
    if not isinstance(data, dict):
        got = "a list" if isinstance(data, list) else f"the single value {shorten(repr(data))}"
        start = "schema_version: 1" if model is Suite else "models: or expect:"
        return None, [
            SuiteError(
                str(path),
                *located.position(()),
                f"the file must be a YAML mapping (key: value lines), got {got}",
                f"start with '{start}'",
            )
        ]
    try:
        return model.model_validate(data), []
    except ValidationError as exc:
        errors = []
        for error in exc.errors():
            loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
            line, col = located.position(loc, prefer_key=error["type"] == "extra_forbidden")
            message, hint = _describe(dict(error), model, loc)
            errors.append(SuiteError(str(path), line, col, message, hint))
        return None, errors


def _read(path: Path) -> tuple[Located | None, list[SuiteError]]:
    text, error = read_suite_text(path)
    if text is None:
        return None, [error] if error else []
    try:
        return load_located(text), []
    except YamlSyntaxError as exc:
        return None, [
            SuiteError(str(path), p.line, p.column, f"invalid YAML: {p.message}", p.hint)
            for p in exc.problems
        ]


def load_suite(
    path: Path, *, hub_cache: Path | None = None, require_prepared: bool = True
) -> LoadedSuite:
    """Load and validate ``path``, expanding ``select:`` entries; raise :class:`SuiteInvalid`
    listing every error. ``hub_cache`` defaults to the environment's Hugging Face cache;
    ``require_prepared=False`` lets embedded models be not prepared yet."""

    located, errors = _read(path)
    if located is None:
        raise SuiteInvalid(errors)
    suite, errors = _validate(Suite, located, path)
    if suite is None:
        raise SuiteInvalid(errors)
    models = [
        SourcedModel(m, path, *located.position(("models", i))) for i, m in enumerate(suite.models)
    ]
    expect = [
        SourcedExpect(e, path, *located.position(("expect", i))) for i, e in enumerate(suite.expect)
    ]
    for i, include in enumerate(suite.include):
        inc_path = (path.parent / include).resolve()
        line, col = located.position(("include", i))
        if not inc_path.is_file():
            errors.append(
                SuiteError(
                    str(path),
                    line,
                    col,
                    f"included file '{include}' not found",
                    f"looked for {inc_path}",
                )
            )
            continue
        inc_located, inc_errors = _read(inc_path)
        errors.extend(inc_errors)
        if inc_located is None:
            continue
        included, inc_errors = _validate(IncludeFile, inc_located, inc_path)
        errors.extend(inc_errors)
        if included is None:
            continue
        models.extend(
            SourcedModel(m, inc_path, *inc_located.position(("models", j)))
            for j, m in enumerate(included.models)
        )
        expect.extend(
            SourcedExpect(e, inc_path, *inc_located.position(("expect", j)))
            for j, e in enumerate(included.expect)
        )
    expansion = expand_models(models, hub_cache=hub_cache)
    errors.extend(expansion.errors)
    loaded = LoadedSuite(
        path=path,
        suite=suite,
        name=suite.name or suite_name(path),
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        located=located,
        models=expansion.models,
        expect=tuple(expect),
        warnings=expansion.warnings,
        selections=expansion.selections,
    )
    errors.extend(check_suite(loaded, require_prepared=require_prepared))
    if errors:
        raise SuiteInvalid(errors)
    more = (
        *repeat_warnings(loaded),
        *hub_warnings(loaded, hub_cache),
        *tokenizer_warnings(loaded, hub_cache),
    )
    return dataclasses.replace(loaded, warnings=(*loaded.warnings, *more))
