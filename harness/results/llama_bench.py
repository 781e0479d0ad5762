"""A run's throughput cases as llama-bench's JSON (``llama-bench -o json``), so llama.cpp's own
``scripts/compare-llama-bench.py`` (and whatever else reads llama-bench files) reads our runs.

One entry per test, as llama-bench writes them: a ``throughput`` case with
``prompt_tokens`` P, ``gen_tokens`` G and ``depth`` D gives ``ppP`` (n_prompt P, n_gen 0) from
its prefill tokens/s and ``tgG`` (n_prompt 0, n_gen G) from its decode tokens/s, both at
n_depth D. ``samples_ts`` are our raw samples (warm-ups left out, as llama-bench leaves its
warm-up run out); ``samples_ns`` the time the test's tokens take at each sample's rate
(``tokens / ts`` in nanoseconds: for ``pp`` exactly the time to first token); ``avg_*`` and
``stddev_*`` their mean and sample standard deviation, as llama-bench computes them.

What is ours: ``build_commit`` is the run id (runs of one harness are told apart by it and
all have its length, which the script needs), ``backends`` names MLX and the device
(``MLX (gpu)``), ``model_*`` come from the record's model identity and probe. What llama.cpp
has and MLX has not (batch sizes, threads, CPU masks, split modes) is written as llama-bench's
neutral value (0, ``none``, false), never left out: the script joins the two sides on every one
of its key fields, and an absent one never joins. :data:`NEUTRAL` lists them.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from harness.core.types import CaseResult, Machine, Metric, RunRecord

THROUGHPUT = "throughput"
PREFILL_TPS = "throughput.prefill_tps"
DECODE_TPS = "throughput.decode_tps"

# every field compare-llama-bench.py's LLAMA_BENCH_DB_FIELDS names, in its order (llama.cpp
# 11434), and the two sample lists llama-bench writes besides
DB_FIELDS: tuple[str, ...] = (
    "build_commit",
    "build_number",
    "cpu_info",
    "gpu_info",
    "backends",
    "model_filename",
    "model_type",
    "model_size",
    "model_n_params",
    "n_batch",
    "n_ubatch",
    "n_threads",
    "cpu_mask",
    "cpu_strict",
    "poll",
    "type_k",
    "type_v",
    "n_gpu_layers",
    "split_mode",
    "main_gpu",
    "no_kv_offload",
    "flash_attn",
    "tensor_split",
    "tensor_buft_overrides",
    "load_mode",
    "embeddings",
    "no_op_offload",
    "n_prompt",
    "n_gen",
    "n_depth",
    "test_time",
    "avg_ns",
    "stddev_ns",
    "avg_ts",
    "stddev_ts",
    "n_cpu_moe",
    "fit_target",
    "fit_min_ctx",
)
# llama.cpp settings MLX has no counterpart for, at llama-bench's neutral value
NEUTRAL: Mapping[str, Any] = {
    "build_number": 0,
    "n_batch": 0,
    "n_ubatch": 0,
    "n_threads": 0,
    "cpu_mask": "0x0",
    "cpu_strict": False,
    "poll": 0,
    "split_mode": "none",
    "main_gpu": 0,
    "no_kv_offload": False,
    "flash_attn": -1,  # -1: the engine decides (llama-bench's "auto")
    "tensor_split": "0.00",
    "tensor_buft_overrides": "none",
    "load_mode": "auto",
    "embeddings": False,
    "no_op_offload": 0,
    "n_cpu_moe": 0,
    "fit_target": 0,
    "fit_min_ctx": 0,
}
ALL_LAYERS = 99  # llama-bench's -ngl for "every layer on the GPU"
LLAMA_CPP = "llama.cpp"  # the backend of runs imported from llama-bench
TEST_FIELDS = frozenset({"n_prompt", "n_gen", "n_depth"})


@dataclass(frozen=True)
class TestSpan:
    """One llama-bench test: its token counts and the metric whose samples time it."""

    n_prompt: int
    n_gen: int
    n_depth: int
    metric: Metric

    @property
    def tokens(self) -> int:
        return self.n_prompt + self.n_gen

    @property
    def name(self) -> str:
        """``pp512``, ``tg128``, ``pp512@d1024``: llama-bench's own test names."""
        base = f"pp{self.n_prompt}" if self.n_gen == 0 else f"tg{self.n_gen}"
        return f"{base}@d{self.n_depth}" if self.n_depth else base


def device(machine: Machine) -> str:
    """``gpu`` or ``cpu``: the MLX device kind the run's worker saw ("unknown" when unsaid)."""
    kind = machine.mlx_device.split(" ", 1)[0].strip().lower()
    return kind or "unknown"


def gpu_name(machine: Machine) -> str:
    """``Apple M2 Max`` from ``gpu (Apple M2 Max)``; empty off the GPU, as llama-bench's is."""
    text = machine.mlx_device
    if device(machine) != "gpu":
        return ""
    inner = text[text.find("(") + 1 : text.rfind(")")] if "(" in text else ""
    return inner.strip() or "gpu"


