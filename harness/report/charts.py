"""The Charts section: pictures of what the tables hold, each only when the run has its data.

Decode and prefill speed against prompt length and KV depth per model, predicted against
measured MLX peak, prompt-cache speedup against the share of the prompt reused (with the ideal
curve), latency percentiles under load per served case, and the share of the hardware's
bandwidth ceiling reached (a case whose ceiling is invalid, a share above 100%, left out).
Every chart keeps its points in a data table one click away.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Unit
from harness.report.batch_generate import batch_sizes
from harness.report.ceilings import invalid_shares
from harness.report.chart_model import Chart, lines_from, median, xy_chart
from harness.report.chart_svg import Guide
from harness.report.formatting import MIB, Scale, params_label
from harness.report.sections import OPENING, Section
from harness.results.preflight_record import peak_check
from harness.scenarios import batch_generate, throughput
from harness.scenarios import prompt_cache as pc
from harness.scenarios.quant_sweep import metrics as quant
from harness.scenarios.quant_sweep.artifacts import QuantSweepArtifacts
from harness.scenarios.serving.record import ServingArtifacts
from harness.scenarios.streams.metrics import PREFIX as SERVING_PREFIX
from harness.scenarios.streams.stats import QUANTILES

MAX_LOAD_CHARTS = 6  # served cases drawn; the Serving section's tables hold every one
PERCENT = Scale(0.01, 0, "% of ceiling")
MIB_SCALE = Scale(MIB, 1, "MiB")


@dataclass(frozen=True)
class Charts:
    charts: tuple[Chart, ...]


def _int_param(result: CaseResult, name: str) -> int:
    value = result.point.get(name, result.params.get(name))
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _others(result: CaseResult, axis: str) -> str:
    """The series a throughput case belongs to: its model and the swept values but ``axis``."""
    rest = {k: v for k, v in result.point.items() if k != axis}
    label = params_label(rest, {}) if rest else ""
    return f"{result.model} · {label}" if label and label != "—" else result.model


def _speed_charts(results: Sequence[CaseResult]) -> list[Chart]:
    charts = []
    axes = (("prompt_tokens", "prompt length"), ("depth", "KV depth"))
    metrics = ((throughput.DECODE, "decode"), (throughput.PREFILL, "prefill"))
    for axis, axis_label in axes:
        for spec, word in metrics:
            groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
            for r in results:
                value = median(r.metric(spec.name))
                if value is not None and axis in r.point:  # swept here, not a fixed param
                    groups[_others(r, axis)].append((_int_param(r, axis), value))
            xs = {x for points in groups.values() for x, _ in points}
            if len(xs) < 2:
                continue  # one length is a table row, not a curve
            charts.append(
                xy_chart(
                    f"{word}-vs-{axis}",
                    f"{word.capitalize()} speed vs {axis_label}",
                    f"Median {word} tokens per second at each {axis_label} (higher is better).",
                    lines_from(groups),
                    x_label=axis_label,
                    x_unit="tokens",
                    y_label=word,
                    y_unit=Unit.TOKENS_PER_SECOND,
                    log_x=min(xs) > 0 and max(xs) / min(xs) >= 8,
                    ticks_at_data=True,
                )
            )
    return charts


def _roofline_chart(results: Sequence[CaseResult]) -> list[Chart]:
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        if throughput.SHARE.name in invalid_shares(r):
            continue  # a share above 100%: the ceiling was wrong, not a point to draw
        share = median(r.metric(throughput.SHARE.name))
        if share is not None:
            context = _int_param(r, "prompt_tokens") + _int_param(r, "depth")
            groups[r.model].append((context, share))
    if not groups:
        return []
    xs = sorted({x for points in groups.values() for x, _ in points})
    return [
        xy_chart(
            "roofline-share",
            "Decode speed as a share of the memory-bandwidth ceiling",
            "Decode tok/s / (the device's measured memory read bandwidth / bytes read per "
            "token); the dotted line is the hardware's ceiling (100%), which no run can pass: "
            "a case whose ceiling is invalid is left out.",
            lines_from(groups),
            x_label="context",
            x_unit="tokens",
            y_label="share",
            y_unit=Unit.RATIO,
            y_scale=PERCENT,
            dots=len(xs) < 2,
            guides=(Guide((xs[0], xs[-1]), (1.0, 1.0)),),
        )
    ]


def _memory_chart(results: Sequence[CaseResult]) -> list[Chart]:
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        check = peak_check(r)
        if check is None or not check.comparable or check.measured_bytes is None:
            continue
        groups[r.model].append((check.predicted_bytes / MIB, check.measured_bytes))
    if not groups:
        return []
    top = max(max(x for x, _ in p) for p in groups.values())
    top = max(top, max(y / MIB for p in groups.values() for _, y in p))
    return [
        xy_chart(
            "memory-predicted",
            "MLX peak per model: predicted vs measured",
            "One dot per case; on the dotted line the probe's estimate equals the allocator's "
            "peak, above it the estimate was low.",
            lines_from(groups),
            x_label="predicted",
            x_unit="MiB",
            y_label="measured",
            y_unit=Unit.BYTES,
            y_scale=MIB_SCALE,
            log_y_allowed=False,  # against a linear x: y = x must stay a straight line
            dots=True,
            guides=(Guide((0.0, top), (0.0, top * MIB)),),
        )
    ]


def _cache_chart(results: Sequence[CaseResult]) -> list[Chart]:
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        speedup = median(r.metric(pc.SPEEDUP.name))
        reused, recomputed = median(r.metric(pc.REUSED.name)), median(r.metric(pc.RECOMPUTED.name))
        if speedup is None or reused is None or recomputed is None or reused + recomputed <= 0:
            continue
        groups[r.model].append((reused / (reused + recomputed), speedup))
    if not groups:
        return []
    top = min(0.97, max(x for points in groups.values() for x, _ in points))
    ideal_x = tuple(top * i / 24 for i in range(25))
    return [
        xy_chart(
            "cache-speedup",
            "Prompt-cache speedup vs share of the prompt reused",
            "Cold TTFT / warm TTFT against reused / (reused + recomputed) tokens; the dotted "
            "curve is the ideal 1 / (1 − reused share).",
            lines_from(groups),
            x_label="reused share",
            x_unit="",
            y_label="speedup",
            y_unit=Unit.RATIO,
            dots=len({x for p in groups.values() for x, _ in p}) < 2,
            guides=(Guide(ideal_x, tuple(1 / (1 - x) for x in ideal_x)),),
        )
    ]


def _load_charts(results: Sequence[CaseResult]) -> list[Chart]:
    charts = []
    served = sorted((r for r in results if r.scenario == "serving"), key=lambda r: r.case_id)
    for index, r in enumerate(served[:MAX_LOAD_CHARTS]):
        points = ServingArtifacts.of(r).points
        kinds = {p.kind for p in points}
        groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
        for p in points:
            if p.value is None:
                continue
            for q in QUANTILES:
                found = median(r.metric(f"{SERVING_PREFIX}.{p.key}.ttft_p{q}_s"))
                if found is not None:
                    groups[f"TTFT p{q}"].append((p.value, found))
        if not groups:
            continue
        kind = kinds.pop() if len(kinds) == 1 else None
        x_label = "concurrency" if kind == "concurrency" else "offered load"
        charts.append(
            xy_chart(
                f"load-{index}",
                f"Time to first token under load: {r.model} · {r.case_id.rsplit('::', 1)[-1]}",
                "TTFT percentiles at each load point (lower is better).",
                lines_from(groups),
                x_label=x_label,
                x_unit="requests" if x_label == "concurrency" else "req/s",
                y_label="TTFT",
                y_unit=Unit.SECONDS,
                ticks_at_data=True,
            )
        )
    return charts


def _batch_chart(results: Sequence[CaseResult]) -> list[Chart]:
    """Per-request decode tok/s against the batch's total, a point per batch size (vLLM's
    ``bench sweep`` trade-off): up and to the right is better; each model's curve is what one
    user gives up for the batch's total."""
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        if r.scenario != batch_generate.SCENARIO.name:
            continue
        for size in batch_sizes(r):
            total = median(r.metric(batch_generate.DECODE.name(size)))
            one = median(r.metric(batch_generate.PER_REQUEST.name(size)))
            if total is not None and one is not None:
                groups[r.model].append((total, one))
    if not groups:
        return []
    return [
        xy_chart(
            "batch-per-user-vs-total",
            "Batched decode: per request vs total",
            "Median decode tokens per second of one request against the whole batch's, a "
            "point per batch size (batch size 1 at the top left; up and right is better).",
            lines_from(groups),
            x_label="total decode",
            x_unit="tok/s",
            y_label="per request",
            y_unit=Unit.TOKENS_PER_SECOND,
        )
    ]


