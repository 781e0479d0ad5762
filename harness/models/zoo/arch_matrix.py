"""The architecture matrix: every module of the installed mlx-lm's models package, tried tiny.

:func:`run_rows` tries architectures in worker processes (:mod:`.arch_worker`) and keeps going
when one dies or hangs: the row says where. :func:`matrix` returns the cached matrix for the
installed mlx-lm and mlx versions, or runs it and caches it, so it regenerates when either is
upgraded (or the derivation changes: :data:`MATRIX_VERSION`).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
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
from harness.models.zoo.arch_trial import COLUMNS, ArchRow, Cell, Outcome

MATRIX_VERSION = 1  # bump when the derivation or the checks change what a row means
ARCH_TIMEOUT_S = 300.0  # one architecture making no progress for this long is stopped
PACKAGES = ("mlx-lm", "mlx")


@dataclass(frozen=True)
class Matrix:
    """Rows for every architecture module, the helpers left out, and how it was made."""

    versions: Mapping[str, str]  # package -> installed version
    rows: tuple[ArchRow, ...]
    not_architectures: Mapping[str, str]  # module -> why it is no architecture
    wall_s: float  # seconds the run took (when it was made, not when it was read from the cache)
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
    """The installed versions of mlx-lm and mlx (read from metadata, without importing them)."""
    out: dict[str, str] = {}
    for package in PACKAGES:
        try:
            out[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            out[package] = "not installed"
    return out


def cache_path(versions: Mapping[str, str], root: Path | None = None) -> Path:
    """Where the matrix for these versions is kept."""
    tag = "_".join(f"{p}-{versions.get(p, 'none')}" for p in PACKAGES)
    return (root or cache_root()) / "arch-matrix" / f"{tag}_v{MATRIX_VERSION}.json"


def matrix(
    *,
    force: bool = False,
    names: Sequence[str] | None = None,
    root: Path | None = None,
    on_row: Callable[[ArchRow], None] | None = None,
) -> Matrix:
    """The matrix of the installed versions: from the cache, else run (and cached when complete).

    ``names`` limits it to some architectures (run, never cached).
    """
    from harness.models.zoo.derive_text import NOT_ARCHITECTURES, architecture_names

    versions = installed_versions()
    path = cache_path(versions, root)
    if names is None and not force:
        cached = read(path)
        if cached is not None:
            return cached
    start = time.monotonic()
    rows = run_rows(list(names) if names is not None else architecture_names(), on_row=on_row)
    made = Matrix(versions, tuple(rows), NOT_ARCHITECTURES, time.monotonic() - start)
    if names is None:
        write(path, made)
    return made


def run_rows(
    names: Sequence[str],
    *,
    timeout_s: float = ARCH_TIMEOUT_S,
    command: Sequence[str] = (sys.executable, "-m", "harness.models.zoo.arch_worker"),
    on_row: Callable[[ArchRow], None] | None = None,
) -> list[ArchRow]:
    """Try ``names`` in worker processes, in order; a worker that dies or hangs costs its current
    architecture a failed cell (with the signal or the timeout) and the next worker goes on."""
    rows: list[ArchRow] = []
    remaining = list(names)
    with tempfile.TemporaryDirectory(prefix="arch-matrix-") as tmp:
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


def _run_worker(command: list[str], events: Path, timeout_s: float) -> str | None:
    """Run one worker to its end; None when it exited cleanly, else why it did not."""
    stderr = events.with_suffix(".stderr")
    with stderr.open("wb") as err:
        proc = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )
        size, last_progress = -1, time.monotonic()
        while True:
            try:
                rc = proc.wait(timeout=0.5)
                break
            except subprocess.TimeoutExpired:
                now_size = events.stat().st_size
                if now_size != size:
                    size, last_progress = now_size, time.monotonic()
                elif time.monotonic() - last_progress > timeout_s:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()
                    return f"no progress for {timeout_s:.0f} s: stopped"
    if rc == 0:
        return None
    if rc < 0:
        return f"the process died: {signal.Signals(-rc).name}"
    tail = [line for line in stderr.read_text(errors="replace").splitlines() if line.strip()]
    return f"the process exited with status {rc}" + (f": {tail[-1].strip()[:200]}" if tail else "")


def rows_from_events(
    names: Sequence[str], events: Sequence[Mapping[str, Any]], death: str | None
) -> list[ArchRow]:
    """The rows a worker's events give, in ``names`` order; with ``death``, the architecture it
    was on gets a row saying where it died (the rest are left for the next worker)."""
    by_arch: dict[str, list[Mapping[str, Any]]] = {}
    for event in events:
        by_arch.setdefault(str(event["arch"]), []).append(event)
    rows: list[ArchRow] = []
    for name in names:
        seen = by_arch.get(name)
        if not seen:
            if death is not None and not rows and not events:
                rows.append(_died(name, [], death))  # died before its first event
            break
        if seen[-1]["column"] != "done":
            rows.append(_died(name, seen, death or "the process ended without finishing it"))
            break
        rows.append(_row(name, seen))
    return rows


def _cells(events: Sequence[Mapping[str, Any]]) -> dict[str, Cell]:
    return {
        str(e["column"]): Cell(Outcome(e["outcome"]), str(e.get("detail", "")))
        for e in events
        if "outcome" in e
    }


def _row(name: str, events: Sequence[Mapping[str, Any]]) -> ArchRow:
    cells = _cells(events)
    generated = cells.pop("generated", Cell(Outcome.NOT_GENERATED, "no event"))
    return ArchRow(name, generated, {c: cells[c] for c in COLUMNS if c in cells})


def _died(name: str, events: Sequence[Mapping[str, Any]], death: str) -> ArchRow:
    """A row for an architecture whose process died at its last started column."""
    cells = _cells(events)
    started = [str(e["column"]) for e in events if "outcome" not in e]
    at = started[-1] if started else "generated"
    if at == "generated":
        return ArchRow(name, Cell(Outcome.FAILED, f"generating it: {death}"))
    generated = cells.pop("generated")
    cells[at] = Cell(Outcome.FAILED, death)
    return ArchRow(name, generated, {c: cells[c] for c in COLUMNS if c in cells})


def to_json(m: Matrix) -> dict[str, Any]:
    return {
        "matrix_version": MATRIX_VERSION,
        "versions": dict(m.versions),
        "wall_s": round(m.wall_s, 3),
        "not_architectures": dict(m.not_architectures),
        "architectures": [
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


def from_json(data: Mapping[str, Any], *, cached: bool = False) -> Matrix:
    rows = tuple(
        ArchRow(
            str(a["name"]),
            Cell(Outcome(a["generated"]["outcome"]), str(a["generated"]["detail"])),
            {c: Cell(Outcome(a[c]["outcome"]), str(a[c]["detail"])) for c in COLUMNS},
        )
        for a in data["architectures"]
    )
    return Matrix(
        dict(data["versions"]), rows, dict(data["not_architectures"]), float(data["wall_s"]), cached
    )


def read(path: Path) -> Matrix | None:
    """The matrix cached at ``path``; None when absent, unreadable or of another version."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("matrix_version") != MATRIX_VERSION:
            return None
        return from_json(data, cached=True)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def write(path: Path, m: Matrix) -> None:
    """Cache ``m`` at ``path`` (written aside, then moved in place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(to_json(m), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)
