"""The version is stated in four places that must agree: pyproject.toml, ``harness.__version__``
(what ``mlx-harness --version`` and run records print), uv.lock's entry for the project, and
CHANGELOG.md's latest release heading (below the ``Unreleased`` section at the top).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import harness

ROOT = Path(__file__).resolve().parents[1]


def _pyproject() -> str:
    return str(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"])


def _lock() -> str:
    lock = tomllib.loads((ROOT / "uv.lock").read_text())
    return next(str(p["version"]) for p in lock["package"] if p["name"] == "mlx-harness")


def _changelog() -> list[str]:
    return re.findall(r"^## (.+)$", (ROOT / "CHANGELOG.md").read_text(), flags=re.MULTILINE)


def test_the_version_is_the_same_everywhere() -> None:
    version = _pyproject()
    assert {"harness.__version__": harness.__version__, "uv.lock": _lock()} == {
        "harness.__version__": version,
        "uv.lock": version,
    }


def test_the_changelog_has_unreleased_on_top_then_the_current_release() -> None:
    headings = _changelog()
    assert headings[0] == "Unreleased"
    assert re.fullmatch(rf"{re.escape(_pyproject())} \(\d{{4}}-\d{{2}}-\d{{2}}\)", headings[1]), (
        headings[1]
    )
