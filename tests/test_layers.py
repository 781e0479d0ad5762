"""The import layers and the no-cycle rule (``[tool.importlinter]`` in pyproject.toml): shown to
fail on a copy with a planted upward import or cycle, each report naming the planted import. The
tree itself is checked by ``make lint``, which ``make test`` runs before pytest (and by the
pre-commit hook), not again here.
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


PLANTED = [
    # (file, line added, what import-linter must report: the planted import itself, so a break
    # already in the tree cannot stand in for it)
    (
        "harness/core/types.py",
        "import harness.cli.run\n",
        "- harness.core.types -> harness.cli.run ",
    ),
    (
        "harness/runner/client.py",
        "import harness.report.render\n",
        "- harness.runner.client -> harness.report.render ",
    ),
    ("harness/report/sections.py", "import harness.report.matrix\n", "- .sections -> .matrix "),
]


@pytest.mark.parametrize(
    ("path", "line", "message"),
    PLANTED,
    ids=["upward", "runner-report", "cycle"],
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


DRIVER_PLANTS = [
    # what both drivers share is below them, and neither driver imports the other: planted all
    # at once (one lint run), each import must be reported
    (
        "harness/drive/run_end.py",
        "import harness.cli.run\n",
        "- harness.drive.run_end -> harness.cli.run ",
    ),
    (
        "harness/pytest_plugin/xdist_schedule.py",
        "import harness.cli.run\n",
        "- harness.pytest_plugin.xdist_schedule -> harness.cli.run ",
    ),
    (
        "harness/cli/merge.py",
        "import harness.pytest_plugin.xdist_schedule\n",
        "- harness.cli.merge -> harness.pytest_plugin.xdist_schedule ",
    ),
]


def test_neither_driver_imports_the_other_and_drive_imports_neither(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "harness", tmp_path / "harness", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    for path, line, _ in DRIVER_PLANTS:
        target = tmp_path / path
        target.write_text(target.read_text() + "\n" + line)
    done = _lint(tmp_path)
    assert done.returncode != 0
    missed = [message for _, _, message in DRIVER_PLANTS if message not in done.stdout]
    assert not missed, done.stdout[-3000:]


def _layers() -> list[set[str]]:
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [
        {name.strip() for name in layer.replace("|", ":").split(":")}
        for layer in contract["layers"]
    ]


def _top_level() -> set[str]:
    package = ROOT / "harness"
    modules = {f"harness.{p.stem}" for p in package.glob("*.py") if p.stem != "__init__"}
    packages = {f"harness.{p.parent.name}" for p in package.glob("*/__init__.py")}
    return modules | packages


def test_every_module_is_in_a_layer() -> None:
    """A new module at the top of the package must be placed in the layer contract: an
    unnamed one is outside every layer, so an upward import into it would go unseen."""
    named = set().union(*_layers())
    assert _top_level() - named == set(), "add these to [tool.importlinter] layers"
    assert named - _top_level() == set(), "the contract names modules that are gone"


def test_an_upward_import_into_any_driver_breaks_the_contract(tmp_path: Path) -> None:
    """Every module of the top layer, imported from the runner: each import is reported."""
    drivers = sorted(_layers()[0])
    shutil.copytree(ROOT / "harness", tmp_path / "harness", ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    target = tmp_path / "harness" / "runner" / "machine.py"
    target.write_text(target.read_text() + "\n" + "".join(f"import {d}\n" for d in drivers))
    done = _lint(tmp_path)
    assert done.returncode != 0
    missed = [d for d in drivers if f"harness.runner.machine -> {d} " not in done.stdout]
    assert not missed, done.stdout[-3000:]
