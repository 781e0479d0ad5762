"""The probe's MLX peak prediction against the peak a real mlx-lm worker measures.

Every zoo family mlx-lm can load runs the throughput scenario at two context lengths (128 and
1024 prompt tokens, 16 generated) through the session and its worker subprocess, as a suite
would; the prediction recorded before load must be within 25% of the case's
``memory.mlx_peak_bytes``. The vision families load text-only through mlx-lm (the policy warns
of the backend mismatch), so their prediction must leave the vision tower's weights out.
Whisper is the one zoo family mlx-lm cannot load (the policy skips it).
``suites/memory.suite.yaml`` runs the same on the embedded models and reports both numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harness.core.types import Case, CaseResult, Status
from harness.models.zoo.families import FAMILIES
from harness.probe.machine import MemoryBudget
from harness.results.preflight_record import peak_check
from harness.runner.active_run import ActiveRun
from tests.quick_subset import quick_subset
from tests.runner.cases import path_case
from tests.zoo_shared import zoo_family

TEXT_FAMILIES = [name for name, f in FAMILIES.items() if f.backend == "mlx_lm"]
VISION_FAMILIES = [name for name, f in FAMILIES.items() if f.backend == "mlx_vlm"]
LOADABLE = TEXT_FAMILIES + VISION_FAMILIES
PROMPTS = (128, 1024)
GENERATED = 16
TOLERANCE = 0.25
BUDGET = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)


def _case(name: str, path: Path, prompt: int) -> Case:
    return path_case(
        path,
        name,
        "throughput",
        {"prompt_tokens": prompt, "gen_tokens": GENERATED, "ignore_eos": True},
        suite="mem",
        point={"prompt_tokens": prompt},
        case_id=f"mem::{name}::throughput[prompt_tokens={prompt}]",
    )


Measure = Callable[[str, int], CaseResult]


@pytest.fixture(scope="module")
def measure(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Measure]:
    """One session for the module; each family built, and each case run, when a test asks."""
    root = tmp_path_factory.mktemp("memory-zoo")
    session = ActiveRun(root / "reports", [], run_id="mem", memory_budget=BUDGET)
    paths: dict[str, Path] = {}

    def run(name: str, prompt: int) -> CaseResult:
        if name not in paths:
            paths[name] = zoo_family(tmp_path_factory, name)
        return session.run_case(_case(name, paths[name], prompt))

    try:
        yield run
    finally:
        session.finish()


# `make test` measures each kind of model once (dense, sliding window, MoE, hybrid, a vision
# family) at one of the two lengths, both lengths between them; nightly every pair (llava, the
# second vision family, cost 5.8 s of CPU here: nightly only)
QUICK = {
    "llama-1024",
    "gemma3_text-128",
    "qwen3_moe-1024",
    "lfm2-128",
    "qwen2_vl-1024",
}
PAIRS = [(name, prompt) for name in LOADABLE for prompt in PROMPTS]


@pytest.mark.parametrize(
    ("name", "prompt"), quick_subset(PAIRS, [f"{n}-{p}" for n, p in PAIRS], QUICK)
)
def test_prediction_within_25_percent_of_measured_peak(
    name: str, prompt: int, measure: Measure
) -> None:
    result = measure(name, prompt)
    assert result.status is Status.PASSED, result.reason
    expected = "allow" if name in TEXT_FAMILIES else "warn"  # vision: backend_mismatch
    assert result.preflight is not None and result.preflight.action == expected, result.preflight
    check = peak_check(result)
    assert check is not None and check.comparable and check.measured_bytes
    assert check.context_tokens == prompt + GENERATED and check.prompt_tokens == prompt
    error = check.error
    assert error is not None and abs(error) <= TOLERANCE, (
        f"{name} @ {prompt}+{GENERATED}: predicted {check.predicted_bytes} B, measured "
        f"{check.measured_bytes:.0f} B ({error:+.1%}; {dict(check.components)})"
    )
