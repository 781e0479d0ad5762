"""The developer's checks: ``.pre-commit-config.yaml``'s hooks are the commands of the Makefile's
``lint`` recipe, calling the tools of the project's environment, and ``make test`` lints before
pytest. pre-commit itself is not a dependency: its config is read here as plain YAML.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
HOOK_IDS = ["ruff-check", "ruff-format", "mypy", "lint-imports"]


def _hooks() -> list[dict[str, object]]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return [hook for repo in config["repos"] for hook in repo["hooks"]]


def _recipe(target: str) -> tuple[list[str], list[str]]:
    """A Makefile target's prerequisites and its recipe's command lines."""
    lines = (ROOT / "Makefile").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    prerequisites = lines[start].split(":", 1)[1].split()
    commands = []
    for line in lines[start + 1 :]:
        if not line.startswith("\t"):
            break
        commands.append(line.strip())
    return prerequisites, commands


def test_the_hooks_are_local_and_call_the_projects_tools() -> None:
    hooks = _hooks()
    assert [hook["id"] for hook in hooks] == HOOK_IDS
    for hook in hooks:
        entry = str(hook["entry"])
        assert hook["language"] == "system", hook["id"]
        assert entry.startswith(".venv/bin/"), f"{hook['id']}: {entry} is not the .venv's tool"
        tool = entry.split()[0].removeprefix(".venv/bin/")
        assert Path(sys.executable).with_name(tool).exists(), f"{tool} is not in the environment"


def test_the_hooks_run_what_make_lint_runs() -> None:
    _, commands = _recipe("lint")
    paths = {"harness", "tests", "conftest.py"}
    make = [
        " ".join(w for w in c.removeprefix("$(VENV)/bin/").split() if w not in paths)
        for c in commands
    ]
    hooks = [
        " ".join(
            w for w in str(h["entry"]).removeprefix(".venv/bin/").split() if w != "--force-exclude"
        )
        for h in _hooks()
    ]
    assert hooks == make


def test_the_file_hooks_see_what_make_lint_lints() -> None:
    for hook in _hooks():
        if hook.get("pass_filenames", True) is False:
            continue
        files = re.compile(str(hook["files"]))
        for path in ["harness/core/types.py", "tests/test_layers.py", "conftest.py"]:
            assert files.search(path), f"{hook['id']} skips {path}"
        assert not files.search("suites/lib/conftest.py"), hook["id"]


def test_make_test_lints_before_pytest() -> None:
    prerequisites, commands = _recipe("test")
    assert prerequisites[0] == "lint"
    assert any("pytest" in command for command in commands)
