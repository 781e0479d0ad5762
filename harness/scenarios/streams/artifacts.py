"""From a load point's replies to what the record keeps: each request's figures, its error as
one line, and the point's summary with the raw per-request samples (bounded), so a report can
redraw latency and throughput curves without the run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from harness.backends.openai_client import StreamReply, token_arrivals
from harness.scenarios.streams.loop import LoopRun, Sent
from harness.scenarios.streams.schedule import LoadPoint
from harness.scenarios.streams.stats import Percentiles, PointStats, RequestSample

REASON_CHARS = 200
SAMPLES_KEPT = 2000  # requests a point keeps in its artifacts (in the order they were sent)
GAPS_KEPT = 5000  # per-token gaps a point keeps
DIGITS = 6  # seconds rounded to the microsecond in artifacts


def one_line(text: str, limit: int = REASON_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def reply_error(reply: StreamReply) -> str | None:
    """Why a streamed request did not complete, in one line (None: it did): the HTTP status
    with what the server said, the client's error, or what the stream lacked."""
    failure = reply.failure
    if failure is not None:
        return one_line(failure)
    if not reply.done:
        return "the stream ended without [DONE]"
    if not reply.content_chunks:
        return "no generated text in the stream"
    return None


def request_sample(
    sent: Sent[StreamReply], count_tokens: Callable[[str], int] | None
) -> RequestSample:
    """One request's figures, its tokens counted per chunk with ``count_tokens`` (one a chunk
    without it, as other benchmarks always count)."""
    reply = sent.result
    arrivals = token_arrivals(reply.chunks, count_tokens)
    return RequestSample(
        index=sent.index,
        start_s=sent.start_s,
        error=reply_error(reply),
        ttft_s=arrivals.ttft_s,
        e2e_s=reply.elapsed_s,
        output_tokens=arrivals.tokens,
        itl_s=tuple(arrivals.inter_token_s()),
        usage_tokens=_usage_tokens(reply),
        text_chunks=len(arrivals.chunk_tokens),
    )


def _usage_tokens(reply: StreamReply) -> int | None:
    value = reply.usage.get("completion_tokens")
    return value if isinstance(value, int) else None


def _seconds(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def _spread(p: Percentiles) -> dict[str, Any]:
    return {"n": p.n, "p50": p.values[0], "p90": p.values[1], "p99": p.values[2]}


def point_record(
    point: LoadPoint,
    run: LoopRun[StreamReply],
    stats: PointStats,
    samples: Sequence[RequestSample],
) -> dict[str, Any]:
    """The point's summary and raw samples as JSON values."""
    ordered = sorted(samples, key=lambda s: s.start_s)[:SAMPLES_KEPT]
    gaps = [round(g, DIGITS) for s in ordered if s.ok for g in s.itl_s][:GAPS_KEPT]
    return {
        "key": point.key,
        "kind": point.kind.value,
        "value": point.value,
        "label": point.label,
        "sent": stats.sent,
        "completed": stats.completed,
        "errors": stats.errors,
        "cut": stats.cut,
        "duration_s": round(stats.duration_s, DIGITS),
        "hit_deadline": run.hit_deadline,
        "max_in_flight": run.max_in_flight,
        "output_tokens": stats.output_tokens,
        "ttft_s": _spread(stats.ttft),
        "tpot_s": _spread(stats.tpot),
        "itl_s": _spread(stats.itl),
        "e2e_s": _spread(stats.e2e),
        "usage_agrees": all(
            s.usage_tokens is None or s.usage_tokens == s.output_tokens for s in samples if s.ok
        ),
        "good": stats.good,
        "slo_verdict": stats.slo_verdict.value,
        "error_kinds": [[reason, count] for reason, count in stats.error_kinds],
        "requests": {
            "index": [s.index for s in ordered],
            "start_s": [_seconds(s.start_s) for s in ordered],
            "ttft_s": [_seconds(s.ttft_s) for s in ordered],
            "e2e_s": [_seconds(s.e2e_s) for s in ordered],
            "output_tokens": [s.output_tokens for s in ordered],
            "usage_tokens": [s.usage_tokens for s in ordered],
            "text_chunks": [s.text_chunks for s in ordered],
            "ok": [s.ok for s in ordered],
            "kept": len(ordered),
            "of": len(samples),
        },
        "itl_gaps_s": gaps,
    }
