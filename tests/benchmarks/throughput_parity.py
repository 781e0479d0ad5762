"""Benchmark (not a test): our ``throughput`` scenario vs mlx-lm's own ``stream_generate`` stats.

Same model, same prompt tokens, same lengths, one process. Runs alternate in ABBA order
(ours, theirs, theirs, ours, ...): whichever side runs first after the other pays for buffer
re-allocation, so a fixed order biases the ratio (a fixed ours-first order showed 0.90 on
prefill that ABBA shows to be 1.00). Prints medians and three ratios ours/theirs:

- ``vs stats``: against the figures mlx-lm reports itself (``prompt_tps``, ``generation_tps``);
- ``same clock``: against mlx-lm's tokens timed by our stopwatch with our definitions;
- mlx-lm's ``generation_tps`` counts N tokens over the N-1 gaps after the first token, ours
  counts N-1, so ``vs stats`` for decode sits (N-1)/N below ``same clock`` by definition.

    python tests/benchmarks/throughput_parity.py --model zoo/llama --prompt-tokens 128 512
    python tests/benchmarks/throughput_parity.py --model smollm2-135m-instruct-f32

Run it with OpenBLAS preloaded on Linux, as the harness's workers do:
    LD_PRELOAD=/usr/lib/x86_64-linux-gnu/libopenblas.so.0 python tests/benchmarks/...
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from typing import Any


def resolve(name: str) -> Path:
    from harness.models.catalog import find_embedded

    model = find_embedded(name)
    if model is not None:
        return model.path
    return Path(name)


def theirs(
    model: Any, tokenizer: Any, prompt: list[int], gen_tokens: int
) -> tuple[Any, list[float]]:
    """mlx-lm's last response (its own statistics) and our stopwatch's token times."""
    from mlx_lm import stream_generate

    start = time.perf_counter()
    stamps: list[float] = []
    last = None
    for response in stream_generate(model, tokenizer, prompt, max_tokens=gen_tokens):
        stamps.append(time.perf_counter() - start)
        last = response
    assert last is not None and last.generation_tokens == gen_tokens, "EOS stopped mlx-lm early"
    return last, stamps


def main() -> None:
    from harness.backends.mlx_lm import BACKEND
    from harness.backends.mlx_runtime import blas_in_use
    from harness.scenarios.prompts import text_prompt
    from harness.scenarios.throughput import _figures, timed_run

    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="zoo/llama")
    parser.add_argument("--prompt-tokens", type=int, nargs="+", default=[128, 512])
    parser.add_argument("--gen-tokens", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=6, help="runs per side (ABBA order)")
    args = parser.parse_args()

    path = resolve(args.model)
    loaded, info = BACKEND.load(path)
    tokenizer = loaded.tokenizer  # type: ignore[attr-defined]
    tokenizer._eos_token_ids = set()  # as mlx_lm.benchmark does: never stop early
    print(f"model {path} | device {info.device} | blas {blas_in_use()}")
    print(
        f"{'pp':>6} {'tg':>5} | {'prefill ours':>12} {'mlx-lm':>8} {'vs stats':>8} "
        f"{'same clock':>10} | {'decode ours':>11} {'mlx-lm':>8} {'vs stats':>8} "
        f"{'same clock':>10}"
    )
    for pp in args.prompt_tokens:
        prompt = text_prompt(loaded, pp)
        timed_run(loaded, prompt, args.gen_tokens, True)  # warm-up, both paths share the kernels
        theirs(loaded.model, tokenizer, prompt, args.gen_tokens)  # type: ignore[attr-defined]
        ours_f: list[tuple[float, ...]] = []
        clock_f: list[tuple[float, ...]] = []
        stats: list[tuple[float, float]] = []
        for i in range(2 * args.repeats):
            if (i % 4) in (0, 3):
                stamps = timed_run(loaded, prompt, args.gen_tokens, True)
                ours_f.append(_figures(stamps, len(prompt)))
            else:
                last, stamps = theirs(loaded.model, tokenizer, prompt, args.gen_tokens)  # type: ignore[attr-defined]
                stats.append((last.prompt_tps, last.generation_tps))
                clock_f.append(_figures(stamps, len(prompt)))

        def med(rows: list[Any], j: int) -> float:
            return statistics.median(row[j] for row in rows)

        cells = []
        for j in (0, 1):
            ours, their_stats, their_clock = med(ours_f, j), med(stats, j), med(clock_f, j)
            cells.append(
                f"{ours:>12.1f} {their_stats:>8.1f} {ours / their_stats:>8.3f} "
                f"{ours / their_clock:>10.3f}"
            )
        print(f"{pp:>6} {args.gen_tokens:>5} | {cells[0]} | {cells[1][1:]}")


if __name__ == "__main__":
    main()
