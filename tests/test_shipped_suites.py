"""The shipped suites that the default job does not run, run here as a user runs them
(``pytest SUITE`` in a subprocess): vision through mlx-vlm on the zoo VLMs, and speech to text
through mlx-audio (the clean clip set and the zoo Whisper; the noisy sets run in the suite)."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from harness.models.catalog import embedded_models
from harness.results.store import load_run
from harness.types import Status

ROOT = Path(__file__).resolve().parents[1]

SUITES = [
    # (suite, -k, embedded models it needs, expected statuses)
    ("vision", None, ("zoo/qwen2_vl", "zoo/llava"), {Status.PASSED: 8, Status.XFAILED: 4}),
    (
        "audio",
        "zoo or clean or load",
        ("whisper-tiny-en", "zoo/whisper"),
        {Status.PASSED: 4},
    ),
]


@pytest.mark.real_model
@pytest.mark.parametrize(("suite", "k", "needs", "expected"), SUITES, ids=[s[0] for s in SUITES])
def test_shipped_suite_runs(
    tmp_path: Path, suite: str, k: str | None, needs: tuple[str, ...], expected: dict[Status, int]
) -> None:
    prepared = {m.name for m in embedded_models() if m.prepared}
    missing = [n for n in needs if n not in prepared]
    if missing:
        pytest.skip(f"not prepared: {', '.join(missing)} (run `mlx-harness models prepare`)")
    args = [str(ROOT / "suites" / f"{suite}.suite.yaml"), "--report-dir", str(tmp_path)]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--run-id", "r", *args]
        + (["-k", k] if k else []),
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "Traceback" not in done.stdout + done.stderr
    run = load_run(tmp_path / "r")
    assert Counter(r.status for r in run.results) == Counter(expected), [
        (r.case_id, r.status, r.reason) for r in run.results
    ]
