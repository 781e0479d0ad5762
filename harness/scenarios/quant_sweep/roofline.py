"""The hardware share of a quantised model's runs: its decode tok/s against the bandwidth-bound
ceiling its own bytes per token give (quantised weights read each step, so the ceiling rises as
the bits fall), its prefill against the compute-bound one, as ``throughput`` computes them
(:mod:`harness.backends.decode_traffic`, ceilings from :mod:`harness.backends.bandwidth`)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from harness.backends.bandwidth import Bandwidth
from harness.backends.decode_traffic import (
    ReportsTraffic,
    ceiling_tps,
    mean_decode_context,
    share_over_limit,
)


@dataclass(frozen=True)
class Ceilings:
    """The two ceilings (tok/s, NaN when unknown) and the facts behind them."""

    decode_tps: float
    prefill_tps: float
    facts: dict[str, object] = field(default_factory=dict)

    def shares(self, decode: list[float], prefill: list[float]) -> dict[str, list[float]]:
        """Each run's share of each ceiling (``decode``, ``prefill``); a ceiling some run
        passed is invalid, and its shares are left out."""
        found = {
            "decode": _over(decode, self.decode_tps),
            "prefill": _over(prefill, self.prefill_tps),
        }
        return {kind: values for kind, values in found.items() if values}


def _over(values: list[float], ceiling: float) -> list[float]:
    if not math.isfinite(ceiling) or ceiling <= 0:
        return []
    shares = [v / ceiling for v in values]
    return [] if share_over_limit(shares) is not None else shares


def ceilings(
    model: object, found: Bandwidth | None, prompt_tokens: int, gen_tokens: int
) -> Ceilings:
    """``model``'s ceilings on the machine ``found`` describes (NaN: not available, with why)."""
    nan = float("nan")
    if not isinstance(model, ReportsTraffic):
        return Ceilings(
            nan, nan, {"roofline": "not available: the backend does not report traffic"}
        )
    if found is None:
        return Ceilings(nan, nan, {"roofline": "not available: mlx is not loaded in the worker"})
    traffic = model.decode_traffic()
    per_token = traffic.bytes_per_token(mean_decode_context(0, prompt_tokens, gen_tokens))
    return Ceilings(
        ceiling_tps(found.bytes_per_s, per_token),
        ceiling_tps(found.flops_per_s, traffic.prefill_flops_per_token),
        {
            "bytes_per_token": per_token,
            "decode_ceiling_tps": ceiling_tps(found.bytes_per_s, per_token),
            "prefill_ceiling_tps": ceiling_tps(found.flops_per_s, traffic.prefill_flops_per_token),
            "bandwidth_bytes_per_s": found.bytes_per_s,
            "flops_per_s": found.flops_per_s,
        },
    )
