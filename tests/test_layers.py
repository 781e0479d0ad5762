"""The import layers and the no-cycle rule (``[tool.importlinter]`` in pyproject.toml), checked
by import-linter on this tree, and shown to fail on a copy with a planted upward import or cycle.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _lint(cwd: Path) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("lint-imports")
    if not tool.exists():
        pytest.skip("import-linter is not installed (pip install -e '.[dev]')")
    return subprocess.run(
        [str(tool), "--no-cache"],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(cwd)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_the_tree_keeps_its_layers_and_has_no_cycle() -> None:
    done = _lint(ROOT)
    assert done.returncode == 0, done.stdout[-3000:]
    assert "2 kept, 0 broken" in done.stdout


PLANTED = [
    # (file, line added, what import-linter must report)
    ("harness/types.py", "import harness.cli_run\n", "harness.types is not allowed to import"),
    ("harness/runner/client.py", "import harness.report.render\n", "not allowed to import"),
    ("harness/report/sections.py", "import harness.report.matrix\n", "No import cycles"),
]


@pytest.mark.parametrize(
    ("path", "line", "message"), PLANTED, ids=["upward", "runner-report", "cycle"]
)
def test_a_planted_violation_breaks_the_contract(
    tmp_path: Path, path: str, line: str, message: str
) -> None:
    shutil.copytree(ROOT / "harness", tmp_path / "harness", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / path
    target.write_text(target.read_text() + "\n" + line)
    done = _lint(tmp_path)
    assert done.returncode != 0
    assert "BROKEN" in done.stdout and message in done.stdout, done.stdout[-3000:]
