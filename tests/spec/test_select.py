"""A selector's filters over one candidate, as data: chosen, or the reason it was left out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.probe.machine import MemoryBudget
from harness.probe.types import Capability, Library
from harness.spec.candidates import Candidate
from harness.spec.schema import Selector, SelectSource
from harness.spec.select import Facts, why_not

C = Capability
CHAT = frozenset({C.TEXT, C.CHAT})

# name -> (candidate name, tags, facts)
MODELS: dict[str, tuple[str, tuple[str, ...], Facts]] = {
    "q4": (
        "smollm2-135m-instruct",
        ("real",),
        Facts("llama", CHAT, Library.MLX_LM, 4, 98_346_240, 400_000_000, None),
    ),
    "gemma": (
        "gemma3-270m",
        ("real",),
        Facts(
            "gemma3_text", frozenset({C.TEXT}), Library.MLX_LM, 32, 1_072_392_704, 2 * 10**9, None
        ),
    ),
    "zoo": (
        "zoo/qwen3",
        ("zoo", "tiny"),
        Facts("qwen3", CHAT | {C.TOOLS, C.REASONING}, Library.MLX_LM, 32, 526_080, 10**8, None),
    ),
    "vlm": (
        "zoo/llava",
        ("zoo",),
        Facts("llava", CHAT | {C.VISION}, Library.MLX_VLM, 32, 728_320, 10**8, None),
    ),
    "broken": (
        "org/broken",
        (),
        Facts("llama", CHAT, Library.MLX_LM, 16, 10, 10, "corrupt_model: config.json: missing"),
    ),
    "unknown": (
        "org/odd",
        (),
        Facts("oddformer", frozenset(), Library.NONE, None, None, None, None),
    ),
}

BUDGET = MemoryBudget(total_bytes=2 * 10**9, available_bytes=None, threshold=0.5)

# (selector, model, expected: None = chosen, else a fragment of the reason)
CASES: list[tuple[dict[str, Any], str, str | None]] = [
    ({"capability": ["chat"], "max_weights": "1 GB"}, "q4", None),
    ({"capability": ["chat"], "max_weights": "1 GB"}, "gemma", "capability: lacks chat (has text)"),
    ({"capability": "text", "max_weights": "1 GB"}, "gemma", "max_weights: 1.07 GB > 1 GB"),
    ({"capability": "text", "max_weights": "1 GiB"}, "gemma", None),  # 0.999 GiB
    ({"capability": ["chat", "tools"]}, "q4", "capability: lacks tools"),
    ({"capability": ["chat", "tools", "reasoning"]}, "zoo", None),
    ({"family": "qwen*"}, "zoo", None),
    ({"family": ["llama", "gemma*"]}, "zoo", "family: qwen3 is not llama or gemma*"),
    ({"family": "odd*"}, "unknown", "no backend knows model_type 'oddformer'"),
    ({"name": "zoo/*"}, "q4", "name: not zoo/*"),
    ({"name": "zoo/*", "exclude": "zoo/qwen3*"}, "zoo", "excluded by 'zoo/qwen3*'"),
    ({"tags": ["zoo", "tiny"]}, "zoo", None),
    ({"tags": ["real"]}, "zoo", "tags: lacks real"),
    ({"bits": 4}, "q4", None),
    ({"bits": [4, 8]}, "gemma", "bits: 32 is not 4 or 8"),
    ({"bits": 32}, "gemma", None),
    ({"bits": 4}, "unknown", "bits: unknown is not 4"),
    ({"backend": "mlx_lm"}, "vlm", "backend: mlx_vlm is not mlx_lm"),
    ({}, "vlm", "backend mlx_vlm is not available in this harness"),
    ({}, "broken", "cannot load as it is: corrupt_model"),
    ({"fits_memory": True}, "q4", None),
    ({"fits_memory": True}, "gemma", "fits_memory: needs 2 GB, budget 1 GB"),
    ({"fits_memory": False}, "gemma", None),
]


@pytest.mark.parametrize(
    ("selector", "model", "expected"),
    CASES,
    ids=[f"{m}-{'-'.join(s) or 'all'}" for s, m, _ in CASES],
)
def test_filters(selector: dict[str, Any], model: str, expected: str | None) -> None:
    name, tags, facts = MODELS[model]
    candidate = Candidate(name, SelectSource.EMBEDDED, Path("/nowhere"), tags=tags)
    reason = why_not(
        Selector.model_validate(selector),
        candidate,
        facts,
        budget=BUDGET,
        runnable=("mlx_lm", "fake"),
    )
    if expected is None:
        assert reason is None
    else:
        assert reason is not None and expected in reason, reason


def test_unknown_machine_memory_does_not_filter() -> None:
    name, tags, facts = MODELS["gemma"]
    candidate = Candidate(name, SelectSource.EMBEDDED, Path("/nowhere"), tags=tags)
    unknown = MemoryBudget(0, None, source="unreadable")
    selector = Selector.model_validate({"fits_memory": True})
    assert why_not(selector, candidate, facts, budget=unknown, runnable=("mlx_lm",)) is None


def test_default_sources() -> None:
    assert Selector.model_validate({}).sources == (SelectSource.EMBEDDED, SelectSource.HF_CACHE)
    with_roots = Selector.model_validate({"roots": ["m"]}).sources
    assert with_roots == (SelectSource.EMBEDDED, SelectSource.HF_CACHE, SelectSource.DIRS)
    only = Selector.model_validate({"source": ["dirs", "dirs"], "roots": ["m"]}).sources
    assert only == (SelectSource.DIRS,)
