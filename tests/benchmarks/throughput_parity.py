"""Benchmark (not a test): our ``throughput`` scenario vs mlx-lm's own ``stream_generate`` stats.

Same model, same prompt tokens, same lengths, one process, runs interleaved so drift hits both
sides alike. Prints medians and the ratio ours/theirs for prefill and decode tokens/s.

    python tests/benchmarks/throughput_parity.py --model zoo/llama --prompt-tokens 128 512
    python tests/benchmarks/throughput_parity.py --model smollm2-135m-instruct-f32

Run it with OpenBLAS preloaded on Linux, as the harness's workers do:
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0 python tests/benchmarks/...
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path


def resolve(name: str) -> Path:
    from harness.models.catalog import find_embedded

    model = find_embedded(name)
    if model is not None:
        return model.path
    return Path(name)


def theirs(model, tokenizer, prompt: list[int], gen_tokens: int) -> tuple[float, float]:  # type: ignore[no-untyped-def]
    from mlx_lm import stream_generate

    last = None
    for response in stream_generate(model, tokenizer, prompt, max_tokens=gen_tokens):
        last = response
    assert last is not None and last.generation_tokens == gen_tokens, "EOS stopped mlx-lm early"
    return last.prompt_tps, last.generation_tps


def main() -> None:
    from harness.backends.mlx_lm import BACKEND
    from harness.runner.device import blas_in_use
    from harness.scenarios.base import ScenarioContext
    from harness.scenarios.prompts import text_prompt
    from harness.scenarios.throughput import _figures, timed_run

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="zoo/llama")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    path = resolve(args.model)
    loaded, info = BACKEND.load(path)
    tokenizer = loaded.tokenizer  # type: ignore[attr-defined]
    tokenizer._eos_token_ids = set()  # as mlx_lm.benchmark does: never stop early
    ctx = ScenarioContext(
        loaded, info, repeats=args.repeats, warmup=1, reload=lambda: (loaded, info)
    )
    print(f"model {path} | device {info.device} | blas {blas_in_use()}")
    print(
        f"{'pp':>6} {'tg':>5} | {'prefill ours':>12} {'mlx-lm':>9} {'ratio':>6} | "
        f"{'decode ours':>11} {'mlx-lm':>9} {'ratio':>6}"
    )
    for pp in args.prompt_tokens:
        prompt = text_prompt(loaded, pp)
        timed_run(ctx, prompt, args.gen_tokens, True)  # warm-up, both paths share the kernels
        theirs(loaded.model, tokenizer, prompt, args.gen_tokens)  # type: ignore[attr-defined]
        ours_p, ours_d, their_p, their_d = [], [], [], []
        for _ in range(args.repeats):
            figures = _figures(timed_run(ctx, prompt, args.gen_tokens, True), len(prompt))
            ours_p.append(figures[0])
            ours_d.append(figures[1])
            p, d = theirs(loaded.model, tokenizer, prompt, args.gen_tokens)  # type: ignore[attr-defined]
            their_p.append(p)
            their_d.append(d)
        op, od = statistics.median(ours_p), statistics.median(ours_d)
        tp, td = statistics.median(their_p), statistics.median(their_d)
        print(
            f"{pp:>6} {args.gen_tokens:>5} | {op:>12.1f} {tp:>9.1f} {op / tp:>6.3f} | "
            f"{od:>11.1f} {td:>9.1f} {od / td:>6.3f}"
        )


if __name__ == "__main__":
    main()
