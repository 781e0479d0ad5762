"""One run's log-probabilities against a reference run's: KL divergence, where greedy output
parts, and the two speeds; shared by ``quality``, ``kv_sweep`` and ``quant_sweep``."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    from harness.backends.kv_runs import KVRun


def kl_divergence(model: NDArray[np.float32], reference: NDArray[np.float32]) -> float:
    """Mean over rows of KL(reference || model), both given as log-probabilities (nats)."""
    import numpy as np

    ref = reference.astype(np.float64)
    per_row = np.sum(np.exp(ref) * (ref - model.astype(np.float64)), axis=-1)
    return float(np.mean(per_row))


@dataclass(frozen=True)
class Quality:
    """The setting's run against the reference's, position by position."""

    first_token_agreement: float
    kl: float
    divergence_token: int

    @staticmethod
    def of(reference: KVRun, run: KVRun) -> Quality:
        at = divergence(reference.tokens, run.logprobs)
        return Quality(1.0 if at > 0 else 0.0, kl_divergence(run.logprobs, reference.logprobs), at)


def divergence(reference: tuple[int, ...], logprobs: NDArray[np.float32]) -> int:
    """The first position whose most likely token is not the reference's, or ``len(reference)``."""
    import numpy as np

    greedy = np.argmax(logprobs, axis=-1).tolist() if len(logprobs) else []
    for index, (ours, theirs) in enumerate(zip(greedy, reference, strict=False)):
        if ours != theirs:
            return index
    return len(reference)


def speeds(run: KVRun, context_tokens: int) -> tuple[float, float]:
    """(prefill tok/s, decode tok/s) of one run, as ``throughput`` defines them."""
    stamps = run.token_times_s
    if not stamps:
        return math.nan, math.nan
    decode = (len(stamps) - 1) / (stamps[-1] - stamps[0]) if len(stamps) > 1 else math.nan
    return context_tokens / stamps[0], decode
