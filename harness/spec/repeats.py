"""The ``repeats`` field: a fixed count, or ``auto`` (repeat until the median is known well).

Written three ways::

    repeats: 5                       # exactly 5 measured runs
    repeats: auto                    # adaptive, with the defaults below
    repeats: {auto: {min: 6, max: 20, rel_ci: 0.02, budget_s: 120}}

``auto`` repeats a case until the median of each of its headline metrics (the scenario's
higher-is-better tokens/s figures, e.g. prefill and decode) has a 95% confidence interval whose
full width is at most ``rel_ci`` of the median, or ``max`` runs were taken, or ``budget_s``
seconds of the scenario's own time were spent; never fewer than ``min`` (the order-statistic
CI of a median needs 6 samples to exist at 95%). The record says why it stopped.
"""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema, model_validator

from harness.core.types import AutoRepeats
from harness.core.value_errors import value_error

AUTO = "auto"


class AutoRepeatsSpec(BaseModel):
    """The settings of ``repeats: auto``."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)

    min: int = Field(6, ge=2, description="measured runs before the first look at the CI")
    max: int = Field(30, ge=2, description="most measured runs")
    rel_ci: float = Field(
        0.02, gt=0, lt=1, description="target: full width of the median's 95% CI / median"
    )
    budget_s: float = Field(120.0, gt=0, description="seconds of measuring after which it stops")

    @model_validator(mode="after")
    def _ordered(self) -> AutoRepeatsSpec:
        if self.max < self.min:
            raise value_error(
                f"repeats auto: max {self.max} is below min {self.min}",
                "make max at least min",
            )
        return self

    def settings(self) -> AutoRepeats:
        return AutoRepeats(self.min, self.max, self.rel_ci, self.budget_s)


def _read(value: Any) -> Any:
    """``auto`` and ``{auto: {...}}`` as :class:`AutoRepeatsSpec`; a number stays a number."""
    if isinstance(value, str) and value.strip().lower() == AUTO:
        return AutoRepeatsSpec.model_validate({})
    if isinstance(value, dict):
        if set(value) != {AUTO}:
            raise value_error(
                f"repeats takes a number, 'auto' or {{auto: {{...}}}}, not keys {sorted(value)}",
                "write e.g. repeats: {auto: {min: 6, max: 20, rel_ci: 0.02, budget_s: 120}}",
            )
        return AutoRepeatsSpec.model_validate(value[AUTO] or {})
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool) and value < 1:
        raise value_error(f"repeats must be at least 1, got {value}", "e.g. repeats: 3")
    if isinstance(value, str | bool | float):
        raise value_error(
            f"expected a whole number, got {value!r}",
            "e.g. repeats: 3",  # the hint every whole-number field gives (or: repeats: auto)
        )
    return value


_SCHEMA = {
    "anyOf": [
        {"type": "integer", "minimum": 1},
        {"const": AUTO},
        {
            "type": "object",
            "properties": {"auto": AutoRepeatsSpec.model_json_schema()},
            "required": ["auto"],
            "additionalProperties": False,
        },
    ],
    "description": "measured runs per case: a number, 'auto', or {auto: {min, max, rel_ci, "
    "budget_s}} (repeat until the median's 95% CI is narrower than rel_ci)",
}

Repeats = Annotated[
    Annotated[int, Field(ge=1)] | AutoRepeatsSpec,
    BeforeValidator(_read),
    WithJsonSchema(_SCHEMA),
]


def resolved(value: int | AutoRepeatsSpec) -> tuple[int, AutoRepeats | None]:
    """A case's first batch of repeats and its auto settings (None: a fixed count)."""
    if isinstance(value, AutoRepeatsSpec):
        return value.min, value.settings()
    return value, None


def least(value: int | AutoRepeatsSpec) -> int:
    """The fewest measured runs ``value`` gives (auto: its ``min``)."""
    return value.min if isinstance(value, AutoRepeatsSpec) else value
