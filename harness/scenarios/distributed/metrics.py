"""``distributed``'s metrics: the sharded model's speed (rank 0's clock: every rank steps
together), the same against the model in one process, and the ranks' memory."""

from __future__ import annotations

from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Unit

PREFIX = "distributed."

PREFILL = MetricSpec(
    f"{PREFIX}prefill_tps", Unit.TOKENS_PER_SECOND, True, "prompt tokens / time to first token"
)
DECODE = MetricSpec(f"{PREFIX}decode_tps", Unit.TOKENS_PER_SECOND, True, "generated tokens/s")
TTFT = MetricSpec(f"{PREFIX}ttft_s", Unit.SECONDS, False, "time to first token", noise_floor=0.05)
SINGLE_PREFILL = MetricSpec(
    f"{PREFIX}single_prefill_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "prefill tok/s of the same model in one process (the worker's)",
)
SINGLE_DECODE = MetricSpec(
    f"{PREFIX}single_decode_tps",
    Unit.TOKENS_PER_SECOND,
    True,
    "decode tok/s of the same model in one process",
)
SINGLE_TTFT = MetricSpec(
    f"{PREFIX}single_ttft_s",
    Unit.SECONDS,
    False,
    "time to first token of the same model in one process",
    noise_floor=0.05,
)
PREFILL_RATIO = MetricSpec(
    f"{PREFIX}prefill_vs_single",
    Unit.RATIO,
    True,
    "prefill tok/s / the same model's in one process",
    noise_floor=0.05,
)
DECODE_RATIO = MetricSpec(
    f"{PREFIX}decode_vs_single",
    Unit.RATIO,
    True,
    "decode tok/s / the same model's in one process",
    noise_floor=0.05,
)
PEAK_MEMORY = MetricSpec(
    f"{PREFIX}rank_peak_memory_bytes",
    Unit.BYTES,
    False,
    "the largest rank's MLX peak memory over its runs (mx.get_peak_memory)",
    varies_by=VariesBy.CASE,
)
RSS = MetricSpec(
    f"{PREFIX}rank_rss_bytes",
    Unit.BYTES,
    False,
    "the largest rank's resident set high-water mark",
    varies_by=VariesBy.CASE,
)

TIMED = (PREFILL, DECODE, TTFT, SINGLE_PREFILL, SINGLE_DECODE, SINGLE_TTFT)
ALL = (*TIMED, PREFILL_RATIO, DECODE_RATIO, PEAK_MEMORY, RSS)
