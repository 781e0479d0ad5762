"""Bytes a decode step reads, and the ceiling they imply: pure arithmetic, table-driven."""

from __future__ import annotations

import math

import pytest

from harness.backends.decode_traffic import (
    CacheLayerTraffic,
    DecodeTraffic,
    ceiling_tps,
    mean_decode_context,
    share_over_limit,
)

FULL = CacheLayerTraffic(bytes_per_token=100.0)
WINDOW_8 = CacheLayerTraffic(bytes_per_token=10.0, window=8)


@pytest.mark.parametrize(
    ("traffic", "context", "expected"),
    [
        (DecodeTraffic(1000), 50, 1000),  # no cache layers: weights only
        (DecodeTraffic(1000, (FULL,)), 0, 1000),
        (DecodeTraffic(1000, (FULL, FULL)), 4, 1000 + 2 * 400),
        (DecodeTraffic(1000, (WINDOW_8,)), 4, 1000 + 40),  # under the window
        (DecodeTraffic(1000, (WINDOW_8,)), 100, 1000 + 80),  # capped at the window
        (DecodeTraffic(1000, (FULL, WINDOW_8), fixed_state_bytes=7), 10, 1000 + 1000 + 80 + 7),
    ],
)
def test_bytes_per_token(traffic: DecodeTraffic, context: float, expected: float) -> None:
    assert traffic.bytes_per_token(context) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("depth", "prompt", "generated", "expected"),
    [
        (0, 64, 2, 65.0),  # one decode step, with 65 tokens cached
        (0, 64, 33, 64 + 16.5),  # steps 1..32: mean 16.5
        (512, 64, 33, 512 + 64 + 16.5),
        (0, 10, 1, 11.0),  # no decode step: the first one's context
    ],
)
def test_mean_decode_context(depth: int, prompt: int, generated: int, expected: float) -> None:
    assert mean_decode_context(depth, prompt, generated) == pytest.approx(expected)


def test_ceiling() -> None:
    assert ceiling_tps(10e9, 1e8) == pytest.approx(100.0)
    assert math.isnan(ceiling_tps(10e9, 0))
    assert math.isnan(ceiling_tps(0.0, 1e8))  # a rate not measured


def test_prefill_flops() -> None:
    assert DecodeTraffic(1000, matmul_params=135_000_000).prefill_flops_per_token == 2.7e8
    assert DecodeTraffic(1000).prefill_flops_per_token == 0


@pytest.mark.parametrize(
    ("shares", "over"),
    [
        ([], None),
        ([0.25, 0.3], None),
        ([1.0], None),  # at the ceiling is not past it
        ([0.9, 1.07, 1.15], 1.15),
        ([math.nan, 1.02], 1.02),  # a NaN share says nothing
        ([math.inf], None),
    ],
)
def test_a_share_past_the_hardware_ceiling(shares: list[float], over: float | None) -> None:
    assert share_over_limit(shares) == over
