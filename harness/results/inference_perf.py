"""A run's ``serving`` cases as inference-perf's reports (kubernetes-sigs/inference-perf), so its
users read our load sweeps with their tools (``inference-perf --analyze`` draws the latency and
throughput curves from the stage files).

inference-perf writes, per benchmark, ``stage_N_lifecycle_metrics.json`` (one load stage) and
``summary_lifecycle_metrics.json`` (every stage's requests together), each a ``ResponsesSummary``:
``benchmark_time_seconds``, ``load_summary``, ``successes`` (``count``; ``latency`` with
``request_latency``, ``normalized_time_per_output_token``, ``time_per_output_token``,
``time_to_first_token``, ``inter_token_latency``, each ``{mean, min, max, median, p0.1 ...
p99.9}`` in seconds; ``throughput`` in tokens/s and requests/s; ``output_len``,
``prompt_tokens``, ``output_tokens``, ``goodput_metrics``) and ``failures`` (``count``,
``request_latency``, ``by_label``). One serving case is one benchmark; each of its load points
is one stage, in the order swept.

The statistics are taken again from each point's raw requests in the record (the serving
scenario keeps up to 2000 requests and 5000 token gaps a point: a bigger point's spread is
over those, and ``mlx_harness.requests_kept`` says so), with inference-perf's percentiles and
numpy's interpolation. Throughput is ours: the point's tokens and requests over its duration.
What we do not measure is left empty (``None``): ``schedule_delay`` (we do not record when a
request was due), ``send_duration`` and ``achieved_rate`` of a point whose requests were not
all kept (cut at its deadline, or past 2000: their send times are not in the record),
images/videos/audio, cached prompt tokens, ``token_goodput``; a closed-loop
point has no ``requested_rate``. ITL differs in one way: inference-perf gives every token of a
chunk the chunk's time (0 within a chunk, the whole gap to its first token), ours spreads the
gap over the chunk's tokens; the means agree, the percentiles of chunked streams do not.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from harness.core.types import CaseResult, RunRecord

SERVING = "serving"
PERCENTILES: tuple[float, ...] = (0.1, 1, 5, 10, 25, 50, 75, 90, 95, 99, 99.9)
SUMMARY_FILE = "summary_lifecycle_metrics.json"


def stage_file(index: int) -> str:
    return f"stage_{index}_lifecycle_metrics.json"


def summarize(values: Sequence[float]) -> dict[str, float] | None:
    """inference-perf's ``summarize``: mean, min, max and each percentile (p50 as median)."""
    if not values:
        return None
    import numpy as np

    data = np.asarray(values, dtype=float)
    out = {"mean": float(data.mean()), "min": float(data.min()), "max": float(data.max())}
    for p in PERCENTILES:
        out["median" if p == 50 else f"p{p:g}"] = float(np.percentile(data, p))
    return out


@dataclass(frozen=True)
class Request:
    """One request of a point, as the record keeps it."""

    start_s: float
    ttft_s: float | None
    e2e_s: float
    output_tokens: int
    usage_tokens: int | None
    ok: bool


def requests_of(point: Mapping[str, Any]) -> list[Request]:
    table = point.get("requests") or {}
    columns = ("start_s", "ttft_s", "e2e_s", "output_tokens", "usage_tokens", "ok")
    rows = zip(*(table.get(c) or [] for c in columns), strict=False)
    return [Request(*row) for row in rows]


def _latencies(ok: Sequence[Request], gaps: Sequence[float]) -> dict[str, Any]:
    tpot = [
        (r.e2e_s - r.ttft_s) / (r.output_tokens - 1)
        for r in ok
        if r.ttft_s is not None and r.output_tokens > 1
    ]
    return {
        "request_latency": summarize([r.e2e_s for r in ok]),
        "normalized_time_per_output_token": summarize(
            [r.e2e_s / r.output_tokens if r.output_tokens > 0 else 0.0 for r in ok]
        ),
        "time_per_output_token": summarize(tpot),
        "time_to_first_token": summarize([r.ttft_s for r in ok if r.ttft_s is not None]),
        "inter_token_latency": summarize(gaps),
    }


@dataclass(frozen=True)
class Load:
    """What a stage (or the summary) was: its points' figures added up."""

    duration_s: float
    sent: int
    completed: int
    errors: int
    output_tokens: int
    good: int | None
    prompt_tokens: float | None  # per request (counted, or about as asked)
    error_kinds: tuple[tuple[str, int], ...] = ()


def summary(
    load: Load,
    requests: Sequence[Request],
    gaps: Sequence[float],
    load_summary: Mapping[str, Any],
    extra: Mapping[str, Any],
) -> dict[str, Any]:
    """One ``ResponsesSummary`` as inference-perf dumps it."""
    ok = [r for r in requests if r.ok]
    failed = [r for r in requests if not r.ok]
    per_s = (lambda n: n / load.duration_s) if load.duration_s > 0 else (lambda _n: 0.0)
    input_total = load.prompt_tokens * load.completed if load.prompt_tokens is not None else None
    successes: dict[str, Any] = {
        "count": load.completed,
        "latency": _latencies(ok, gaps),
        "throughput": {
            "input_tokens_per_sec": per_s(input_total) if input_total is not None else None,
            "output_tokens_per_sec": per_s(load.output_tokens),
            "total_tokens_per_sec": (
                per_s(input_total + load.output_tokens) if input_total is not None else None
            ),
            "requests_per_sec": per_s(load.completed),
            "images_per_sec": None,
            "videos_per_sec": None,
            "audios_per_sec": None,
        },
        "request_size_bytes": None,
        "prompt_tokens": (
            {"total": input_total, "cached": None, "uncached": None}
            if input_total is not None
            else None
        ),
        "output_len": summarize([float(r.output_tokens) for r in ok]),
        "output_tokens": _usage(ok),
        "token_count_mismatches": sum(
            1 for r in ok if r.usage_tokens is not None and r.usage_tokens != r.output_tokens
        ),
    }
    if load.good is not None and load.completed:
        successes["goodput_metrics"] = {
            "goodput_percentage": load.good / load.completed * 100,
            "request_goodput": per_s(load.good),
            "token_goodput": None,
            "good_requests": load.good,
            "total_requests": load.completed,
        }
    return {
        "benchmark_time_seconds": load.duration_s,
        "load_summary": dict(load_summary),
        "successes": successes,
        "failures": {
            "count": load.errors,
            "request_latency": summarize([r.e2e_s for r in failed]),
            "prompt_tokens": None,
            "by_label": _by_label(load.error_kinds),
        },
        "mlx_harness": dict(extra),
    }


