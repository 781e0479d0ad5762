"""Synthetic run records for the report tests, and for rendering a demo report by hand:

    python -c "import sys; sys.path.insert(0, 'tests/report'); from pathlib import Path; \
from report_fixtures import realistic_run; from harness.report import render; \
print(render(realistic_run(), Path('/tmp/report-demo')))"
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from harness.core.types import (
    CaseResult,
    Gate,
    GateResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    SuiteInfo,
    Unit,
)

EVIL = "<script>alert(1)</script> | `code` [x](http://evil.example/x.png)\nsecond line"

MACHINE = Machine(
    os="Linux",
    os_release="6.8.0-45-generic",
    arch="x86_64",
    cpu="AMD EPYC 7B13",
    cores=16,
    memory_bytes=64 * 1024**3,
    python="3.11.7",
    hostname="bench-01",
    blas="openblas (preloaded)",
    mlx_device="cpu",
)

GIB = 1024**3
MIB = 1024**2


def metric(name: str, unit: Unit, *samples: float, view: str | None = None) -> Metric:
    return Metric(name=name, unit=unit, samples=tuple(samples), view=view)


def case(
    model: str,
    scenario: str,
    status: Status = Status.PASSED,
    *,
    point: Mapping[str, Any] | None = None,
    params: Mapping[str, Any] | None = None,
    metrics: Sequence[Metric] = (),
    reason: str | None = None,
    gates: Sequence[GateResult] = (),
    link: str | None = None,
    duration_s: float = 1.5,
) -> CaseResult:
    point = dict(point or {})
    label = "-".join(f"{k}{v}" for k, v in point.items())
    return CaseResult(
        case_id=f"smoke::{model}::{scenario}" + (f"[{label}]" if label else ""),
        suite="smoke",
        model=model,
        scenario=scenario,
        status=status,
        params={**(params or {}), **point},
        point=point,
        metrics=tuple(metrics),
        reason=reason,
        gates=tuple(gates),
        link=link,
        duration_s=duration_s,
    )


def make_run(
    results: Sequence[CaseResult],
    *,
    finished: bool = True,
    machine: Machine = MACHINE,
    models: Mapping[str, ModelIdentity] | None = None,
) -> RunRecord:
    return RunRecord(
        schema_version=1,
        run_id="20250101T120000-abc123",
        started_at="2025-01-01T12:00:00+00:00",
        machine=machine,
        packages={"mlx": "0.29.1", "mlx-lm": "0.28.0", "mlx-vlm": None},
        git_sha="0123456789abcdef0123456789abcdef01234567",
        suites=(SuiteInfo("smoke", "suites/smoke.suite.yaml", "f" * 64),),
        models=dict(models or {}),
        results=tuple(results),
        finished_at="2025-01-01T12:03:25+00:00" if finished else None,
    )


def throughput_metrics(
    rng: random.Random, prompt: int, speed: float, weights: float
) -> list[Metric]:
    def noisy(value: float, n: int = 5, spread: float = 0.03) -> list[float]:
        return [value * (1 + rng.uniform(-spread, spread)) for _ in range(n)]

    prefill = speed * 9 / (1 + prompt / 4096)
    decode = speed
    return [
        metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, *noisy(prefill)),
        metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, *noisy(decode)),
        metric("throughput.ttft_s", Unit.SECONDS, *noisy(prompt / prefill + 0.004)),
        metric("throughput.itl_p50_s", Unit.SECONDS, *noisy(1 / decode)),
        metric("throughput.itl_p90_s", Unit.SECONDS, *noisy(1.15 / decode)),
        metric("throughput.itl_p99_s", Unit.SECONDS, *noisy(1.6 / decode)),
        metric("throughput.e2e_s", Unit.SECONDS, *noisy(prompt / prefill + 128 / decode)),
        metric(
            "memory.mlx_peak_bytes",
            Unit.BYTES,
            weights * 1.05 + prompt * 96 * 1024,
            view="mlx_peak",
        ),
        metric("memory.mlx_active_bytes", Unit.BYTES, weights * 1.02, view="mlx_active"),
        metric(
            "memory.process_peak_rss_bytes",
            Unit.BYTES,
            weights * 1.1 + 310 * MIB,
            view="process_peak_rss",
        ),
    ]


def realistic_run(*, finished: bool = True) -> RunRecord:
    """A smoke run over six models with every status, the way a nightly might look."""
    rng = random.Random(7)
    speeds = {
        "llama-3.2-1b-instruct-4bit": 62.0,
        "qwen2.5-0.5b-instruct-bf16": 95.0,
        "gemma-2-2b-it-4bit": 31.0,
    }
    results: list[CaseResult] = []
    for model, speed in speeds.items():
        weights = int(GIB * 40 / speed)
        results.append(
            case(
                model,
                "load",
                metrics=[
                    metric(
                        "load.load_s",
                        Unit.SECONDS,
                        *(0.4 + 30 / speed * rng.uniform(0.9, 1.1) for _ in range(3)),
                    ),
                    metric("load.weights_bytes", Unit.BYTES, weights),
                    metric("load.mlx_active_bytes", Unit.BYTES, weights * 1.02),
                ],
            )
        )
        for prompt in (128, 512, 2048):
            status, reason = Status.PASSED, None
            gates: tuple[GateResult, ...] = ()
            decode = metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, speed)
            if model.startswith("gemma") and prompt == 2048:
                status = Status.FAILED
                gate = Gate("throughput.decode_tps", ">=", 30.0, expression="decode_tps >= 30")
                gates = (GateResult(gate, 27.4, False, "decode_tps 27.4 tok/s < 30 tok/s"),)
                decode = metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 27.4)
            ms = [
                m if m.name != "throughput.decode_tps" or status is Status.PASSED else decode
                for m in throughput_metrics(rng, prompt, speed, weights)
            ]
            results.append(
                case(
                    model,
                    "throughput",
                    status,
                    point={"prompt_tokens": prompt},
                    params={"gen_tokens": 128},
                    metrics=ms,
                    reason=reason,
                    gates=gates,
                )
            )
        results.append(
            case(
                model,
                "prompt_cache",
                metrics=[
                    metric("plugin_draft.acceptance", Unit.RATIO, 3.1, 3.3, 3.2),
                    metric("plugin_draft.draft_tokens", Unit.TOKENS, 1920, 1920, 1920),
                ],
            )
        )
    results += [
        case(
            "qwen2.5-0.5b-instruct-bf16",
            "tool_calls",
            Status.FAILED,
            reason=f"tool call not parseable; model said: {EVIL}",
        ),
        case(
            "llama-3.2-1b-instruct-4bit",
            "tool_calls",
            Status.XFAILED,
            reason="llama3 json parser drops nested arguments",
            link="https://github.com/ml-explore/mlx-lm/issues/123",
        ),
        case(
            "gemma-2-2b-it-4bit",
            "tool_calls",
            Status.SKIPPED,
            reason="model has no tool-calling chat template",
        ),
        case(
            "phi-3.5-mini-4bit",
            "load",
            Status.CRASHED,
            reason="worker died: signal 9 (SIGKILL, likely out of memory)\nlast stderr: Killed",
        ),
        case(
            "phi-3.5-mini-4bit",
            "throughput",
            Status.SKIPPED,
            point={"prompt_tokens": 128},
            params={"gen_tokens": 128},
            reason="load crashed",
        ),
        case(
            "mistral-7b-instruct-v0.3-4bit",
            "load",
            Status.PASSED,
            metrics=[
                metric("load.load_s", Unit.SECONDS, 4.2, 4.4, 4.1),
                metric("load.weights_bytes", Unit.BYTES, 4.1 * GIB),
            ],
        ),
        case(
            "mistral-7b-instruct-v0.3-4bit",
            "throughput",
            Status.TIMED_OUT,
            point={"prompt_tokens": 2048},
            params={"gen_tokens": 128},
            reason="case exceeded its 600 s timeout",
            duration_s=600.0,
        ),
        case(
            "smolvlm-256m",
            "load",
            Status.ERRORED,
            reason="ImportError: mlx_vlm is not installed (pip install mlx-vlm)",
        ),
        case(
            "smolvlm-256m",
            "throughput",
            Status.XPASSED,
            point={"prompt_tokens": 128},
            params={"gen_tokens": 128},
            reason="expected to fail: known regression",
            link="https://github.com/ml-explore/mlx-vlm/issues/77",
            metrics=[metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND)],
        ),
    ]
    models = {
        key: ModelIdentity(
            key=key,
            path=f"/models/{key}",
            backend="mlx_lm",
            revision="a1b2c3d",
            config_sha256="c" * 64,
            chat_template_sha256="d" * 64,
            weights_bytes=int(GIB * 40 / speed),
        )
        for key, speed in speeds.items()
    }
    return make_run(results, finished=finished, models=models)
