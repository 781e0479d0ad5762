"""A run whose every free-text field carries a given string: model names, suite names, params,
failure reasons, gate messages, chat templates (probe record and tool-call artifacts), raw
model output, parsed calls, cache types, ledger entries, package names and machine fields. The
API contracts evidence also carries :data:`EVIDENCE_ACTING`, whatever the texts.

``hostile_runs(texts)`` gives a baseline and a current run (the current one regressed, so the
comparison section has status changes, metric changes and charts); the same call with inert
words gives the twin whose markup is the report's own. Runs go through the run record on disk
(``RunWriter`` then ``load_run``), as a real run does, before they are rendered.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.preflight_types import (
    ContextSource,
    FindingRecord,
    MemoryRecord,
    PolicyAction,
    PreflightRecord,
)
from harness.core.types import (
    CaseResult,
    ExpectKind,
    Gate,
    GateResult,
    LedgerEntry,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    SuiteInfo,
    Unit,
)

RUN_ID = "20250101T120000-hostile"
BASELINE_ID = "20241231T120000-baseline"
STARTED = "2025-01-01T12:00:00+00:00"
MIB = 1024**2
CHARTS = 24  # the comparison section draws at most 24 strip plots; more samples only cost time
SOAK_CHARTS = 4  # soak memory charts (one a case): matplotlib's 0.15 s each, numbers only
# What a hostile server's answer carries besides ``text``: the API contracts evidence holds it on
# every run (a line break the evidence block keeps, then characters that act instead of printing:
# clear screen, set the title, bell, a right-to-left override, an isolate, NUL, the one-byte CSI,
# a line separator). EVIDENCE_SHOWN is its second line as report.html shows it.
EVIDENCE_ACTING = (
    "\n\x1b[2J\x1b]0;pwned\x07 \u202eevil\u202c \u2066iso\u2069 nul\x00 csi\x9b31m sep\u2028end"
)
EVIDENCE_SHOWN = (
    r"\x1b[2J\x1b]0;pwned\x07 \u202eevil\u202c \u2066iso\u2069 nul\x00 csi\x9b31m sep\u2028end"
)


def _metric(name: str, unit: Unit, *samples: float) -> Metric:
    return Metric(name=name, unit=unit, samples=tuple(samples))


def _case(
    text: str,
    scenario: str,
    status: Status,
    *,
    point: dict[str, Any] | None = None,
    **fields: Any,
) -> CaseResult:
    point = point or {}
    label = ",".join(f"{k}={v}" for k, v in point.items())
    return CaseResult(
        case_id=f"{text}::{text}::{scenario}" + (f"[{label}]" if label else ""),
        suite=text,
        model=text,
        scenario=scenario,
        status=status,
        point=point,
        started_at=STARTED,
        **fields,
    )


def _prompt_record(text: str) -> dict[str, Any]:
    """One tool-call prompt as the ``tool_calls`` scenario records it, every string ``text``."""
    call = {"name": text, "arguments": {text: text}}
    return {
        "id": text,
        "category": "simple",
        "question": text,
        "failure": "wrong_name",
        "detail": text,
        "raw": text,
        "calls": [call],
        "content": text,
        "errors": [text],
        "crash": None,
        "stream_calls": [],
        "stream_content": text,
        "stream_crash": text,
        "parity": False,
        "finish_reason": "length",
    }


def _preflight(text: str) -> PreflightRecord:
    return PreflightRecord(
        backend=text,
        action=PolicyAction.WARN,
        code=text,
        message=text,
        findings=(FindingRecord(PolicyAction.WARN, text, text),),
        note=text,
        context_source=ContextSource.SCENARIO,
        memory=MemoryRecord(
            mlx_peak_bytes=300 * MIB,
            context_tokens=160,
            prompt_tokens=128,
            weights_bytes=250 * MIB,
            approximate=(text,),
        ),
    )


def _baseline_metrics(result: CaseResult, *, sampled: bool) -> CaseResult:
    """The baseline keeps only the decode samples of the first models: compare judges (and
    charts) those, and finds nothing else to compare, so it stays quick."""
    kept = tuple(m for m in result.metrics if sampled and m.name == "throughput.decode_tps")
    return replace(result, metrics=kept)


def _soak_memory(text: str, charted: bool) -> dict[str, list[Any]]:
    """The soak's memory samples: three (a chart) for the first payloads, one (a table row, no
    chart) for the rest. A chart holds numbers and the harness's words only; every payload
    still reaches the soak's text fields (its pressure readings among them)."""
    n = 3 if charted else 1
    return {
        "t_s": [0.0, 1.0, 2.0][:n],
        "requests": [0, 10, 20][:n],
        "rss_bytes": [1e8, 1.1e8, 1.2e8][:n],
        "footprint_bytes": [None] * n,
        "swap_used_bytes": [0] * n,
        "pressure": [text] * n,
        "stall_pct": [None] * n,
    }


