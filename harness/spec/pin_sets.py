"""Pin sets: named lists of exact package pins a suite can run under (``pin_sets:``).

Each pin set is one isolated environment (``mlx-harness run SUITE --pin-set NAME``)::

    pin_sets:
      - {name: lm-0.31.3, pins: ["mlx-lm==0.31.3"]}
      - {name: lm-0.32.2, pins: ["mlx-lm==0.32.2", "mlx==0.32.4"]}

A pin is exact (``name==version``): the environment is cached by its pins, so a range would
not say what ran.

Two pin sets follow something instead of listing pins (``track:``)::

      - {name: locked, track: lock, extras: [all]}    # exactly the harness's uv.lock
      - {name: latest, track: latest, extras: [all]}  # the newest release of everything

``lock`` is the set the harness's own tests run on; ``latest`` is resolved anew when the run
starts (its pins, if any, still win), so a nightly run of both shows what the newest upstream
releases change as cells of the pin-set comparison, with the versions named. ``extras`` adds the
harness's optional dependencies (``vlm``, ``audio``, ``all``, ...) to any pin set's environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from harness.core.value_errors import value_error

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
        default_factory=list, description='exact pins, e.g. ["mlx-lm==0.31.3", "mlx==0.32.4"]'
    )
    track: Literal["lock", "latest"] | None = Field(
        None,
        description="lock: exactly the harness's uv.lock (its tested set); latest: the newest "
        "release of every dependency, resolved when the run starts (pins still win)",
    )
    extras: list[Literal["vlm", "audio", "all", "benchmark", "parquet", "dev"]] = Field(
        default_factory=list,
        description="the harness's extras to install too, e.g. [all] for mlx-vlm and mlx-audio",
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

    @model_validator(mode="after")
    def _pins_or_track(self) -> PinSet:
        if self.track is None and not self.pins:
            raise value_error(
                f"pin set '{self.name}' has no pins",
                f"{PIN_EXAMPLE}, or track: lock | latest",
            )
        if self.track == "lock" and self.pins:
            raise value_error(
                f"pin set '{self.name}' tracks the lock and has pins",
                "drop the pins (the lock decides every version), or use track: latest",
            )
        return self


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

    from harness.core.yamlpos import YamlSyntaxError, load_located
    from harness.spec.errors import one_line

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
