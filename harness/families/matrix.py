"""A family sweep (mlx-lm architectures, mlx-vlm or mlx-audio families): one row per family,
tried in worker processes, cached per installed library version.

:func:`run_rows` tries families in worker processes (:mod:`.worker`) and keeps going when
one dies or hangs: the row says where. :func:`cached_or_run` returns the cached matrix for the
installed versions of a :class:`MatrixSpec`'s packages, or runs it and caches it, so it
regenerates when one is upgraded (or the derivation changes: the spec's ``version``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any, ClassVar, Protocol, Self, TypeVar

from harness.families.row import ArchRow, Cell, Outcome
from harness.models.cache_dir import cache_root


class RowsMatrix(Protocol):
    """What the terminal and the cache read of any family sweep."""

    @property
    def versions(self) -> Mapping[str, str]: ...
    @property
    def rows(self) -> tuple[ArchRow, ...]: ...
    @property
    def wall_s(self) -> float: ...
    @property
    def cached(self) -> bool: ...

    def counts(self) -> dict[str, Counter[Outcome]]: ...
    def to_json(self) -> dict[str, Any]: ...


M = TypeVar("M", bound=RowsMatrix)


@dataclass(frozen=True)
class MatrixSpec:
    """What one family sweep is made of, and what its rows, worker runs and cache follow."""

    slug: str  # "arch-matrix": the cache folder, and the prefix of the workers' temporary folder
    packages: tuple[str, ...]  # whose installed versions key the cache
    version: int  # bump when the derivation or the checks change what a row means
    columns: tuple[str, ...]  # after "generated"
    rows_key: str  # the JSON key of the rows ("architectures", "families")
    worker: tuple[str, ...]  # the command of a worker process (given OUT NAME...)
    timeout_s: float  # one family making no progress for this long is stopped

    def installed_versions(self) -> dict[str, str]:
        """The installed versions of the packages (read from metadata, without importing them)."""
        out: dict[str, str] = {}
        for package in self.packages:
            try:
                out[package] = metadata.version(package)
            except metadata.PackageNotFoundError:
                out[package] = "not installed"
        return out

    def cache_path(self, versions: Mapping[str, str], root: Path | None = None) -> Path:
        """Where the matrix for these versions is kept."""
        tag = "_".join(f"{p}-{versions.get(p, 'none')}" for p in self.packages)
        return (root or cache_root()) / self.slug / f"{tag}_v{self.version}.json"

    def cached_or_run(
        self,
        *,
        every: Callable[[], Sequence[str]],
        run: Callable[..., list[ArchRow]],
        make: Callable[[dict[str, str], tuple[ArchRow, ...], float], M],
        parse: Callable[[Mapping[str, Any]], M],
        force: bool,
        names: Sequence[str] | None,
        root: Path | None,
        on_row: Callable[[ArchRow], None] | None,
    ) -> M:
        """The matrix of the installed versions: from the cache, else ``run`` over ``every()``
        name and cached. ``names`` limits it to some families (run, never cached); ``make``
        builds the matrix from its versions, rows and seconds, ``parse`` reads a cached one."""
        versions = self.installed_versions()
        path = self.cache_path(versions, root)
        if names is None and not force:
            cached = self.read(path, parse)
            if cached is not None:
                return cached
        start = time.monotonic()
        rows = run(list(names) if names is not None else list(every()), on_row=on_row)
        made = make(versions, tuple(rows), time.monotonic() - start)
        if names is None:
            write(path, made)
        return made

    def run_rows(
        self,
        names: Sequence[str],
        *,
        timeout_s: float | None = None,
        command: Sequence[str] | None = None,
        on_row: Callable[[ArchRow], None] | None = None,
    ) -> list[ArchRow]:
        """Try ``names`` in worker processes, in order; a worker that dies or hangs costs its
        current family a failed cell (with the signal or the timeout) and the next worker goes
        on."""
        rows: list[ArchRow] = []
        remaining = list(names)
        with tempfile.TemporaryDirectory(prefix=f"{self.slug}-") as tmp:
            while remaining:
                events_path = Path(tmp) / f"events-{len(rows)}.jsonl"
                events_path.touch()
                death = run_worker(
                    [*(command or self.worker), str(events_path), *remaining],
                    events_path,
                    self.timeout_s if timeout_s is None else timeout_s,
                )
                lines = events_path.read_text().splitlines()
                batch = self.rows_from_events(remaining, [json.loads(x) for x in lines if x], death)
                for row in batch:
                    if on_row is not None:
                        on_row(row)
                rows.extend(batch)
                remaining = remaining[len(batch) :]
        return rows

    def rows_from_events(
        self, names: Sequence[str], events: Sequence[Mapping[str, Any]], death: str | None
    ) -> list[ArchRow]:
        """The rows a worker's events give, in ``names`` order; with ``death``, the family it was
        on gets a row saying where it died (the rest are left for the next worker)."""
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
                rows.append(
                    self._row(name, seen, death or "the process ended without finishing it")
                )
                break
            rows.append(self._row(name, seen, None))
        return rows

    def _row(self, name: str, events: Sequence[Mapping[str, Any]], death: str | None) -> ArchRow:
        cells = {
            str(e["column"]): Cell(Outcome(e["outcome"]), str(e.get("detail", "")))
            for e in events
            if "outcome" in e
        }
        if death is not None:  # the last column started is where it died
            started = [str(e["column"]) for e in events if "outcome" not in e]
            at = started[-1] if started else "generated"
            cells[at] = Cell(Outcome.FAILED, death)
        generated = cells.pop("generated", Cell(Outcome.FAILED, death or "no event"))
        return ArchRow(name, generated, {c: cells[c] for c in self.columns if c in cells})

    def to_json(
        self,
        versions: Mapping[str, str],
        wall_s: float,
        rows: Sequence[ArchRow],
        extra: Mapping[str, Any] | None = None,
    ) -> dict[str, Any]:
        """A matrix as JSON: its version, the installed versions, seconds, ``extra``, the rows."""
        return {
            "matrix_version": self.version,
            "versions": dict(versions),
            "wall_s": round(wall_s, 3),
            **(extra or {}),
            self.rows_key: [
                {
                    "name": r.name,
                    "generated": _cell_json(r.generated),
                    **{c: _cell_json(r.cell(c)) for c in self.columns},
                }
                for r in rows
            ],
        }

    def rows_from_json(self, data: Mapping[str, Any]) -> tuple[ArchRow, ...]:
        """The rows of a matrix's JSON (:meth:`to_json`)."""
        return tuple(
            ArchRow(str(a["name"]), _cell(a["generated"]), {c: _cell(a[c]) for c in self.columns})
            for a in data[self.rows_key]
        )

    def read(self, path: Path, parse: Callable[[Mapping[str, Any]], M]) -> M | None:
        """The matrix cached at ``path`` (``parse`` reads its JSON); None when absent,
        unreadable or of another version."""
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("matrix_version") != self.version:
                return None
            return parse(data)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None


