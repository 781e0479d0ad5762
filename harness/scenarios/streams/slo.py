"""What the streamed-load scenarios share beside the engine: the SLO thresholds a point is held
to (``slo:``), the marker every prompt starts with, and the least limit of one request."""

from __future__ import annotations

import difflib
from typing import Any

from pydantic import Field, model_validator

from harness.core.value_errors import value_error
from harness.scenarios.base import Params
from harness.scenarios.streams.stats import Slo

PROMPT_PREFIX_TOKENS = 4  # the marker, "a1b2c3-17: ", about
REQUEST_TIMEOUT_S = 300.0  # the least whole-answer limit of one request (the warm-up)


class SloParams(Params):
    """Thresholds each as a p90: a point meets its SLO when at least 90% of its finished
    requests are within each one; goodput counts the requests within all of them."""

    ttft_p90_s: float | None = Field(None, gt=0, description="time to first token, seconds")
    tpot_p90_s: float | None = Field(None, gt=0, description="time per output token, seconds")
    e2e_p90_s: float | None = Field(None, gt=0, description="end-to-end request time, seconds")

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        if isinstance(data, dict):
            known = list(cls.model_fields)
            for key in data:
                if key not in known:
                    close = difflib.get_close_matches(str(key), known, n=1)
                    hint = f"did you mean '{close[0]}'?" if close else f"use {', '.join(known)}"
                    raise value_error(f"unknown slo threshold '{key}'", hint)
        return data

    @model_validator(mode="after")
    def _one_set(self) -> SloParams:
        if self.thresholds().any:
            return self
        known = ", ".join(type(self).model_fields)
        raise value_error("an slo needs at least one threshold", f"set one of {known}")

    def thresholds(self) -> Slo:
        return Slo(self.ttft_p90_s, self.tpot_p90_s, self.e2e_p90_s)
