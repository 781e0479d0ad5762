"""The summary printed at the end of a run: a compact fixed-width table per scenario with that
scenario's headline figures (decode tok/s, cache speedup, load time, accuracy, WER...), then the
status counts. Plain text, no colours: it reads the same in a terminal and a CI log, and every
name in it has been through :func:`harness.report.escape.plain`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report.batch_generate import batch_sizes
from harness.report.escape import plain
from harness.report.formatting import MISSING, format_value, params_label
from harness.report.header import count_statuses
from harness.report.table import stats


@dataclass(frozen=True)
class Headline:
    """A figure a scenario is judged by: its metric (without the scenario prefix), a header."""

    metric: str
    header: str


_THROUGHPUT = (
    Headline("decode_tps", "decode tok/s"),
    Headline("prefill_tps", "prefill tok/s"),
    Headline("ttft_s", "TTFT"),
)

# scenario -> its headline figures; a scenario not named here shows its first three metrics
HEADLINES: dict[str, tuple[Headline, ...]] = {
    "throughput": _THROUGHPUT,
    "http_throughput": _THROUGHPUT,
    "vision_throughput": (
        Headline("decode_tps", "decode tok/s"),
        Headline("ttft_s", "TTFT"),
        Headline("preprocess_s", "preprocess"),
    ),
    "load": (
        Headline("load_s", "load time"),
        Headline("weights_bytes", "weights"),
        Headline("mlx_peak_bytes", "peak memory"),
    ),
    "prompt_cache": (
        Headline("speedup_x", "cache speedup"),
        Headline("ttft_warm_s", "TTFT warm"),
        Headline("ttft_cold_s", "TTFT cold"),
    ),
    "http_prompt_cache": (
        Headline("speedup", "cache speedup"),
        Headline("warm_ttft_s", "TTFT warm"),
        Headline("cold_ttft_s", "TTFT cold"),
    ),
    "prompt_cache_lru": (
        Headline("hit_rate", "hit rate"),
        Headline("reused_share", "reused"),
        Headline("evictions", "evictions"),
    ),
    "quality": (
        Headline("perplexity", "perplexity"),
        Headline("token_agreement", "agreement"),
        Headline("kl_divergence", "KL"),
    ),
    "toolcalls_corpus": (
        Headline("accuracy", "accuracy"),
        Headline("scored", "scored"),
        Headline("unexpected", "unexpected"),
    ),
    "tool_calls": (
        Headline("markup_parse_share", "parsed"),
        Headline("stream_parity_share", "stream parity"),
        Headline("dropped_calls", "dropped calls"),
    ),
    "speech_to_text": (
        Headline("wer", "WER"),
        Headline("rtf", "RTF"),
        Headline("transcribe_s", "transcribe"),
    ),
    "api_contracts": (
        Headline("passed", "checks passed"),
        Headline("failed", "failed"),
        Headline("not_applicable", "n/a"),
    ),
}
BATCH_GENERATE = "batch_generate"  # headlines named for its batch sizes (_batch_headlines)
FALLBACK_HEADLINES = 3
SHARES = ("share", "rate", "accuracy", "agreement", "wer", "cer")  # ratios read as percentages
# (header, widest allowed) of the columns every table has
# (a status is never cut: its column is as wide as the longest status)
FIXED: tuple[tuple[str, int], ...] = (
    ("model", 32),
    ("point", 24),
    ("status", max(len(s.value) for s in Status)),
)
WIDEST_FIGURE = 14


def _batch_headlines(results: Sequence[CaseResult]) -> tuple[Headline, ...]:
    """``batch_generate``: decode tok/s alone and at the largest batch, in total and per
    request (its metrics are named for the batch sizes the suite chose)."""
    sizes = {s for r in results for s in batch_sizes(r)}
    if not sizes:
        return ()
    one, most = min(sizes), max(sizes)
    return (
        Headline(f"b{one}.decode_tps", f"b{one} decode"),
        Headline(f"b{most}.decode_tps", f"b{most} decode"),
        Headline(f"b{most}.decode_tps_per_request", f"b{most} per req"),
    )


def _headlines(scenario: str, results: Sequence[CaseResult]) -> tuple[Headline, ...]:
    if scenario == BATCH_GENERATE:
        return _batch_headlines(results)
    if scenario in HEADLINES:
        return HEADLINES[scenario]
    names: dict[str, None] = {}
    for result in results:
        for metric in result.metrics:
            short = metric.name.removeprefix(f"{scenario}.")
            if not metric.name.startswith("memory."):
                names.setdefault(short, None)
    return tuple(Headline(n, n.replace("_", " ")) for n in list(names)[:FALLBACK_HEADLINES])


def _figure(result: CaseResult, headline: Headline) -> str:
    """The median of a headline metric, in a unit chosen for its size (ms or s, MiB or GiB)."""
    metric = result.metric(f"{result.scenario}.{headline.metric}")
    if metric is None:
        return ""
    st = stats(metric)
    if st.n == 0:
        return MISSING
    if metric.unit is Unit.TOKENS_PER_SECOND:
        return f"{st.median:,.1f}" if st.median < 10_000 else f"{st.median / 1000:,.1f}k"
    if metric.unit is Unit.RATIO and any(word in headline.metric for word in SHARES):
        return f"{st.median:.1%}"
    if metric.unit is Unit.COUNT:
        return f"{st.median:g}"
    return format_value(st.median, metric.unit)


def _table(scenario: str, results: Sequence[CaseResult]) -> list[str]:
    headlines = _headlines(scenario, results)
    rows = [
        (
            r.model,
            params_label(r.point, r.params),
            r.status.value,
            *(_figure(r, h) for h in headlines),
        )
        for r in results
    ]
    columns = [*FIXED, *((h.header, WIDEST_FIGURE) for h in headlines)]
    # only the columns that have a value somewhere (the point and figures may all be empty)
    keep = [
        i
        for i in range(len(columns))
        if i in (0, 2) or any(row[i] not in ("", MISSING) for row in rows)
    ]
    header = tuple(columns[i][0] for i in keep)
    body = [tuple(row[i] for i in keep) for row in rows]
    widths = [
        min(columns[i][1], max(len(header[j]), *(len(plain(row[j])) for row in body)))
        for j, i in enumerate(keep)
    ]
    figures_from = sum(1 for i in keep if i < len(FIXED))
    lines = []
    for row in [header, *body]:
        cells = []
        for j, (text, width) in enumerate(zip(row, widths, strict=True)):
            text = plain(text, width)
            cells.append(text.rjust(width) if j >= figures_from else text.ljust(width))
        lines.append("  " + "  ".join(cells).rstrip())
    widest = max(len(line) for line in lines)
    return [plain(scenario), lines[0], "  " + "-" * (widest - 2), *lines[1:]]


def status_line(run: RunRecord) -> str:
    counts = ", ".join(f"{c.count} {c.status}" for c in count_statuses(run))
    line = f"{len(run.results)} cases: {counts or 'none'}"
    if run.finished_at is None:
        line += " (INCOMPLETE RUN: no finish record)"
    return line


def terminal_summary(run: RunRecord) -> list[str]:
    """Lines to print at the end of a run: a table per scenario, then the status counts."""
    by_scenario: dict[str, list[CaseResult]] = {}
    for result in run.results:
        by_scenario.setdefault(result.scenario, []).append(result)
    lines = [f"mlx-harness run {plain(run.run_id)}"]
    for scenario, results in by_scenario.items():
        lines.extend(_table(scenario, results))
    lines.append(status_line(run))
    return lines
