"""Pin sets: named lists of exact package pins a suite can run under (``pin_sets:``).

Each pin set is one isolated environment (``mlx-harness run SUITE --pin-set NAME``)::

    pin_sets:
      - {name: lm-0.31.3, pins: ["mlx-lm==0.31.3"]}
      - {name: lm-0.32.2, pins: ["mlx-lm==0.32.2", "mlx==0.32.4"]}

A pin is exact (``name==version``): the environment is cached by its pins, so a range would
not say what ran.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict, Field, field_validator

from harness.value_errors import value_error

PIN_EXAMPLE = 'e.g. pins: ["mlx-lm==0.31.3", "mlx==0.32.4"]'


def exact_pin(text: str) -> tuple[str, str]:
    """``"mlx-lm==0.31.3"`` -> ``("mlx-lm", "0.31.3")``; ValueError (message; fix) otherwise."""
    try:
        req = Requirement(text)
    except InvalidRequirement as exc:
        raise ValueError(f"pin {text!r} is not a requirement ({exc})") from None
    specs = list(req.specifier)
    if req.url or req.marker or req.extras or len(specs) != 1 or specs[0].operator != "==":
        raise ValueError(f"pin {text!r} is not exact; write name==version")
    if "*" in specs[0].version:
        raise ValueError(f"pin {text!r} has a wildcard; write the full version")
    return req.name, specs[0].version


class PinSet(BaseModel):
    """A named list of exact pins; the harness builds one environment per pin set."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(
        pattern=r"^[A-Za-z0-9_.+-]{1,64}$",
        description="used in run ids and reports: letters, digits, _ . + -",
    )
    pins: list[str] = Field(
        min_length=1, description='exact pins, e.g. ["mlx-lm==0.31.3", "mlx==0.32.4"]'
    )

    @field_validator("pins")
    @classmethod
    def _exact(cls, pins: list[str]) -> list[str]:
        seen: set[str] = set()
        for pin in pins:
            try:
                name, _ = exact_pin(pin)
            except ValueError as exc:
                raise value_error(str(exc), PIN_EXAMPLE) from None
            key = canonicalize_name(name)
            if key in seen:
                raise value_error(f"package '{name}' is pinned twice", "keep one pin per package")
            seen.add(key)
        return pins


def unique_names(pin_sets: Sequence[PinSet]) -> None:
    """A value error naming the first pin-set name given twice."""
    seen: set[str] = set()
    for pin_set in pin_sets:
        if pin_set.name in seen:
            raise value_error(f"pin set '{pin_set.name}' is named twice", "give each a new name")
        seen.add(pin_set.name)


class PinSetsInvalid(ValueError):
    """A suite's ``pin_sets:`` that cannot be read: one line, ``file:line:col: what; fix``."""


def read_pin_sets(path: Path) -> list[PinSet]:
    """Only the ``pin_sets:`` of a suite file, without validating the rest: the rest (its
    backends, say) may need the pin set's own environment to make sense."""
    from pydantic import TypeAdapter, ValidationError

    from harness.spec.errors import one_line
    from harness.yamlpos import YamlSyntaxError, load_located

    try:
        located = load_located(path.read_text())
    except (OSError, UnicodeDecodeError, YamlSyntaxError) as exc:
        raise PinSetsInvalid(
            one_line(f"{path}: cannot read ({exc}); mlx-harness validate it")
        ) from None
    data = located.data.get("pin_sets") if isinstance(located.data, dict) else None
    if data is None:
        return []
    try:
        return TypeAdapter(list[PinSet]).validate_python(data)
    except ValidationError as exc:
        error = exc.errors(include_url=False)[0]
        loc = ("pin_sets", *error["loc"])
        line, column = located.position(loc)
        hint = (error.get("ctx") or {}).get("hint") or PIN_EXAMPLE
        where = ".".join(map(str, loc))
        text = f"{path}:{line}:{column}: {where}: {error['msg']}; {hint}"
        raise PinSetsInvalid(one_line(text)) from None
