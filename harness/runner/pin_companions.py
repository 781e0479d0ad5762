"""The mlx (and transformers) a pinned mlx-lm works with, when the pin set does not pin them.

A pin set that pins only ``mlx-lm==0.31.1`` would otherwise get the harness's own ``mlx>=0.32``
(written for mlx-lm 0.32): mlx-lm 0.31.x under mlx 0.32.4 breaks every served request ("There is
no Stream(cpu, 0) in current thread"), and mlx-lm 0.27 under transformers 5 does not load. Old
releases say too little to prevent it (mlx-lm 0.31.1 asks for ``mlx>=0.30.4``, nothing above),
so the choice reads two facts of the package index instead of a hand-kept table:

- the pinned release's own ``Requires-Dist`` on the companion (its lower bound), and
- the release dates (PEP 700 ``upload-time``): the companion's newest release uploaded no later
  than the pinned mlx-lm, the one that release was made and tested against.

The dated release is pinned only when the companion has since moved to a later series (the
next major, or the next minor below 1.0: mlx 0.31 -> 0.32, transformers 4 -> 5); within the same
series the newest release stays (a patch release fixes, it does not break). A companion the
pin set pins itself is never chosen (pins win), and on Linux ``mlx-cpu`` follows whatever mlx
the environment gets (the harness's ``mlx[cpu]``, dropped once mlx is pinned).

Measured on this repository's Linux machine: mlx-lm 0.31.1 -> mlx 0.31.0, 0.31.3 -> mlx 0.31.2,
0.27.1 -> mlx 0.29.0 and transformers 4.56.0; 0.32.x keeps the newest of both.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

LEADER = "mlx-lm"
COMPANIONS = ("mlx", "transformers")  # whose version follows the pinned mlx-lm
# the mlx backend distribution installed beside mlx on a platform (``mlx[cpu]`` on Linux)
BACKENDS: Mapping[str, str] = {"linux": "mlx-cpu"}


@dataclass(frozen=True)
class Release:
    """One release of a package on the index: when it was first uploaded, whether yanked."""

    version: Version
    uploaded: datetime
    yanked: bool = False


@dataclass(frozen=True)
class Choice:
    """A pin added to a pin set, and why (one line for the terminal and the record)."""

    pin: str
    why: str

    def line(self) -> str:
        return f"{self.pin} ({self.why})"


def series(version: Version) -> tuple[int, ...]:
    """What a release promises compatibility within: the major, or major.minor below 1.0."""
    release = (*version.release, 0)
    return release[:2] if release[0] == 0 else release[:1]


def required_range(requires: Sequence[str], package: str) -> SpecifierSet:
    """Every specifier the ``Requires-Dist`` lines put on ``package``, whatever their marker
    (``mlx>=0.30.4; platform_system == "Darwin"`` and ``mlx[cpu]>=0.30.4; extra == "cpu"``
    state the same bound)."""
    found = SpecifierSet()
    for text in requires:
        try:
            req = Requirement(text)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) == canonicalize_name(package):
            found &= req.specifier
    return found


def _day(moment: datetime) -> str:
    return moment.date().isoformat()


def choose_companion(
    leader: Release, requires: Sequence[str], package: str, releases: Sequence[Release]
) -> Choice | str:
    """The pin of ``package`` for the pinned ``leader`` release, or a note saying why none."""
    wanted = required_range(requires, package)
    usable = [
        r for r in releases if not r.yanked and not r.version.is_prerelease and r.version in wanted
    ]
    if not usable:
        return f"{package}: no release satisfies {LEADER} {leader.version}'s {wanted or 'any'}"
    newest = max(usable, key=lambda r: r.version)
    dated = [r for r in usable if r.uploaded <= leader.uploaded]
    if not dated:
        return f"{package}: none released before {LEADER} {leader.version}; newest kept"
    then = max(dated, key=lambda r: r.version)
    if series(then.version) == series(newest.version):
        return f"{package}: newest {newest.version} is in the series of {then.version}; kept"
    bound = f"requires {package}{wanted}; " if str(wanted) else ""
    why = (
        f"{LEADER} {leader.version} ({_day(leader.uploaded)}) {bound}newest {package} released "
        f"no later: {then.version} ({_day(then.uploaded)}); {newest.version} is a later series"
    )
    return Choice(f"{package}=={then.version}", why)


def choose(
    version: Version,
    requires: Sequence[str],
    releases: Mapping[str, Sequence[Release]],
    pinned: Mapping[str, str],
    platform: str = sys.platform,
) -> tuple[list[Choice], list[str]]:
    """The pins to add for ``mlx-lm==version`` and notes on the companions left alone.

    ``requires``: that release's ``Requires-Dist`` lines; ``releases``: every release of mlx-lm
    and of each companion (and of the platform's mlx backend); ``pinned``: what the pin set
    pins already (canonical name -> version). ValueError when the index lacks the release."""
    leader = next((r for r in releases.get(LEADER, ()) if r.version == version), None)
    if leader is None:
        raise ValueError(f"{LEADER} {version} is not on the index")
    choices: list[Choice] = []
    notes: list[str] = []
    for package in COMPANIONS:
        if package in pinned:
            notes.append(f"{package}: pinned by the pin set")
            continue
        found = choose_companion(leader, requires, package, releases.get(package, ()))
        if isinstance(found, Choice):
            choices.append(found)
        else:
            notes.append(found)
    mlx = pinned.get("mlx") or next(
        (c.pin.split("==")[1] for c in choices if c.pin.startswith("mlx==")), None
    )
    backend = BACKENDS.get(platform)
    if mlx is not None and backend is not None and backend not in pinned:
        if any(r.version == Version(mlx) for r in releases.get(backend, ())):
            choices.append(Choice(f"{backend}=={mlx}", f"mlx's backend on {platform}, as mlx"))
        else:
            notes.append(f"{backend}: no release {mlx}; mlx {mlx} carries its own backend")
    return choices, notes
