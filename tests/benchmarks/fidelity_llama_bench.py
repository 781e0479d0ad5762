"""Benchmark (not a test): ``http_throughput`` through llama-server against llama.cpp's own
``llama-bench``, on the same GGUF, with the server's own timings between them.

Two programs measure the same weights at the same lengths: ``llama-bench`` (llama.cpp's tool:
no server, no HTTP; ``-r`` trials, one warm-up) and ``mlx-harness run`` on a generated one-case
suite (``http_throughput`` with ``repeats`` = the same trial count, one warm-up) through a
llama-server the harness starts (one slot, no prompt cache; the ``completions`` endpoint, no
chat template), each in its own processes, as a user would run them. Rounds alternate which
goes first (ABBA: ours, theirs, theirs, ours, ...) so a slow minute on a shared machine lands
on both sides. Both use every core (llama-server's
``-t`` is the harness's launch default, ``llama-bench -t`` the same count).

Per round each side's median over its trials; then, for prefill and decode, the median over
rounds of each ratio with the lowest and highest round (the spread):
- client / server: the client's figure over the server's own (llama-server's ``timings``):
  what HTTP and SSE cost;
- server / llama-bench: the server's own figure over the engine alone: what serving costs
  (slots, sampling, detokenizing);
- client / llama-bench: the two together.

Definitions. Prefill: client = prompt tokens (usage) / TTFT; server = ``prompt_n`` /
``prompt_ms`` (to the first token); llama-bench = ``-p`` tokens / their batch time. Decode:
client = tokens after the first / first-to-last chunk; server = ``(predicted_n - 1) /
predicted_ms`` (the same); llama-bench = ``-n`` tokens / their time, at depth 0 (an empty
context) and at depth = the prompt length (``-d``), which is where the server decodes: both are
printed, the second is the like-for-like one.

    python tests/benchmarks/fidelity_llama_bench.py --model smollm2-135m-instruct \
        --prompt-tokens 128 --gen-tokens 32 --rounds 4 --trials 3

Run it plainly (not under ``nice``): it is a measurement.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from one_case_run import run_one_case

SCENARIO = "http_throughput"
SERVER_ARGS = ["--no-cache-prompt", "--parallel", "1"]  # one slot, nothing reused


@dataclass(frozen=True)
class Ours:
    """One ``mlx-harness run`` of ``http_throughput``: medians over its repeats."""

    prefill_tps: float
    decode_tps: float
    server_prefill_tps: float
    server_decode_tps: float
    ttft_overhead_s: float


@dataclass(frozen=True)
class Bench:
    """One ``llama-bench`` invocation: medians over its trials, tokens/s."""

    prefill_tps: float
    decode_tps: float  # depth 0
    decode_at_depth_tps: float  # depth = prompt tokens


def gguf_for(name: str) -> Path:
    """The GGUF llama-server serves for an embedded model (or a GGUF path given as is)."""
    from harness.backends.server_engines import gguf_of
    from harness.models.catalog import find_embedded

    model = find_embedded(name)
    if model is not None:
        if not model.prepared:
            sys.exit(f"{name} is not prepared; run `mlx-harness models prepare {name}`")
        return gguf_of(model.path)
    path = Path(name).expanduser()
    if not path.is_file():
        sys.exit(f"{name} is neither an embedded model nor a GGUF file")
    return path


def llama_bench() -> Path:
    from harness.models.llama_server import find_llama_server

    server = find_llama_server()
    bench = server.parent / "llama-bench" if server is not None else None
    if bench is None or not bench.is_file():
        sys.exit("llama-bench is not built: run `make llama-server`")
    return bench


def theirs(bench: Path, gguf: Path, pp: int, tg: int, trials: int, threads: int) -> Bench:
    command = [str(bench), "-m", str(gguf), "-p", str(pp), "-n", str(tg), "-d", f"0,{pp}"]
    command += ["-r", str(trials), "-t", str(threads), "-o", "jsonl"]
    env = {**os.environ, "LD_LIBRARY_PATH": str(bench.parent)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:]
        sys.exit(f"llama-bench failed (exit {done.returncode}): {' '.join(tail)}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]

    def median(n_prompt: int, n_gen: int, depth: int) -> float:
        for row in rows:
            if (row["n_prompt"], row["n_gen"], row["n_depth"]) == (n_prompt, n_gen, depth):
                return float(statistics.median(row["samples_ts"]))
        sys.exit(f"llama-bench gave no pp{n_prompt} tg{n_gen} @ d{depth} row")

    return Bench(median(pp, 0, 0), median(0, tg, 0), median(0, tg, pp))


def suite_text(model: str, pp: int, tg: int, trials: int) -> str:
    # the raw text, as llama-bench's prompt has no chat template (whose opening a server caches)
    params = {"prompt_tokens": pp, "gen_tokens": tg, "endpoint": "completions"}
    case = {
        "schema_version": 1,
        "name": "fidelity-llama",
        "defaults": {"repeats": trials, "warmup": 1, "timeout_s": 900},
        "models": [
            {
                "name": "gguf@llama-server",
                "embedded": model,
                "serve": {"engine": "llama_server", "args": SERVER_ARGS},
            }
        ],
        "scenarios": [{"scenario": SCENARIO, "params": params}],
    }
    return json.dumps(case)  # JSON is YAML


def ours(suite: Path, reports: Path, run_id: str) -> Ours:
    from harness.scenarios import http_throughput as http

    result = run_one_case(suite, reports, run_id)
    specs = (http.PREFILL, http.DECODE, http.SERVER_PREFILL, http.SERVER_DECODE)
    medians = []
    for spec in (*specs, http.TTFT_OVERHEAD):
        measured = result.metric(spec.name)
        if measured is None:
            sys.exit(f"our {SCENARIO} case has no {spec.name} (did the server send timings?)")
        medians.append(measured.median)
    return Ours(*medians)


# (what, label, ratio of one round): HTTP+SSE, then the server's own overhead, then both
RATIOS: tuple[tuple[str, str, Callable[[Ours, Bench], float]], ...] = (
    ("prefill", "client / server (HTTP+SSE)", lambda a, b: a.prefill_tps / a.server_prefill_tps),
    ("prefill", "server / llama-bench", lambda a, b: a.server_prefill_tps / b.prefill_tps),
    ("prefill", "client / llama-bench", lambda a, b: a.prefill_tps / b.prefill_tps),
    ("decode", "client / server (HTTP+SSE)", lambda a, b: a.decode_tps / a.server_decode_tps),
    (
        "decode",
        "server / llama-bench d{pp}",
        lambda a, b: a.server_decode_tps / b.decode_at_depth_tps,
    ),
    ("decode", "client / llama-bench d{pp}", lambda a, b: a.decode_tps / b.decode_at_depth_tps),
    ("decode", "server / llama-bench d0", lambda a, b: a.server_decode_tps / b.decode_tps),
    ("decode", "client / llama-bench d0", lambda a, b: a.decode_tps / b.decode_tps),
)


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.3f} [{min(values):.3f}, {max(values):.3f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m-instruct", help="embedded model or GGUF")
    parser.add_argument("--prompt-tokens", type=int, default=128)
    parser.add_argument("--gen-tokens", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=4, help="rounds, alternating who goes first")
    parser.add_argument("--trials", type=int, default=3, help="timed runs per tool per round")
    args = parser.parse_args()
    if args.gen_tokens < 2:
        parser.error("--gen-tokens must be at least 2 (decode needs two tokens)")
    gguf, bench = gguf_for(args.model), llama_bench()
    pp, tg, threads = args.prompt_tokens, args.gen_tokens, os.cpu_count() or 1
    print(f"GGUF {gguf} | pp{pp} tg{tg} | {threads} threads | {args.rounds} rounds x ", end="")
    print(f"{args.trials} trials a side | llama-server {' '.join(SERVER_ARGS)}")
    print(
        f"{'round':>5} {'first':>11} | {'prefill client':>14} {'server':>7} {'bench':>7} | "
        f"{'decode client':>13} {'server':>7} {'bench d0':>8} {'bench d' + str(pp):>9} | "
        f"{'TTFT overhead':>13}"
    )
    pairs: list[tuple[Ours, Bench]] = []
    with tempfile.TemporaryDirectory(prefix="fidelity-llama-") as tmp:
        suite = Path(tmp) / "fidelity.suite.yaml"
        suite.write_text(suite_text(args.model, pp, tg, args.trials), encoding="utf-8")
        for i in range(args.rounds):
            ours_first = i % 4 in (0, 3)
            if ours_first:
                a = ours(suite, Path(tmp) / "reports", f"round-{i}")
                b = theirs(bench, gguf, pp, tg, args.trials, threads)
            else:
                b = theirs(bench, gguf, pp, tg, args.trials, threads)
                a = ours(suite, Path(tmp) / "reports", f"round-{i}")
            pairs.append((a, b))
            first = "ours" if ours_first else "llama-bench"
            print(
                f"{i + 1:>5} {first:>11} | {a.prefill_tps:>14.1f} {a.server_prefill_tps:>7.1f} "
                f"{b.prefill_tps:>7.1f} | {a.decode_tps:>13.1f} {a.server_decode_tps:>7.1f} "
                f"{b.decode_tps:>8.1f} {b.decode_at_depth_tps:>9.1f} | "
                f"{a.ttft_overhead_s * 1000:>10.1f} ms"
            )
    print("ratios, median [min, max] over rounds:")
    for what, label, ratio in RATIOS:
        values = [ratio(a, b) for a, b in pairs]
        print(f"  {what:<8} {label.format(pp=pp):<28} {spread(values)}")
    overhead = [a.ttft_overhead_s * 1000 for a, _ in pairs]
    print(f"  TTFT overhead (client TTFT - server prompt time): {spread(overhead)} ms")


if __name__ == "__main__":
    main()
