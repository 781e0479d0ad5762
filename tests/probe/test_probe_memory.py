"""Memory estimates: structure on hand-made architectures, and accuracy against MLX's own peak.

The accuracy test loads each zoo text family with mlx-lm, in a fresh process with a worker's
environment (OpenBLAS preloaded on Linux), and runs mlx-lm's prefill + decode loop
(``generate_step``, 4 generated tokens) at 64 and 512 tokens of context, with
``mx.reset_peak_memory()`` before each run; the median of three runs must be within 25% of the
estimate's ``mlx_peak_bytes``. Tiny models are dominated by the KV cache's 256-token allocation
step and by prefill activations (attention scores grow with the square of the prompt), which
the estimate models for every family alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

import pytest

from harness.models.zoo.families import FAMILIES
from harness.probe.installed import Stack
from harness.probe.memory import activation_bytes, estimate_memory, kv_cache_bytes
from harness.probe.probe import probe_model
from harness.probe.types import TextArch
from harness.runner.blas import worker_env

TEXT_FAMILIES = [name for name, f in FAMILIES.items() if f.backend == "mlx_lm"]
CONTEXTS = (64, 512)
TOLERANCE = 0.25
GENERATED = 4


def _arch(**kw: object) -> TextArch:
    base = TextArch(hidden_size=64, num_layers=4, num_heads=4, num_kv_heads=2, head_dim=16,
                    intermediate_size=128, vocab_size=512, layer_kinds=("full",) * 4)  # fmt: skip
    return replace(base, **kw)  # type: ignore[arg-type]


def test_kv_cache_rounds_to_mlx_lm_steps() -> None:
    arch = _arch()
    per_token_layer = 2 * 2 * 16 * 2
    assert kv_cache_bytes(arch, 1, 2, chunk=2048, step=256) == 4 * 256 * per_token_layer
    # growing past the first allocation: one layer is mid-concatenation at the peak
    assert kv_cache_bytes(arch, 3000, 2, chunk=2048, step=256) == 5 * 3072 * per_token_layer


def test_sliding_layers_hold_their_window_plus_a_chunk() -> None:
    arch = _arch(layer_kinds=("sliding", "sliding", "sliding", "full"), sliding_window=1024)
    per = 2 * 2 * 16 * 2
    full = 32768 * per + 32768 * per  # full layer + one layer growing
    assert kv_cache_bytes(arch, 32768, 2, chunk=2048, step=256) == full + 3 * (1023 + 2048) * per
    assert kv_cache_bytes(arch, 100, 2, chunk=2048, step=256) == 3 * 256 * per + 256 * per


def test_hybrid_counts_only_attention_layers(tmp_path: Path, stack: Stack,
                                             zoo_dirs: Mapping[str, Path]) -> None:  # fmt: skip
    probe = probe_model(zoo_dirs["lfm2"], stack=stack)
    assert probe.text is not None
    assert probe.text.layer_kinds == ("conv", "full", "conv")
    estimate = estimate_memory(probe, 512)
    assert estimate.kv_cache_bytes == 512 * 2 * 2 * 16 * 4  # one attention layer, float32
    assert estimate.state_bytes == 2 * (3 - 1) * 64 * 4  # two conv layers: (L_cache-1) x hidden


def test_moe_uses_top_k_expert_width(stack: Stack, zoo_dirs: Mapping[str, Path]) -> None:
    probe = probe_model(zoo_dirs["qwen3_moe"], stack=stack)
    assert probe.text is not None and probe.text.intermediate_size == 2 * 32
    assert probe.active_parameters is not None and probe.parameters is not None
    assert probe.active_parameters < probe.parameters


def test_fused_attention_drops_the_score_term() -> None:
    arch = _arch()
    cpu = activation_bytes(arch, 1024, 2, chunk=2048, fused=False)
    metal = activation_bytes(arch, 1024, 2, chunk=2048, fused=True)
    assert cpu - metal == int(1.25 * 1024 * 1024 * 4 * 4)


def test_no_decoder_dimensions_is_flagged(row_paths: Mapping[str, Path], stack: Stack) -> None:
    estimate = estimate_memory(probe_model(row_paths["zoo/whisper"], stack=stack), 448)
    assert estimate.kv_cache_bytes == 0 and estimate.approximate
    assert estimate.mlx_peak_bytes == estimate.weights_bytes


# the measurement, in a fresh process as the harness's workers measure: MLX's peak in a
# process that ran other models first differs (lfm2 @ 64: 1.04 MB fresh, 1.28 MB after a
# Whisper transcription in the same test process)
MEASURE = """
import gc, json, statistics, sys
import mlx.core as mx
from mlx_lm import load
from mlx_lm.generate import generate_step
from mlx_lm.models.cache import make_prompt_cache