@dataclass(frozen=True)
class FamilyMatrix:
    """One row per family, and how the matrix was made; a subclass names its :class:`MatrixSpec`."""

    spec: ClassVar[MatrixSpec]
    versions: Mapping[str, str]  # package -> installed version
    rows: tuple[ArchRow, ...]
    wall_s: float  # seconds the run took (when it was made, not when it was read from the cache)
    cached: bool = False

    def counts(self) -> dict[str, Counter[Outcome]]:
        """Per column ("generated" first), how many rows have each outcome."""
        return column_counts(self.rows, self.spec.columns)

    def to_json(self) -> dict[str, Any]:
        return self.spec.to_json(self.versions, self.wall_s, self.rows)

    @classmethod
    def from_json(cls, data: Mapping[str, Any], *, cached: bool = False) -> Self:
        return cls(
            dict(data["versions"]), cls.spec.rows_from_json(data), float(data["wall_s"]), cached
        )

    @classmethod
    def cached_or_run(
        cls,
        every: Callable[[], Sequence[str]],
        run: Callable[..., list[ArchRow]],
        **options: Any,
    ) -> Self:
        """:meth:`MatrixSpec.cached_or_run` of this matrix (``options``: force, names, root,
        on_row)."""
        return cls.spec.cached_or_run(
            every=every,
            run=run,
            make=cls,
            parse=lambda data: cls.from_json(data, cached=True),
            **options,
        )

    @classmethod
    def read(cls, path: Path) -> Self | None:
        """The matrix cached at ``path``; None when absent, unreadable or of another version."""
        return cls.spec.read(path, lambda data: cls.from_json(data, cached=True))


def column_counts(rows: Sequence[ArchRow], columns: Sequence[str]) -> dict[str, Counter[Outcome]]:
    """Per column ("generated" first), how many rows have each outcome."""
    out: dict[str, Counter[Outcome]] = {"generated": Counter(r.generated.outcome for r in rows)}
    for column in columns:
        out[column] = Counter(r.cell(column).outcome for r in rows)
    return out


def to_json(m: RowsMatrix) -> dict[str, Any]:
    return m.to_json()


def write(path: Path, m: RowsMatrix) -> None:
    """Cache ``m`` at ``path`` (written aside, then moved in place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(m.to_json(), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def run_worker(command: list[str], events: Path, timeout_s: float) -> str | None:
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


def _cell_json(cell: Cell) -> dict[str, str]:
    return {"outcome": cell.outcome.value, "detail": cell.detail}


def _cell(data: Mapping[str, Any]) -> Cell:
    return Cell(Outcome(data["outcome"]), str(data["detail"]))
