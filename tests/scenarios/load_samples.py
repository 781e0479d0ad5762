"""Planted requests of a load point, for the statistics and metrics tests."""

from __future__ import annotations

from harness.scenarios.streams.stats import RequestSample


def sample(
    i: int, ttft: float, e2e: float, tokens: int = 11, error: str | None = None
) -> RequestSample:
    return RequestSample(i, 0.1 * i, error, ttft, e2e, tokens, (0.01,) * max(tokens - 1, 0))


# 20 planted requests: TTFT 0.05 s ... 1.0 s, e2e = TTFT + 1 s, 11 tokens; 2 failed
PLANTED = [sample(i, 0.05 * (i + 1), 0.05 * (i + 1) + 1.0) for i in range(20)] + [
    sample(20, 0.0, 0.5, 0, error="HTTP 500: boom"),
    sample(21, 0.0, 0.5, 0, error="HTTP 500: boom"),
]
