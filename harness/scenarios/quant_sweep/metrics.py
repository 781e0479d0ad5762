"""``quant_sweep``'s metrics: memory, speed and the hardware share of the quantised model,
its quality against the model as loaded, and its matmul against its own weights dequantised."""

from __future__ import annotations

from harness.core.metrics import MetricSpec, VariesBy
from harness.core.types import Unit

PREFIX = "quant_sweep."

WEIGHT_BYTES = MetricSpec(
    f"{PREFIX}weight_bytes",
    Unit.BYTES,
    False,
    "bytes of the model's parameters as quantised (data, scales and biases)",
    varies_by=VariesBy.CASE,
)
WEIGHT_RATIO = MetricSpec(
    f"{PREFIX}weight_bytes_ratio",
    Unit.RATIO,
    False,
    "weight bytes / the model's as loaded",
    varies_by=VariesBy.CASE,
)
PREFILL = MetricSpec(
    f"{PREFIX}prefill_tps", Unit.TOKENS_PER_SECOND, True, "prompt tokens / time to first token"
)
DECODE = MetricSpec(f"{PREFIX}decode_tps", Unit.TOKENS_PER_SECOND, True, "generated tokens/s")
PREFILL_RATIO = MetricSpec(
    f"{PREFIX}prefill_vs_reference",
    Unit.RATIO,
    True,
    "prefill tok/s / the model's as loaded, the runs interleaved",
    noise_floor=0.05,
)
DECODE_RATIO = MetricSpec(
    f"{PREFIX}decode_vs_reference",
    Unit.RATIO,
    True,
    "decode tok/s / the model's as loaded, the runs interleaved",
    noise_floor=0.05,
)
DECODE_SHARE = MetricSpec(
    f"{PREFIX}decode_hw_share",
    Unit.RATIO,
    True,
    "decode tok/s as a share of the bandwidth-bound ceiling (the device's memory read "
    "bandwidth / the quantised model's bytes per token; left out above 1)",
)
PREFILL_SHARE = MetricSpec(
    f"{PREFIX}prefill_hw_share",
    Unit.RATIO,
    True,
    "prefill tok/s as a share of the compute-bound ceiling (the device's float32 matmul "
    "FLOP/s / matmul FLOPs per token; left out above 1)",
)
AGREEMENT = MetricSpec(
    f"{PREFIX}first_token_agreement",
    Unit.RATIO,
    True,
    "1 when the first greedy token equals the model's as loaded, else 0",
    varies_by=VariesBy.CASE,
)
KL = MetricSpec(
    f"{PREFIX}kl",
    Unit.SCORE,
    False,
    "mean KL(as loaded || quantised) of the next-token distributions over the generated "
    "positions, teacher-forced on the greedy tokens of the model as loaded (nats)",
    noise_floor=0.05,
    varies_by=VariesBy.CASE,
)
DIVERGENCE = MetricSpec(
    f"{PREFIX}divergence_token",
    Unit.TOKENS,
    True,
    "first generated position whose greedy token differs from the model's as loaded "
    "(gen_tokens when none does)",
    varies_by=VariesBy.CASE,
)
MATMUL_KL = MetricSpec(
    f"{PREFIX}matmul_kl",
    Unit.SCORE,
    False,
    "mean KL(dequantised twin || quantised) over the generated positions (nats): the same "
    "quantised weights through mlx's quantised matmul and through a plain one; rounding only, "
    "unless a kernel is wrong",
    varies_by=VariesBy.CASE,
)
MATMUL_DIVERGENCE = MetricSpec(
    f"{PREFIX}matmul_divergence_token",
    Unit.TOKENS,
    True,
    "first generated position whose greedy token differs from the dequantised twin's "
    "(gen_tokens when none does)",
    varies_by=VariesBy.CASE,
)

QUALITY: tuple[MetricSpec, ...] = (
    WEIGHT_BYTES,
    WEIGHT_RATIO,
    AGREEMENT,
    KL,
    DIVERGENCE,
    MATMUL_KL,
    MATMUL_DIVERGENCE,
)
TIMED: tuple[MetricSpec, ...] = (PREFILL, DECODE, PREFILL_RATIO, DECODE_RATIO)
SHARES: tuple[MetricSpec, ...] = (DECODE_SHARE, PREFILL_SHARE)
ALL: tuple[MetricSpec, ...] = (*QUALITY, *TIMED, *SHARES)
