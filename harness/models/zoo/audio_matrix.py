"""The audio family matrix: every tts and stt model package of the installed mlx-audio,
generated tiny and tried (load, run) in worker processes (:mod:`.audio_worker`).

:func:`matrix` returns the cached matrix for the installed mlx-audio and mlx versions, or runs
it and caches it, so it regenerates when either is upgraded (or the derivation changes:
:data:`MATRIX_VERSION`). A worker that dies or hangs costs its family a failed cell and the next
worker goes on, as in mlx-lm's architecture matrix (:mod:`.arch_matrix`).
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from harness.models.cache_dir import cache_root
from harness.models.zoo.arch_matrix import _run_worker
from harness.models.zoo.arch_trial import ArchRow, Cell, Outcome
from harness.models.zoo.audio_trial import COLUMNS

MATRIX_VERSION = 1  # bump when the derivation or the checks change what a row means
FAMILY_TIMEOUT_S = 180.0  # one family making no progress for this long is stopped
PACKAGES = ("mlx-audio", "mlx")
WORKER = (sys.executable, "-m", "harness.models.zoo.audio_worker")


@dataclass(frozen=True)
class AudioMatrix:
    """One row per tts/stt model package of mlx-audio, and how the matrix was made."""

    versions: Mapping[str, str]
    rows: tuple[ArchRow, ...]
    wall_s: float
    cached: bool = False

    def counts(self) -> dict[str, Counter[Outcome]]:
        """Per column ("generated" first), how many rows have each outcome."""
        out: dict[str, Counter[Outcome]] = {
            "generated": Counter(r.generated.outcome for r in self.rows)
        }
        for column in COLUMNS:
            out[column] = Counter(r.cell(column).outcome for r in self.rows)
        return out


def installed_versions() -> dict[str, str]:
    out: dict[str, str] = {}
    for package in PACKAGES:
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def cache_path(versions: Mapping[str, str], root: Path | None = None) -> Path:
    tag = "_".join(f"{p}-{versions.get(p, 'none')}" for p in PACKAGES)
    return (root or cache_root()) / "audio-matrix" / f"{tag}_v{MATRIX_VERSION}.json"


def matrix(
    *,
    force: bool = False,
    names: Sequence[str] | None = None,
    root: Path | None = None,
    on_row: Callable[[ArchRow], None] | None = None,
) -> AudioMatrix:
    """The matrix of the installed versions: from the cache, else run (cached when complete).
    ``names`` limits it to some families (run, never cached)."""
    from harness.models.zoo.derive_audio import family_names

    versions = installed_versions()
    path = cache_path(versions, root)
    if names is None and not force:
        cached = read(path)
        if cached is not None:
            return cached
    start = time.monotonic()
    rows = run_rows(list(names) if names is not None else family_names(), on_row=on_row)
    made = AudioMatrix(versions, tuple(rows), time.monotonic() - start)
    if names is None:
        write(path, made)
    return made


def run_rows(
    names: Sequence[str],
    *,
    timeout_s: float = FAMILY_TIMEOUT_S,
    command: Sequence[str] = WORKER,
    on_row: Callable[[ArchRow], None] | None = None,
) -> list[ArchRow]:
    """Try ``names`` in worker processes, in order, a new worker after each death."""
    rows: list[ArchRow] = []
    remaining = list(names)
    with tempfile.TemporaryDirectory(prefix="audio-matrix-") as tmp:
        while remaining:
            events_path = Path(tmp) / f"events-{len(rows)}.jsonl"
            events_path.touch()
            death = _run_worker([*command, str(events_path), *remaining], events_path, timeout_s)
            events = [json.loads(line) for line in events_path.read_text().splitlines() if line]
            batch = rows_from_events(remaining, events, death)
            for row in batch:
                if on_row is not None:
                    on_row(row)
            rows.extend(batch)
            remaining = remaining[len(batch) :]
    return rows


def rows_from_events(
    names: Sequence[str], events: Sequence[Mapping[str, Any]], death: str | None
) -> list[ArchRow]:
    """The rows a worker's events give, in ``names`` order; with ``death``, the family it was on
    gets a row saying where it died (the rest are left for the next worker)."""
    by_name: dict[str, list[Mapping[str, Any]]] = {}
    for event in events:
        by_name.setdefault(str(event["arch"]), []).append(event)
    rows: list[ArchRow] = []
    for name in names:
        seen = by_name.get(name)
        if not seen:
            if not rows:  # died (or ended) before this family's first event
                rows.append(ArchRow(name, Cell(Outcome.FAILED, death or "no event")))
            break
        if seen[-1]["column"] != "done":
            rows.append(_row(name, seen, death or "the process ended without finishing it"))
            break
        rows.append(_row(name, seen, None))
    return rows


def _row(name: str, events: Sequence[Mapping[str, Any]], death: str | None) -> ArchRow:
    cells = {
        str(e["column"]): Cell(Outcome(e["outcome"]), str(e.get("detail", "")))
        for e in events
        if "outcome" in e
    }
    if death is not None:
        started = [str(e["column"]) for e in events if "outcome" not in e]
        at = started[-1] if started else "generated"
        cells[at] = Cell(Outcome.FAILED, death)
    generated = cells.pop("generated", Cell(Outcome.FAILED, death or "no event"))
    return ArchRow(name, generated, {c: cells[c] for c in COLUMNS if c in cells})


def to_json(m: AudioMatrix) -> dict[str, Any]:
    return {
        "matrix_version": MATRIX_VERSION,
        "versions": dict(m.versions),
        "wall_s": round(m.wall_s, 3),
        "families": [
            {
                "name": r.name,
                "generated": _cell_json(r.generated),
                **{c: _cell_json(r.cell(c)) for c in COLUMNS},
            }
            for r in m.rows
        ],
    }


def _cell_json(cell: Cell) -> dict[str, str]:
    return {"outcome": cell.outcome.value, "detail": cell.detail}


def from_json(data: Mapping[str, Any], *, cached: bool = False) -> AudioMatrix:
    rows = tuple(
        ArchRow(
            str(a["name"]),
            Cell(Outcome(a["generated"]["outcome"]), str(a["generated"]["detail"])),
            {c: Cell(Outcome(a[c]["outcome"]), str(a[c]["detail"])) for c in COLUMNS},
        )
        for a in data["families"]
    )
    return AudioMatrix(dict(data["versions"]), rows, float(data["wall_s"]), cached)


def read(path: Path) -> AudioMatrix | None:
    """The matrix cached at ``path``; None when absent, unreadable or of another version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("matrix_version") != MATRIX_VERSION:
            return None
        return from_json(data, cached=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write(path: Path, m: AudioMatrix) -> None:
    """Cache ``m`` at ``path`` (written aside, then moved in place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(to_json(m), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