dirs, contexts, generated = json.loads(sys.argv[1])
peaks = []
for name, path in dirs.items():
    model = load(path)[0]
    for context in contexts:
        runs = []
        for _ in range(3):
            gc.collect()
            mx.clear_cache()
            mx.reset_peak_memory()
            cache = make_prompt_cache(model)
            prompt = mx.array([(i * 7) % 400 + 50 for i in range(context - generated)])
            for _ in generate_step(prompt, model, max_tokens=generated, prompt_cache=cache):
                pass
            runs.append(int(mx.get_peak_memory()))
            del cache
        peaks.append([name, context, int(statistics.median(runs))])
    del model
print(json.dumps(peaks))
"""


@pytest.fixture(scope="module")
def measured(zoo_dirs: Mapping[str, Path]) -> Mapping[tuple[str, int], int]:
    """Median MLX peak of prefill + decode, per (family, context), in a worker's environment."""
    dirs = {name: str(zoo_dirs[name]) for name in TEXT_FAMILIES}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps([dirs, CONTEXTS, GENERATED])],
        env=worker_env(os.environ),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return {(name, context): peak for name, context, peak in json.loads(done.stdout)}


@pytest.mark.parametrize("context", CONTEXTS)
@pytest.mark.parametrize("name", TEXT_FAMILIES)
def test_estimate_matches_measured_peak(
    name: str, context: int, measured: Mapping[tuple[str, int], int],
    zoo_dirs: Mapping[str, Path], stack: Stack,
) -> None:  # fmt: skip
    estimate = estimate_memory(probe_model(zoo_dirs[name], stack=stack), context)
    peak = measured[(name, context)]
    ratio = estimate.mlx_peak_bytes / peak
    assert abs(ratio - 1) <= TOLERANCE, (
        f"{name} @ {context}: estimate {estimate.mlx_peak_bytes} B vs measured {peak} B "
        f"(x{ratio:.2f}; weights {estimate.weights_bytes}, kv {estimate.kv_cache_bytes}, "
        f"activations {estimate.activation_bytes})"
    )


def test_prompt_sizes_prefill_and_the_context_sizes_the_cache(
    stack: Stack, zoo_dirs: Mapping[str, Path]
) -> None:
    """Generated tokens are decoded one row at a time: only the prompt goes through prefill."""
    probe = probe_model(zoo_dirs["llama"], stack=stack)
    whole = estimate_memory(probe, 1040)
    split = estimate_memory(probe, 1040, prompt_tokens=1024)
    assert split.prompt_tokens == 1024 and whole.prompt_tokens is None
    assert split.activation_bytes < whole.activation_bytes
    assert split.weights_bytes == whole.weights_bytes
    # the cache grows past its first (prompt-sized) allocation while decoding: one layer concats
    per_token_layer = 2 * 2 * 16 * 4
    assert whole.kv_cache_bytes == 2 * 1280 * per_token_layer
    assert split.kv_cache_bytes == 3 * 1280 * per_token_layer
    with pytest.raises(ValueError, match="prompt_tokens"):
        estimate_memory(probe, 100, prompt_tokens=101)


def test_scoring_keeps_every_positions_logits() -> None:
    """A forward pass that scores the text keeps logits for every position, not the last."""
    arch = TextArch(
        hidden_size=64,
        num_layers=2,
        num_heads=4,
        num_kv_heads=2,
        head_dim=16,
        intermediate_size=128,
        vocab_size=1000,
        layer_kinds=("full", "full"),
    )
    last = activation_bytes(arch, 32, 4, chunk=2048, fused=False)
    every = activation_bytes(arch, 32, 4, chunk=2048, fused=False, logits_rows=32)
    assert every - last == 3 * 1000 * 4 * 31
