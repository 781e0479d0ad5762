"""How the harness calls a TTS model's generate: greedy and streaming options where named."""

from __future__ import annotations

import numpy as np
import pytest

from harness.models.tts_generate import float_samples, generate_options


def _plain(text: str) -> None: ...


def _sampling(text: str, temperature: float = 0.7, verbose: bool = True) -> None: ...


def _streaming(
    text: str, temperature: float = 0.7, stream: bool = False, streaming_interval: float = 2.0
) -> None: ...


@pytest.mark.parametrize(
    ("generate", "options"),
    [
        (_plain, {}),
        (_sampling, {"temperature": 0.0, "verbose": False}),
        (_streaming, {"temperature": 0.0, "stream": True, "streaming_interval": 0.5}),
    ],
)
def test_generate_options_are_greedy_and_stream_where_named(
    generate: object, options: dict[str, object]
) -> None:
    assert generate_options(generate) == options


def test_float_samples_flattens_numpy_and_mlx() -> None:
    assert float_samples(np.ones((1, 3), np.float64)).tolist() == [1.0, 1.0, 1.0]
    mx = pytest.importorskip("mlx.core")
    out = float_samples(mx.array([[0.5, -0.5]], dtype=mx.float16))
    assert out.dtype == np.float32 and out.tolist() == [0.5, -0.5]
