"""Benchmarks of your own code around a real model, recorded in the harness's run and report.

    pytest examples/pytest_benchmark/ --benchmark-min-rounds=5

``mlx_model`` loads the model once for the whole session (through the harness's mlx-lm
backend); pytest-benchmark's ``benchmark`` times the code; at the end of the session each test
is a ``benchmark`` case in ``reports/<run>/run.jsonl`` and ``report.md`` (compare two runs with
``--baseline`` as for any suite). ``MODEL`` may be any embedded model, a model folder, or
``mlx_model("name", suite="suites/x.suite.yaml")``.
"""

from __future__ import annotations

import os

MODEL = os.environ.get("BENCH_MODEL", "smollm2-135m-instruct-f32")
PROMPT = "The quick brown fox jumps over the lazy dog. " * 4


def top_k_sampler(k: int, temperature: float):  # type: ignore[no-untyped-def]
    """A custom sampler: keep the k most likely tokens, sample among them."""
    import mlx.core as mx

    def sample(logprobs: mx.array) -> mx.array:
        kth = mx.sort(logprobs, axis=-1)[..., -k][..., None]
        masked = mx.where(logprobs < kth, -mx.inf, logprobs)
        return mx.random.categorical(masked / temperature)

    return sample


def test_custom_sampler_decode(benchmark, mlx_model):  # type: ignore[no-untyped-def]
    """Generate 8 tokens with a custom top-k sampler through mlx-lm's generate_step."""
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    loaded = mlx_model(MODEL)
    prompt = mx.array(loaded.tokenizer.encode(PROMPT))
    sampler = top_k_sampler(20, 0.8)
    mx.random.seed(0)

    def generate() -> list[int]:
        steps = generate_step(prompt, loaded.model, max_tokens=8, sampler=sampler)
        return [int(token) for token, _ in steps]

    tokens = benchmark(generate)
    assert len(tokens) == 8


def test_request_handler(benchmark, mlx_model):  # type: ignore[no-untyped-def]
    """A request handler: chat template, tokenize, 4 greedy tokens, detokenize."""
    loaded = mlx_model(MODEL).loaded  # the harness backend's model: chat_tokens, stream_tokens

    def handle(request: dict[str, str]) -> str:
        prompt = loaded.chat_tokens([{"role": "user", "content": request["content"]}])
        return str(loaded.decode(list(loaded.stream_tokens(prompt, max_tokens=4))))

    reply = benchmark(handle, {"content": "Say hello."})
    assert isinstance(reply, str)
