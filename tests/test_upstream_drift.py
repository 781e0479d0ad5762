"""Upstream drift as findings: the canary suite runs the locked set beside the newest releases,
the nightly example runs it without turning red, and the set-up installs from the lock."""

from __future__ import annotations

import subprocess
from pathlib import Path

import yaml

from harness.spec.loader import load_suite

ROOT = Path(__file__).resolve().parents[1]
NIGHTLY = ROOT / ".github" / "workflows" / "nightly.yml"


def test_the_canary_suite_runs_the_lock_beside_the_newest_releases() -> None:
    suite = load_suite(ROOT / "suites" / "upstream.suite.yaml").suite
    tracks = {p.name: (p.track, p.pins, p.extras) for p in suite.pin_sets}
    assert tracks == {"locked": ("lock", [], ["all"]), "latest": ("latest", [], ["all"])}
    assert list(tracks) == ["locked", "latest"]  # the matrix reads locked -> latest
    assert "known_broken.yaml" in suite.include


def test_the_nightly_example_publishes_the_matrix_whatever_the_run_says() -> None:
    workflow = yaml.safe_load(NIGHTLY.read_text())
    job = workflow["jobs"]["upstream-drift"]
    steps = {step.get("id") or step.get("name") or step.get("uses"): step for step in job["steps"]}
    drift = steps["drift"]
    assert "mlx-harness run suites/upstream.suite.yaml --pin-set all" in drift["run"]
    assert drift["continue-on-error"] is True  # a newly failing cell is a finding
    publish = steps["Publish the matrix"]
    assert publish["if"] == "always()" and "matrix.md" in publish["run"]
    assert any("make models" in str(step.get("run", "")) for step in job["steps"])


def test_the_set_up_installs_the_lock_and_refuses_a_stale_one() -> None:
    done = subprocess.run(
        ["make", "-n", "-B", "setup"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "uv sync --locked --extra dev --extra all" in done.stdout
    assert "pip install --quiet -e" not in done.stdout
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'exclude-newer = "' in pyproject  # the date the lock was resolved against