def _model_cases(text: str, *, baseline: bool, charted: bool = True) -> list[CaseResult]:
    decode = (100.0, 101.0, 99.0, 100.5, 99.5, 100.2) if baseline else (50.0, 51, 49, 50.5, 49.5)
    gate = Gate("throughput.decode_tps", ">=", 80.0, expression=text)
    gates = () if baseline else (GateResult(gate, 50.0, False, text),)
    template = {"chat_template": text, "chat_template_sha256": text, "parser": text}
    return [
        _case(
            text,
            "load",
            Status.PASSED,
            params={"note": text},
            metrics=(
                _metric("load.load_s", Unit.SECONDS, 0.5, 0.52, 0.51),
                _metric("load.weights_bytes", Unit.BYTES, 250 * MIB),
            ),
        ),
        _case(
            text,
            "throughput",
            Status.PASSED if baseline else Status.FAILED,
            point={"prompt_tokens": 128},
            params={"gen_tokens": 32, "prompt_tokens": 128, text: text},
            metrics=(
                _metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, *decode),
                _metric("memory.mlx_peak_bytes", Unit.BYTES, 280 * MIB),
                _metric(f"custom.{text}", Unit.COUNT, 1.0),
                _metric("throughput.decode_hw_share", Unit.RATIO, 0.41, 0.42),
            ),
            gates=gates,
            preflight=_preflight(text),
        ),
        _case(  # a second prompt length: the speed charts draw a curve
            text,
            "throughput",
            Status.PASSED,
            point={"prompt_tokens": 512},
            params={"gen_tokens": 32, "prompt_tokens": 512},
            metrics=(
                _metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, 800.0, 810.0),
                _metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 40.0, 41.0),
                _metric("throughput.decode_hw_share", Unit.RATIO, 0.38, 0.39),
            ),
        ),
        _case(text, text, Status.ERRORED, reason=f"RuntimeError: {text}", link=text),
        _case(text, "prompt_cache", Status.SKIPPED, point={"shape": "a"}, reason=text),
        _case(
            text,
            "prompt_cache",
            Status.FAILED,
            point={"shape": "b"},
            reason=text,
            metrics=(
                _metric("prompt_cache.ttft_cold_s", Unit.SECONDS, 0.2, 0.21),
                _metric("prompt_cache.ttft_warm_s", Unit.SECONDS, 0.05, 0.051),
                _metric("prompt_cache.speedup_x", Unit.RATIO, 4.0, 4.1),
                _metric("prompt_cache.tokens_reused", Unit.TOKENS, 900.0),
                _metric("prompt_cache.tokens_recomputed", Unit.TOKENS, 100.0),
            ),
            artifacts={"cache_types": [text], "equivalent": False},
        ),
        _case(text, "prompt_cache_lru", Status.XFAILED, reason=text, link=text),
        _case(
            text,
            "tool_calls",
            Status.FAILED,
            reason=text,
            link=text,
            metrics=(_metric("tool_calls.accuracy", Unit.RATIO, 0.0),),
            artifacts={
                **template,
                "fewshot": True,
                "categories": {"simple": {"prompts": 1, "ok": 0}},
                "failure_counts": {"wrong_name": 1},
                "prompts": [_prompt_record(text)],
            },
        ),
        _case(
            text,
            "vision_throughput",
            Status.PASSED,
            point={"images": 1, "image_px": 224},
            params={"images": 1, "image_px": 224, "note": text},
            metrics=(
                _metric("vision_throughput.preprocess_s", Unit.SECONDS, 0.002, 0.0021),
                _metric("vision_throughput.ttft_s", Unit.SECONDS, 0.008, 0.0081),
                _metric("vision_throughput.decode_tps", Unit.TOKENS_PER_SECOND, 900.0, 910.0),
                _metric("vision_throughput.image_tokens", Unit.TOKENS, 16.0),
            ),
        ),
        _case(text, "vision_throughput", Status.XFAILED, point={"images": 2}, reason=text),
        _case(
            text,
            "speech_to_text",
            Status.PASSED,
            point={"clip_set": text},
            params={"clip_set": text},
            metrics=(
                _metric("speech_to_text.rtf", Unit.RATIO, 0.7, 0.8),
                _metric("speech_to_text.wer", Unit.RATIO, 0.5, 0.0),
                _metric("speech_to_text.audio_s", Unit.SECONDS, 12.0),
            ),
            artifacts={
                "clip_set": text,
                "items": [
                    {
                        "id": text,
                        "long_form": True,
                        "audio_s": 41.0,
                        "reference": text,
                        "hypothesis": text,
                        "wer": 0.5,
                    },
                ],
            },
        ),
        _case(
            text,
            "quality",
            Status.PASSED,
            params={"reference": text},
            metrics=(
                _metric("quality.perplexity", Unit.RATIO, 13.1, 13.2),
                _metric("quality.token_agreement", Unit.RATIO, 0.9, 1.0),
            ),
            artifacts={"reference": text, "items": 2, "text": text},
        ),
        _case(
            text,
            "kv_sweep",
            Status.FAILED,
            point={"kv_bits": 4, "context_tokens": 256},
            params={"gen_tokens": 8, "kv_bits": 4, "context_tokens": 256},
            reason=text,
            metrics=(
                _metric("kv_sweep.kv_bytes", Unit.BYTES, 2.0 * MIB),
                _metric("kv_sweep.kv_bytes_ratio", Unit.RATIO, 0.28),
                _metric("kv_sweep.decode_tps", Unit.TOKENS_PER_SECOND, 90.0, 91.0),
                _metric("kv_sweep.kl", Unit.SCORE, 0.05),
                _metric("kv_sweep.divergence_token", Unit.TOKENS, 3.0),
            ),
            artifacts={"context_tokens": 256, "gen_tokens": 8, "kv": text, "cache_types": [text]},
        ),
        _case(
            text,
            "quant_sweep",
            Status.FAILED,
            point={"quant": "nvfp4"},
            params={"gen_tokens": 8, "quant": "nvfp4"},
            reason=text,
            metrics=(
                _metric("quant_sweep.weight_bytes", Unit.BYTES, 2.0 * MIB),
                _metric("quant_sweep.weight_bytes_ratio", Unit.RATIO, 0.15),
                _metric("quant_sweep.decode_tps", Unit.TOKENS_PER_SECOND, 90.0, 91.0),
                _metric("quant_sweep.kl", Unit.SCORE, 0.05),
                _metric("quant_sweep.matmul_kl", Unit.SCORE, 2.5),
                _metric("quant_sweep.matmul_divergence_token", Unit.TOKENS, 0.0),
            ),
            artifacts={"quant": text, "gen_tokens": 8},
        ),
        _case(
            text,
            "session",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("session.ttft_s", Unit.SECONDS, 0.02, 0.03),
                _metric("session.reuse_share", Unit.RATIO, 0.0, 1.0),
            ),
            artifacts={
                "engine": text,
                "sessions": [text],
                "turns": [
                    [
                        {
                            "turn": 1,
                            "kind": text,
                            "prompt_tokens": 600,
                            "reusable_tokens": 0,
                            "reused_tokens": 0,
                            "new_tokens": 600,
                            "ttft_s": [0.1],
                            "cold_ttft_s": [0.1],
                            "prefill_tps": [6000.0],
                            "identical": False,
                            "differs_at": text,
                            "missed": True,
                            "miss_reason": text,
                            "history_rewritten_at": text,
                            "cache_fault": text,
                            "answer": text,
                        }
                    ]
                ],
            },
        ),
        _case(
            text,
            "structured_output",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("structured_output.conform_rate", Unit.RATIO, 0.5),
                _metric("structured_output.cost_x", Unit.RATIO, 1.2, 1.3),
            ),
            artifacts={
                "engine": text,
                "requests": 2,
                "verdicts": {"correct": 1, text: 1},
                "honour": {"honoured": 1, "ignored": 1, text: 1},
                "answers": [{"schema": text, "text": text, "unconstrained_text": text}],
            },
        ),
        _case(
            text,
            "http_speculative",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("http_speculative.acceptance", Unit.RATIO, 1.0),
                _metric("http_speculative.speedup", Unit.RATIO, 0.5, 0.6),
            ),
            artifacts={
                "engine": text,
                "draft": text,
                "acceptance_source": text,
                "accepted_tokens": [3],
                "drafted_tokens": [3],
                "first_mismatch": {"run": 1, "text": text},
                "baseline": text,
            },
        ),
        _case(
            text,
            "batch_generate",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("batch_generate.b2.decode_tps", Unit.TOKENS_PER_SECOND, 80.0, 82.0),
                _metric("batch_generate.b2.decode_tps_per_request", Unit.TOKENS_PER_SECOND, 40.0),
            ),
            artifacts={
                "batch_sizes": [2, text],
                "identical": {"2": False, text: text},
                "first_mismatch": {"run": 1, "request": text},
                "prompt_dependence": text,
            },
        ),
        _case(
            text,
            "context_limit",
            Status.FAILED,
            reason=text,
            metrics=(_metric("context_limit.window_tokens", Unit.TOKENS, 256.0),),
            artifacts={
                "engine": text,
                "outcomes": {"inside": text, "past_window": "shifted", text: text},
                "probes": {"inside": text, "past_window": text},
                "finding": text,
            },
        ),
        _case(
            text,
            "toolcalls_corpus",
            Status.PASSED,
            artifacts={
                "implementations": [
                    {"parser": text, "cases": 2, "ok": 1, "failures": {text: 1}},
                ]
            },
        ),
        *_served_cases(text, charted),
    ]


