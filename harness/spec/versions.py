"""An expect entry's ``versions:``: package names with PEP 440 specifiers, checked when the
suite is read and matched against the installed versions when cases are planned."""

from __future__ import annotations

from collections.abc import Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

VERSIONS_EXAMPLE = 'e.g. versions: {transformers: ">=5.24", mlx-vlm: "<=0.7.10"}'


def version_problem(name: str, spec: str) -> tuple[str, str] | None:
    """Why ``name: spec`` of an entry's ``versions:`` cannot be matched (message, fix)."""
    import re

    if not re.fullmatch(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?", name):
        return f"versions: {name!r} is not a package name", VERSIONS_EXAMPLE
    try:
        specifiers = SpecifierSet(spec)
    except InvalidSpecifier:
        return f"versions: {name}: {spec!r} is not a version specifier", VERSIONS_EXAMPLE
    if not specifiers:
        return f"versions: {name}: give a specifier such as '>=5.24'", VERSIONS_EXAMPLE
    return None


def versions_match(wanted: Mapping[str, str], installed: Mapping[str, str]) -> bool:
    """Whether every package of ``wanted`` is installed (``installed``: normalised names) at a
    version its specifier admits, pre-releases included."""
    for name, spec in wanted.items():
        version = installed.get(canonicalize_name(name))
        if version is None or not SpecifierSet(spec).contains(version, prereleases=True):
            return False
    return True
