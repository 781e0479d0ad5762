"""One folder per scenario: ``harness/scenarios/<name>/`` holds a scenario and everything only it
uses; the modules at the top of ``harness/scenarios/`` are the shared ones. A folder imports its
own modules and the shared ones, never another scenario's folder; only its ``section.py`` (its
report section, a part of the report layer) imports ``harness.report``, and nothing imports a
``section.py`` but the report (through the registry's strings)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import harness.scenarios

ROOT = Path(harness.scenarios.__file__).parent


def folders(root: Path = ROOT) -> list[str]:
    """The scenario folders: every package but the shared ones."""
    return sorted(
        p.name
        for p in root.iterdir()
        if (p / "__init__.py").is_file() and p.name not in harness.scenarios.SHARED_PACKAGES
    )


def imported(path: Path, top: Path) -> set[str]:
    """The modules a file imports (absolute names; relative ones resolved against ``top``)."""
    package = ".".join(path.relative_to(top).with_suffix("").parts)
    if path.name == "__init__.py":
        package = package.rsplit(".", 1)[0] + ".__init__"
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")[: -node.level]
                base = ".".join([*parts, base] if base else parts)
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def trespasses(root: Path = ROOT) -> list[str]:
    """Each import that breaks the folder rules, as ``file -> module: why``."""
    names = folders(root)
    broken = []
    for name in names:
        for path in sorted((root / name).rglob("*.py")):
            where = path.relative_to(root.parent.parent).as_posix()
            for module in sorted(imported(path, root.parent.parent)):
                parts = module.split(".")
                if parts[:2] == ["harness", "report"] and path.name != "section.py":
                    broken.append(f"{where} -> {module}: only section.py may import the report")
                if parts[:2] == ["harness", "scenarios"] and len(parts) > 2:
                    if parts[2] in names and parts[2] != name:
                        broken.append(f"{where} -> {module}: another scenario's folder")
                    if parts[-1] == "section" and path.name != "section.py":
                        broken.append(f"{where} -> {module}: a section is the report's to load")
    shared = [*root.glob("*.py"), *(root / s for s in harness.scenarios.SHARED_PACKAGES)]
    for path in sorted(
        p for top in shared for p in ([top] if top.is_file() else top.rglob("*.py"))
    ):
        where = path.relative_to(root.parent.parent).as_posix()
        for module in sorted(imported(path, root.parent.parent)):
            parts = module.split(".")
            if (
                path != root / "__init__.py"
                and parts[:2] == ["harness", "scenarios"]
                and len(parts) > 2
                and parts[2] in names
            ):
                broken.append(f"{where} -> {module}: a shared module uses a scenario's folder")
    return broken


def test_scenario_folders_keep_to_themselves() -> None:
    assert trespasses() == []


def test_every_registered_built_in_is_a_folder() -> None:
    for name, target in harness.scenarios.BUILT_IN.items():
        module = target.split(":")[0]
        assert module == f"harness.scenarios.{name}", f"{name}: {target}"
    assert set(harness.scenarios.BUILT_IN) == set(folders())


@pytest.mark.parametrize(
    ("source", "why"),
    [
        ("from harness.scenarios.stall import analysis\n", "another scenario's folder"),
        ("from harness.report.table import Table\n", "only section.py may import the report"),
        ("from . import section\n", "a section is the report's to load"),
    ],
)
def test_a_trespass_is_caught(tmp_path: Path, source: str, why: str) -> None:
    root = tmp_path / "harness" / "scenarios"
    for name in ("toy", "stall"):
        (root / name).mkdir(parents=True)
        (root / name / "__init__.py").write_text("")
    (root / "__init__.py").write_text("")
    (root / "toy" / "helper.py").write_text(source)
    assert {line.rsplit(": ", 1)[1] for line in trespasses(root)} == {why}
