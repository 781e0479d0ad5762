"""Benchmark (not a test): our ``throughput`` scenario against the real ``mlx_lm.benchmark`` tool.

Two independent programs measure the same model at the same lengths: ``python -m
mlx_lm.benchmark`` (mlx-lm's own command-line tool: its own load, random prompt tokens, one
warm-up, ``-n`` trials) and ``mlx-harness run`` on a generated one-case suite (``throughput``
with ``repeats`` = the same trial count, one warm-up), each in its own processes, as a user
would run them. Rounds alternate which tool goes first (ABBA: ours, theirs, theirs, ours, ...),
so a slow minute on a shared machine lands on both sides. Both run with the environment the
harness gives its workers (OpenBLAS preloaded on Linux when installed).

Per round it takes each tool's median over its trials, then prints, for prefill and decode,
the median over rounds of ours/theirs with the lowest and highest round ratio (the spread).
Definitions: prefill is prompt tokens / time to the first token in both. Decode: mlx-lm's
``generation_tps`` divides N generated tokens by the N-1 gaps after the first token; ours
divides N-1 tokens by the same gaps (as in docs/scenarios.md), so equal speed reads (N-1)/N on the
raw ratio; the ``same definition`` column scales ours by N/(N-1).

    python tests/benchmarks/fidelity_mlx_lm_benchmark.py --model smollm2-135m-instruct-f32 \
        --prompt-tokens 128 --gen-tokens 32 --rounds 3 --trials 3

Run it plainly (not under ``nice``): it is a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from one_case_run import run_one_case

TRIAL = re.compile(r"Trial \d+:\s+prompt_tps=([\d.]+), generation_tps=([\d.]+)")
PREFILL, DECODE = "throughput.prefill_tps", "throughput.decode_tps"


@dataclass(frozen=True)
class Side:
    """One tool's medians in one round, tokens per second."""

    prefill_tps: float
    decode_tps: float


def resolve(name: str) -> Path:
    from harness.models.catalog import find_embedded

    model = find_embedded(name)
    if model is not None:
        if not model.prepared:
            sys.exit(f"{name} is not prepared; run `mlx-harness models prepare {name}`")
        return model.path
    path = Path(name).expanduser()
    if not path.is_dir():
        sys.exit(f"{name} is neither an embedded model nor a model directory")
    return path


def tool_env() -> dict[str, str]:
    from harness.runner.blas import worker_env

    return worker_env(os.environ, offline=True)


def theirs(path: Path, pp: int, tg: int, trials: int) -> Side:
    """``python -m mlx_lm.benchmark``: the median of its trials."""
    command = [sys.executable, "-m", "mlx_lm.benchmark", "--model", str(path)]
    command += ["-p", str(pp), "-g", str(tg), "-n", str(trials)]
    done = subprocess.run(command, env=tool_env(), capture_output=True, text=True, check=False)
    rows = [(float(a), float(b)) for a, b in TRIAL.findall(done.stdout)]
    if done.returncode != 0 or len(rows) != trials:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        sys.exit(f"mlx_lm.benchmark failed (exit {done.returncode}): {' '.join(tail)}")
    return Side(statistics.median(r[0] for r in rows), statistics.median(r[1] for r in rows))


def suite_text(path: Path, pp: int, tg: int, trials: int) -> str:
    case = {
        "schema_version": 1,
        "name": "fidelity",
        "defaults": {"repeats": trials, "warmup": 1, "timeout_s": 1800},
        "models": [{"name": "model", "path": str(path)}],
        "scenarios": [
            {"scenario": "throughput", "params": {"prompt_tokens": pp, "gen_tokens": tg}}
        ],
    }
    return json.dumps(case)  # JSON is YAML


def ours(suite: Path, reports: Path, run_id: str) -> Side:
    """``mlx-harness run`` on the one-case suite: the medians of its repeats."""
    result = run_one_case(suite, reports, run_id)
    prefill, decode = result.metric(PREFILL), result.metric(DECODE)
    if prefill is None or decode is None:
        sys.exit(f"our throughput case measured no prefill or decode: {result.reason}")
    return Side(prefill.median, decode.median)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct-f32")
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--gen-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3, help="rounds, alternating who goes first")
    parser.add_argument("--trials", type=int, default=3, help="timed runs per tool per round")
    args = parser.parse_args()
    if args.gen_tokens < 2:
        parser.error("--gen-tokens must be at least 2 (decode needs two tokens)")
    path = resolve(args.model)
    pp, tg = args.prompt_tokens, args.gen_tokens
    print(f"model {path} | pp{pp} tg{tg} | {args.rounds} rounds x {args.trials} trials a side")
    print(
        f"{'round':>5} {'first':>6} | {'prefill ours':>12} {'mlx-lm':>8} | "
        f"{'decode ours':>11} {'mlx-lm':>8}"
    )
    pairs: list[tuple[Side, Side]] = []
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        suite = Path(tmp) / "fidelity.suite.yaml"
        suite.write_text(suite_text(path, pp, tg, args.trials), encoding="utf-8")
        for i in range(args.rounds):
            ours_first = i % 4 in (0, 3)
            if ours_first:
                a = ours(suite, Path(tmp) / "reports", f"round-{i}")
                b = theirs(path, pp, tg, args.trials)
            else:
                b = theirs(path, pp, tg, args.trials)
                a = ours(suite, Path(tmp) / "reports", f"round-{i}")
            pairs.append((a, b))
            first = "ours" if ours_first else "mlx-lm"
            print(
                f"{i + 1:>5} {first:>6} | {a.prefill_tps:>12.1f} {b.prefill_tps:>8.1f} | "
                f"{a.decode_tps:>11.2f} {b.decode_tps:>8.2f}"
            )
    prefill = [a.prefill_tps / b.prefill_tps for a, b in pairs]
    decode = [a.decode_tps / b.decode_tps for a, b in pairs]
    same = [r * tg / (tg - 1) for r in decode]
    print("ours / mlx_lm.benchmark, median [min, max] over rounds:")
    print(f"  prefill  {spread(prefill)}")
    print(f"  decode   {spread(decode)} raw; {spread(same)} same definition (x {tg}/{tg - 1})")


if __name__ == "__main__":
    main()