def _served_cases(text: str, charted: bool = True) -> list[CaseResult]:
    """Cases of a served model: the Engines, Load, API and template contracts sections."""
    from harness.scenarios.api_contracts.verdicts import CheckResult, Exchange, Verdict

    check = CheckResult(
        "stop_string",
        Verdict.FAIL,
        text,
        (Exchange(text, text), Exchange(f"{text}{EVIDENCE_ACTING}", f"{EVIDENCE_ACTING}{text}")),
    )
    return [
        _case(
            text,
            "http_throughput",
            Status.PASSED,
            metrics=(
                _metric("http_throughput.ttft_s", Unit.SECONDS, 0.01, 0.011),
                _metric("http_throughput.decode_tps", Unit.TOKENS_PER_SECOND, 90.0, 91.0),
            ),
            artifacts={"engine": text, "first_text": text},
        ),
        _case(
            text,
            "greedy_text",
            Status.PASSED,
            metrics=(_metric("greedy_text.e2e_s", Unit.SECONDS, 0.1),),
            artifacts={
                "prompts": [text, "b"],
                "outputs": [text, f"{text} differs"],
                # the machine-state section: reasons and readings are text from the OS
                "machine_state": {
                    "before": {"governor": text, "memory_pressure": text, "cpu_mhz": 2400.0},
                    "dirty": [text],
                    "others_pct": 40.0,
                    "load1": 3.1,
                    "flagged_runs": [1],
                },
            },
        ),
        _case(
            text,
            "api_contracts",
            Status.FAILED,
            reason=f"API contract checks failed: stop_string; {text}",
            artifacts={"engine": text, "checks": [check.record()]},
        ),
        _case(
            text,
            "template_contracts",
            Status.FAILED,
            reason=f"template contract failed: system_role; {text}",
            artifacts={
                "checks": [
                    {"name": "system_role", "verdict": "fail", "outcome": text, "evidence": text},
                    {"name": text, "verdict": "warn", "outcome": text, "evidence": text},
                ]
            },
        ),
        _case(
            text,
            "serving",
            Status.PASSED,
            metrics=(
                _metric("serving.c1.request_rps", Unit.REQUESTS_PER_SECOND, 2.0),
                _metric("serving.c1.ttft_p50_s", Unit.SECONDS, 0.02),
                _metric("serving.c1.ttft_p90_s", Unit.SECONDS, 0.03),
                _metric("serving.c1.ttft_p99_s", Unit.SECONDS, 0.05),
                _metric("serving.c4.request_rps", Unit.REQUESTS_PER_SECOND, 5.0),
                _metric("serving.c4.ttft_p50_s", Unit.SECONDS, 0.04),
                _metric("serving.c4.ttft_p90_s", Unit.SECONDS, 0.06),
                _metric("serving.c4.ttft_p99_s", Unit.SECONDS, 0.09),
            ),
            artifacts={
                "points": [
                    {"key": "c1", "kind": "concurrency", "value": 1, "label": text},
                    {"key": "c4", "kind": "concurrency", "value": 4, "label": text},
                ],
                "errors": [text],
            },
        ),
        _case(
            text,
            "saturation",
            Status.FAILED,
            reason=text,
            metrics=(_metric("saturation.knee_rps", Unit.REQUESTS_PER_SECOND, 4.0),),
            artifacts={
                "engine": text,
                "endpoint": text,
                "loop": "rate",
                "finding": text,
                "stop_reason": text,
                "slo": {"ttft_p90_s": 1.0},
                "knee": {"value": 4.0, "low": 3.0, "high": 5.0, "at_ceiling": False},
                "points": [
                    {
                        "order": 1,
                        "value": 4.0,
                        "sent": 10,
                        "completed": 10,
                        "errors": 0,
                        "cut": 0,
                        "good": True,
                        "slo_verdict": text,
                        "met_share": 0.9,
                        "oversaturated": text,
                        "ttft_s": {"p90": 0.5},
                        "p90_interval_s": {"ttft": [0.4, 0.6]},
                    }
                ],
            },
        ),
        _case(
            text,
            "stall",
            Status.FAILED,
            reason=text,
            metrics=(_metric("stall.max_itl_s", Unit.SECONDS, 0.9),),
            artifacts={
                "engine": text,
                "streams": 2,
                "long_prompt_tokens": 1024,
                "finding": text,
                "timeline": [[[0.0, 0.01], [0.5, 0.9]], [[0.1, 0.02]]],
                "window_s": 0.5,
            },
        ),
        _case(
            text,
            "reasoning",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("reasoning.ttft_s", Unit.SECONDS, 0.05),
                _metric("reasoning.ttfa_s", Unit.SECONDS, 0.2),
                _metric("reasoning.reasoning_tokens", Unit.TOKENS, 8.0),
                _metric("reasoning.answer_tps", Unit.TOKENS_PER_SECOND, 60.0),
            ),
            # the reasoning field's name is the server's, shown as it sent it
            artifacts={"surface": text, "split": [text], "reasoning_field": text},
        ),
        _case(
            text,
            "trace_replay",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("trace_replay.completed", Unit.COUNT, 7.0),
                _metric("trace_replay.ttft_p90_s", Unit.SECONDS, 0.03),
                _metric("trace_replay.dispatch_lag_max_s", Unit.SECONDS, 0.002),
            ),
            # a trace file's name and shape are the user's text, shown as given
            artifacts={
                "trace": {"file": text, "format": text, "requests": 7, "of": text},
                "speedup": 2.0,
            },
        ),
        _case(
            text,
            "distributed",
            Status.FAILED,
            reason=text,
            metrics=(
                _metric("distributed.prefill_tps", Unit.TOKENS_PER_SECOND, 100.0, 110.0),
                _metric("distributed.rank_peak_memory_bytes", Unit.BYTES, 4096.0),
            ),
            checks=(CheckVerdict("identical_output", CheckStatus.FAIL, text),),
            # a rank's host and reason come from the ranks (a hostfile's names): shown as given
            artifacts={
                "split": text,
                "world_size": 2,
                "hosts": text,
                "ranks": [
                    {
                        "rank": 1,
                        "host": text,
                        "status": text,
                        "reason": text,
                        "peak_memory_bytes": 4096,
                        "rss_bytes": 1 << 20,
                        "link": [
                            {"op": "all_sum", "size_bytes": 4096, "bytes_per_s": 1e6},
                            {"op": text, "size_bytes": 4096, "bytes_per_s": text},
                        ],
                    }
                ],
            },
        ),
        _case(
            text,
            "cancellation",
            Status.FAILED,
            reason=text,
            metrics=(_metric("cancellation.stop_s", Unit.SECONDS, 0.5, 3.0),),
            artifacts={
                "engine": text,
                "route": text,
                "known_load": {"tokens": 100, "seconds": 1.0, "tokens_per_s": 100.0},
                "max_stop_s": 1.0,
                "cold_warm_drift": text,
                "trials": [
                    {
                        "received_tokens": 3,
                        "remaining_s": 2.0,
                        "stop_s": 3.0,
                        "after_same": False,
                        "after_differs": text,
                        "decoded_after": 9,
                    },
                ],
                "checks": [{"name": text, "status": "fail", "reason": text}],
            },
        ),
        _case(
            text,
            "soak",
            Status.FAILED,
            reason=text,
            metrics=(_metric("soak.growth_bytes_per_1000", Unit.BYTES, 5e8),),
            artifacts={
                "engine": text,
                "endpoint": text,
                "measure": text,
                "memory_why_not": text,
                "growth": {"bytes_per_request": 5e5, "low": 4e5, "high": 6e5},
                "memory": _soak_memory(text, charted),
                "windows": [{"first": 0, "last": 9, "e2e_p50_s": 0.1}],
                "drift": {"quantile": 90, "first_s": 0.1, "last_s": 0.2},
                "checks": [{"name": text, "status": "fail", "reason": text}],
            },
        ),
    ]