def _int_param(params: Mapping[str, Any], name: str) -> int | None:
    value = params.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def tests_of(result: CaseResult) -> list[TestSpan]:
    """A throughput case's llama-bench tests (none when it is not one, or measured nothing)."""
    if result.scenario != THROUGHPUT:
        return []
    params = {**result.params, **result.point}
    prompt = _int_param(params, "prompt_tokens")
    gen = _int_param(params, "gen_tokens")
    depth = _int_param(params, "depth") or 0
    spans = []
    prefill, decode = result.metric(PREFILL_TPS), result.metric(DECODE_TPS)
    if prompt and prefill is not None and _finite(prefill.samples):
        spans.append(TestSpan(prompt, 0, depth, prefill))
    if gen and decode is not None and _finite(decode.samples):
        spans.append(TestSpan(0, gen, depth, decode))
    return spans


def _finite(samples: Sequence[float]) -> list[float]:
    return [s for s in samples if math.isfinite(s) and s > 0]


def _stdev(values: Sequence[float]) -> float:
    return statistics.stdev(values) if len(values) > 1 else 0.0


def _test_time(started_at: str) -> str:
    """llama-bench's ``2026-11-29T06:03:21Z`` (UTC, seconds) from an ISO time."""
    try:
        moment = datetime.fromisoformat(started_at.replace("Z", "+00:00"))
    except ValueError:
        return started_at
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def model_type(probe: Mapping[str, Any], fallback: str) -> str:
    """``llama 135M Q4`` (architecture, size, weight type), as llama-bench names a model."""
    arch = probe.get("model_type") or fallback
    params = probe.get("parameters")
    size = ""
    if isinstance(params, int) and params > 0:
        size = f"{params / 1e9:.1f}B" if params >= 1e9 else f"{round(params / 1e6)}M"
    quant = probe.get("quantization")
    bits = quant.get("bits") if isinstance(quant, Mapping) else None
    kind = f"Q{bits}" if isinstance(bits, int) else str(probe.get("dtype") or "")
    return " ".join(part for part in (str(arch), size, kind) if part)


def entry(run: RunRecord, result: CaseResult, test: TestSpan) -> dict[str, Any]:
    """One llama-bench JSON entry for ``test`` of ``result``."""
    machine = run.machine
    identity = run.models.get(result.model)
    probe = run.probes.get(result.model) or {}
    samples_ts = _finite(test.metric.samples)
    samples_ns = [round(test.tokens / ts * 1e9) for ts in samples_ts]
    params = probe.get("parameters")
    gpu = device(machine) == "gpu"
    ours = {
        **NEUTRAL,
        "build_commit": run.run_id,
        "cpu_info": machine.cpu,
        "gpu_info": gpu_name(machine),
        "backends": f"MLX ({device(machine)})",
        "model_filename": (identity.path if identity and identity.path else result.model),
        "model_type": model_type(probe, result.model),
        "model_size": (identity.weights_bytes if identity and identity.weights_bytes else 0),
        "model_n_params": params if isinstance(params, int) else 0,
        "type_k": str(probe.get("compute_dtype") or probe.get("dtype") or "auto"),
        "type_v": str(probe.get("compute_dtype") or probe.get("dtype") or "auto"),
        "n_gpu_layers": ALL_LAYERS if gpu else 0,
        "n_prompt": test.n_prompt,
        "n_gen": test.n_gen,
        "n_depth": test.n_depth,
        "test_time": _test_time(result.started_at or run.started_at),
        "avg_ns": round(statistics.fmean(samples_ns)),
        "stddev_ns": round(_stdev(samples_ns)),
        "avg_ts": statistics.fmean(samples_ts),
        "stddev_ts": _stdev(samples_ts),
        "samples_ns": samples_ns,
        "samples_ts": samples_ts,
        # ours, beside llama-bench's fields (the script drops fields it does not know)
        "mlx_harness_case": result.case_id,
        "mlx_harness_backend": identity.backend if identity else None,
    }
    if identity is not None and identity.backend == LLAMA_CPP:
        ours.update(_llama_cpp_settings(result))
    return ours


def _llama_cpp_settings(result: CaseResult) -> dict[str, Any]:
    """An imported llama-bench test's own settings (backends, threads, ...) and model type,
    so a run imported from llama-bench goes back out as llama.cpp's, not as MLX's."""
    settings: dict[str, Any] = {
        k: v for k, v in result.params.items() if k in DB_FIELDS and k not in TEST_FIELDS
    }
    kept = result.artifacts.get("llama_bench")
    if isinstance(kept, Mapping) and isinstance(kept.get("model_type"), str):
        settings["model_type"] = kept["model_type"]
    return settings


def llama_bench_json(run: RunRecord) -> list[dict[str, Any]]:
    """Every throughput case's tests, in the run's order (empty: the run has none)."""
    return [entry(run, result, test) for result in run.results for test in tests_of(result)]
