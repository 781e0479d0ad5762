"""A pin set's pins completed with the companions its pinned mlx-lm works with.

:func:`resolve_companions` asks the index (:mod:`harness.runner.pin_index`) for the facts and
:mod:`harness.runner.pin_companions` for the choice; :func:`completed` adds the chosen pins to
the environment's spec (they key its environment like any pin) and names them in ``chosen``.
Each answer is kept under ``<cache>/envs/companions/``: when the index cannot be reached the
recorded answer is used, and says so.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path

from packaging.utils import canonicalize_name
from packaging.version import Version

from harness.runner.pin_companions import BACKENDS, COMPANIONS, LEADER, Choice, Release, choose
from harness.runner.pin_env import PinEnvSpec, envs_dir

Releases = Callable[[str, str | None], list[Release]]
Requires = Callable[[str, Version, str | None], list[str]]


@dataclass(frozen=True)
class Resolution:
    """The pins added and a note per companion left alone; ``source``: where the answer came
    from ("the index", or the answer recorded on a date)."""

    choices: tuple[Choice, ...] = ()
    notes: tuple[str, ...] = ()
    source: str = "the index"


def pinned_versions(pins: Sequence[str]) -> dict[str, str]:
    """``["mlx-lm==0.31.1"]`` -> ``{"mlx-lm": "0.31.1"}`` (canonical names)."""
    out: dict[str, str] = {}
    for pin in pins:
        name, _, version = pin.partition("==")
        out[canonicalize_name(name.strip())] = version.strip()
    return out


def _recorded_path(version: str, index_url: str | None, platform: str) -> Path:
    key = hashlib.sha256(json.dumps([version, index_url, platform]).encode()).hexdigest()[:16]
    return envs_dir() / "companions" / f"{LEADER}-{version}-{key}.json"


def _facts(
    version: Version, index_url: str | None, releases: Releases, requires: Requires
) -> tuple[list[str], dict[str, list[Release]]]:
    wanted = [LEADER, *COMPANIONS, *BACKENDS.values()]
    return requires(LEADER, version, index_url), {p: releases(p, index_url) for p in wanted}


def resolve_companions(
    spec: PinEnvSpec,
    releases: Releases | None = None,
    requires: Requires | None = None,
    platform: str = sys.platform,
) -> Resolution:
    """What to add to ``spec``'s pins for its pinned mlx-lm (nothing when it pins none)."""
    from harness.runner.pin_index import IndexFactsError, fetch_releases, fetch_requires

    pinned = pinned_versions(spec.pins)
    version = pinned.get(LEADER)
    if version is None:
        return Resolution()
    if spec.find_links and not spec.index_url:
        return Resolution(notes=(f"no index to date releases by (--find-links {spec.find_links})",))
    path = _recorded_path(version, spec.index_url, platform)
    try:
        needs, known = _facts(
            Version(version), spec.index_url, releases or fetch_releases, requires or fetch_requires
        )
        choices, notes = choose(Version(version), needs, known, pinned, platform)
    except (IndexFactsError, ValueError) as exc:
        return _recorded(path, pinned, str(exc))
    _record(path, choices, notes)
    return _kept(Resolution(tuple(choices), tuple(notes)), pinned)


def _kept(found: Resolution, pinned: Mapping[str, str]) -> Resolution:
    """Without choices of packages the pin set pins (a recorded answer may hold them)."""
    mine = tuple(c for c in found.choices if canonicalize_name(c.pin.split("==")[0]) not in pinned)
    return replace(found, choices=mine)


def _record(path: Path, choices: Sequence[Choice], notes: Sequence[str]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = {
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
        "choices": [{"pin": c.pin, "why": c.why} for c in choices],
        "notes": list(notes),
    }
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(data, indent=1) + "\n")
    partial.replace(path)


def _recorded(path: Path, pinned: Mapping[str, str], failure: str) -> Resolution:
    try:
        data = json.loads(path.read_text())
        choices = tuple(Choice(str(c["pin"]), str(c["why"])) for c in data["choices"])
        notes = tuple(str(n) for n in data["notes"])
        when = str(data["at"])
    except (OSError, ValueError, KeyError, TypeError):
        return Resolution(notes=(f"companions not chosen: {failure}; pin mlx yourself",))
    return _kept(Resolution(choices, notes, f"recorded {when} ({failure})"), pinned)


def completed(spec: PinEnvSpec, found: Resolution) -> PinEnvSpec:
    """``spec`` with the chosen pins added (installed and keyed like the others)."""
    if not found.choices:
        return spec
    return replace(
        spec,
        pins=(*spec.pins, *(c.pin for c in found.choices)),
        chosen=tuple(c.line() for c in found.choices),
    )


def with_backend(
    spec: PinEnvSpec, releases: Releases | None = None, platform: str = sys.platform
) -> PinEnvSpec:
    """``spec`` with mlx's backend distribution beside the mlx it pins (``mlx-cpu`` on Linux),
    when it pins mlx and not the backend: not a choice of version (it follows mlx, as
    ``mlx[cpu]`` does), so ``bisect``, which chooses nothing, needs it too. Without it mlx
    imports and then fails to find ``libmlx.so``. Left out when the index has no backend
    release of that version (an older mlx carries its own); added when the index cannot say."""
    from harness.runner.pin_index import IndexFactsError, fetch_releases

    pinned = pinned_versions(spec.pins)
    mlx, backend = pinned.get("mlx"), BACKENDS.get(platform)
    if mlx is None or backend is None or backend in pinned:
        return spec
    if not spec.find_links or spec.index_url:
        try:
            known = (releases or fetch_releases)(backend, spec.index_url)
        except IndexFactsError:
            known = None
        if known is not None and not any(r.version == Version(mlx) for r in known):
            return spec
    choice = Choice(f"{backend}=={mlx}", f"mlx's backend on {platform}, as mlx")
    return completed(spec, Resolution((choice,)))
