"""Every embedded model through the real runner, as a user runs it: ``mlx-harness run`` on the
shipped ``suites/models.suite.yaml`` (4-bit SmolLM2, float32 SmolLM2, Gemma 3 270M, every zoo
text model; load and a short throughput case each) in a subprocess.

``make demo`` proves the pytest driver on the default suite (which holds the 4-bit SmolLM2 and
zoo/llama); this proves the CLI driver on every embedded text model. ``make test`` runs two zoo
models (``-k``, the CLI's pytest expression; seconds), ``make test-nightly`` the whole suite
with the real models (two minutes; ``make demo`` runs the real SmolLM2 pair).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harness.core.types import Status
from harness.models.catalog import embedded_models
from harness.results.store import load_run

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "suites" / "models.suite.yaml"


QUICK = ("-k", "zoo-llama or zoo-qwen3")


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.parametrize(
    "selection",
    [pytest.param(QUICK, id="quick"), pytest.param((), id="whole", marks=pytest.mark.nightly)],
)
def test_models_suite_passes_through_the_cli(tmp_path: Path, selection: tuple[str, ...]) -> None:
    missing = [m.name for m in embedded_models() if not m.prepared]
    if missing:
        pytest.skip(f"not prepared: {', '.join(missing)} (run `mlx-harness models prepare`)")
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "harness.cli",
            "run",
            str(SUITE),
            "--report-dir",
            str(tmp_path),
            *selection,
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        cwd=ROOT,
    )
    out = done.stdout + done.stderr
    assert done.returncode == 0, out
    assert "Traceback" not in out
    (run_dir,) = [p for p in tmp_path.iterdir() if p.is_dir() and p.name != "latest"]
    run = load_run(run_dir)
    models = {r.model for r in run.results}
    wanted = {"zoo-llama", "zoo-qwen3"}
    if not selection:
        wanted |= {"smollm2-135m-q4", "smollm2-135m-f32", "gemma3-270m"}
    assert wanted <= models
    assert all(r.status is Status.PASSED for r in run.results), [
        (r.case_id, r.status, r.reason) for r in run.results if r.status is not Status.PASSED
    ]
    assert len(run.results) == 2 * len(models)
    for result in run.results:
        if result.scenario == "throughput":
            decode = result.metric("throughput.decode_tps")
            assert decode is not None and decode.samples and decode.median > 0
    if not selection:
        q4 = run.probes.get("smollm2-135m-q4") or {}
        assert (q4.get("quantization") or {}).get("bits") == 4  # the probe of a 4-bit model
