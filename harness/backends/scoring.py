"""Next-token distributions of a loaded model, for quality measures (perplexity, agreement
with a reference model, KL divergence)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


@runtime_checkable
class Scoring(Protocol):
    """A loaded model that gives its next-token log-probabilities for a token sequence."""

    def next_token_logprobs(self, tokens: Sequence[int]) -> NDArray[np.float32]:
        """Shape (len(tokens), vocab): row ``i`` is log p(next token | tokens[: i + 1]),
        natural log, float32, computed in one forward pass without a cache."""
        ...