def _quant_chart(results: Sequence[CaseResult]) -> list[Chart]:
    """KL against the model as loaded over the weight bytes kept, a series per weight
    quantisation mode (a dot per model): down and left is better."""
    groups: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for r in results:
        if r.scenario != "quant_sweep":
            continue
        kept, kl = median(r.metric(quant.WEIGHT_RATIO.name)), median(r.metric(quant.KL.name))
        label = QuantSweepArtifacts.of(r).quant or r.params.get("quant")
        if kept is not None and kl is not None and isinstance(label, str) and label != "none":
            groups[label].append((kept, kl))
    if not groups:
        return []
    return [
        xy_chart(
            "quant-kl-vs-bytes",
            "Weight quantisation: quality vs weight bytes",
            "Mean KL(as loaded || quantised) of the next-token distributions against the share "
            "of the weight bytes kept, a dot per model in each mode (lower left is better).",
            lines_from(groups),
            x_label="weight bytes kept",
            x_unit="x",
            y_label="KL",
            y_unit=Unit.SCORE,
            log_y_allowed=False,
            dots=True,
        )
    ]


BUILDERS: tuple[Callable[[Sequence[CaseResult]], list[Chart]], ...] = (
    _speed_charts,
    _roofline_chart,
    _memory_chart,
    _cache_chart,
    _load_charts,
    _batch_chart,
    _quant_chart,
)


def build_charts(run: RunRecord) -> list[Chart]:
    """The charts that show something (points at two x positions or more); the data of the
    others is in the report's tables."""
    found = (chart for builder in BUILDERS for chart in builder(run.results))
    return [chart for chart in found if chart.shows_something]


def build(run: RunRecord) -> Charts | None:
    charts = build_charts(run)
    return Charts(tuple(charts)) if charts else None


SECTION = Section("charts", "Charts", build, order=OPENING + 20)
