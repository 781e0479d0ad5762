"""Where a scenario's folder is: ``harness/scenarios/<name>/`` holds the scenario and its params,
its helpers, its report section (``section.py`` with its partials) and its docs fragment
(``docs.md``). Found from the registry's ``"package:SCENARIO"`` string, nothing imported but the
package's parent, so the report and the docs generator find a folder's parts by its name."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SECTION_MODULE = "section"  # the folder's report section: <folder>/section.py
DOCS_FRAGMENT = "docs.md"  # the folder's row of docs/scenarios.md's metrics table


def scenario_folder(target: str) -> Path | None:
    """The folder of the scenario registered as ``target`` (``"package:attr"``); None when the
    target is not a package (a plug-in's module) or cannot be found."""
    package = target.partition(":")[0]
    parent, _, leaf = package.rpartition(".")
    if not parent:
        return None
    try:
        spec = importlib.util.find_spec(parent)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        folder = Path(location) / leaf
        if (folder / "__init__.py").is_file():
            return folder
    return None


def section_target(target: str) -> str | None:
    """``"<package>.section:SECTION"`` when the scenario's folder has a report section."""
    folder = scenario_folder(target)
    if folder is None or not (folder / f"{SECTION_MODULE}.py").is_file():
        return None
    return f"{target.partition(':')[0]}.{SECTION_MODULE}:SECTION"


def docs_fragment(target: str) -> str | None:
    """The folder's docs fragment (its metrics-table cell, one paragraph), None without one."""
    folder = scenario_folder(target)
    if folder is None or not (folder / DOCS_FRAGMENT).is_file():
        return None
    return " ".join((folder / DOCS_FRAGMENT).read_text(encoding="utf-8").split())