def _suite(text: str, cases: Sequence[CaseResult]) -> SuiteInfo:
    entry = LedgerEntry(
        source=text,
        status=ExpectKind.XFAIL,
        reason=text,
        model=text,
        scenario=text,
        family=text,
        backend=text,
        link=text,
        recheck="2024-06-01",
        cases=tuple(c.case_id for c in cases),
    )
    return SuiteInfo(name=text, path=text, sha256=text, ledger=(entry,), warnings=(text,))


def _run(texts: Sequence[str], *, baseline: bool) -> RunRecord:
    def pick(k: int) -> str:
        return texts[k % len(texts)]

    cases = {
        text: _model_cases(text, baseline=baseline, charted=n < SOAK_CHARTS)
        for n, text in enumerate(texts)
    }
    if baseline:
        cases = {
            text: [_baseline_metrics(c, sampled=n < CHARTS) for c in cases[text]]
            for n, text in enumerate(texts)
        }
    machine = Machine(
        os="Linux",
        os_release=pick(0),
        arch="x86_64",
        cpu=pick(1),
        cores=2,
        memory_bytes=8 * 1024**3,
        python="3.11.7",
        hostname=pick(2),
        blas=pick(3),
        mlx_device=pick(4),
    )
    packages = {"mlx": "0.29.1", **{text: ("1.0" if baseline else text) for text in texts}}
    return RunRecord(
        schema_version=1,
        run_id=BASELINE_ID if baseline else RUN_ID,
        started_at=STARTED,
        machine=machine,
        packages=packages,
        git_sha=pick(5),
        suites=tuple(_suite(text, cases[text]) for text in texts),
        models={
            text: ModelIdentity(
                key=text,
                path=text,
                backend="mlx_lm",
                revision=text,
                config_sha256=text,
                chat_template_sha256=text,
                weights_bytes=250 * MIB,
                server=text,
                server_models=(text,),
            )
            for text in texts
        },
        results=tuple(c for text in texts for c in cases[text]),
        finished_at="2025-01-01T12:05:00+00:00",
        probes={  # models in pairs of one architecture and size: Models side by side has them
            text: {
                "model_type": texts[i - i % 2],
                "parameters": 1_000_000,
                "chat_template": text,
                "tool_parser": text,
                "skip": text,
            }
            for i, text in enumerate(texts)
        },
    )


def through_record(run: RunRecord, run_dir: Path) -> RunRecord:
    """Write ``run`` as a run writes its ``run.jsonl`` and read it back as reports do."""
    from harness.results.store import write_record

    return write_record(run, run_dir)


def hostile_runs(texts: Sequence[str], workdir: Path) -> tuple[RunRecord, RunRecord]:
    """(baseline, current), each read back from its own run record under ``workdir``."""
    return (
        through_record(_run(texts, baseline=True), workdir / "baseline"),
        through_record(_run(texts, baseline=False), workdir / "current"),
    )