def _by_label(kinds: Sequence[tuple[str, int]]) -> dict[str, Any]:
    """Each failure reason (one line, ours) with its count, as inference-perf's labels."""
    counts: dict[str, int] = {}
    for reason, count in kinds:
        counts[reason] = counts.get(reason, 0) + count
    return {
        reason: {"count": count, "messages": [{"message": reason, "session_ids": []}]}
        for reason, count in counts.items()
    }


def _usage(ok: Sequence[Request]) -> dict[str, Any] | None:
    counts = [float(r.usage_tokens) for r in ok if r.usage_tokens is not None]
    if not counts:
        return None
    return {"total": sum(counts), **(summarize(counts) or {})}


def _send_duration(requests: Sequence[Request]) -> float:
    starts = [r.start_s for r in requests]
    return max(starts) - min(starts) if starts else 0.0


def _prompt_tokens(result: CaseResult) -> float | None:
    counted = result.artifacts.get("prompt_tokens_counted")
    if isinstance(counted, int) and counted > 0:
        return float(counted)
    asked = {**result.params, **result.point}.get("prompt_tokens")
    return float(asked) if isinstance(asked, int) else None


def _load(point: Mapping[str, Any], prompt: float | None) -> Load:
    return Load(
        duration_s=float(point.get("duration_s") or 0.0),
        sent=int(point.get("sent") or 0),
        completed=int(point.get("completed") or 0),
        errors=int(point.get("errors") or 0),
        output_tokens=int(point.get("output_tokens") or 0),
        good=point.get("good") if isinstance(point.get("good"), int) else None,
        prompt_tokens=prompt,
        error_kinds=tuple((str(r), int(n)) for r, n in point.get("error_kinds") or ()),
    )


@dataclass(frozen=True)
class Benchmark:
    """One serving case's report files: name -> JSON value."""

    case_id: str
    model: str
    files: Mapping[str, dict[str, Any]]


@dataclass(frozen=True)
class InferencePerfReport:
    benchmarks: tuple[Benchmark, ...]

    @property
    def stages(self) -> int:
        return sum(len(b.files) - 1 for b in self.benchmarks)


def benchmark(result: CaseResult) -> Benchmark | None:
    """A serving case's stage files and summary (None: not one, or it has no points)."""
    points = result.artifacts.get("points") if result.scenario == SERVING else None
    if not isinstance(points, list) or not points:
        return None
    prompt = _prompt_tokens(result)
    files: dict[str, dict[str, Any]] = {}
    every: list[Request] = []
    gaps: list[float] = []
    loads: list[Load] = []
    for index, point in enumerate(points):
        requests = requests_of(point)
        load = _load(point, prompt)
        send = _send_duration(requests)
        # requests cut at the point's deadline are not kept: the span of the sends is known
        # only when every request sent is (else both are left empty, not guessed)
        known = len(requests) == load.sent and len(requests) > 1 and send > 0
        load_summary: dict[str, Any] = {
            "count": load.sent,
            "schedule_delay": None,
            "send_duration": send if known else None,
            "requested_rate": point.get("value") if point.get("kind") == "rate" else None,
            "achieved_rate": load.sent / send if known else None,
        }
        if point.get("kind") == "concurrency":
            load_summary["concurrency"] = int(point.get("value") or 0)
        point_gaps = [float(g) for g in point.get("itl_gaps_s") or ()]
        files[stage_file(index)] = summary(
            load,
            requests,
            point_gaps,
            load_summary,
            {
                "case_id": result.case_id,
                "model": result.model,
                "point": point.get("label"),
                "requests_kept": len(requests),
                "requests_of": (point.get("requests") or {}).get("of"),
                "cut": point.get("cut"),
            },
        )
        every.extend(requests)
        gaps.extend(point_gaps)
        loads.append(load)
    total = Load(
        duration_s=sum(x.duration_s for x in loads),
        sent=sum(x.sent for x in loads),
        completed=sum(x.completed for x in loads),
        errors=sum(x.errors for x in loads),
        output_tokens=sum(x.output_tokens for x in loads),
        good=(
            sum(x.good for x in loads if x.good is not None)
            if all(x.good is not None for x in loads)
            else None
        ),
        prompt_tokens=prompt,
        error_kinds=tuple(kind for x in loads for kind in x.error_kinds),
    )
    files[SUMMARY_FILE] = summary(
        total,
        every,
        gaps,
        {"count": total.sent, "schedule_delay": None},
        {"case_id": result.case_id, "model": result.model, "stages": len(points)},
    )
    return Benchmark(result.case_id, result.model, files)


def inference_perf_report(run: RunRecord) -> InferencePerfReport:
    """Every serving case of the run with load points, in the run's order."""
    return InferencePerfReport(
        tuple(b for result in run.results if (b := benchmark(result)) is not None)
    )
