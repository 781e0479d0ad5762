"""Distributed section: one row per ``distributed`` case (world size and split: the sharded
model's prefill, decode and TTFT beside the same model's in one process, their ratios, whether
every rank's greedy tokens were the one process's, the largest rank's memory), then one row per
rank: its host, MLX peak memory and RSS, and the link measured before the run (all_sum and
send/recv, bytes/s per buffer size)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.formatting import MISSING, choose_scale, status_label
from harness.report.sections import METRICS, Section
from harness.report.table import Cell, Column, Table, metric_cell
from harness.scenarios.distributed import metrics as dm
from harness.scenarios.distributed.artifacts import DistributedArtifacts
from harness.scenarios.distributed.outputs import CHECK
from harness.scenarios.distributed.scenario import SCENARIO

FIGURES = (
    (dm.PREFILL, "prefill"),
    (dm.DECODE, "decode"),
    (dm.TTFT, "TTFT"),
    (dm.SINGLE_PREFILL, "1-process prefill"),
    (dm.SINGLE_DECODE, "1-process decode"),
    (dm.SINGLE_TTFT, "1-process TTFT"),
    (dm.PREFILL_RATIO, "prefill vs 1"),
    (dm.DECODE_RATIO, "decode vs 1"),
)
LINK_OPS = ("all_sum", "send_recv")


@dataclass(frozen=True)
class DistributedSection:
    cases: Table
    ranks: Table | None


def _split(result: CaseResult) -> str:
    return DistributedArtifacts.of(result).split_line() or MISSING


def _check_cell(result: CaseResult) -> Cell:
    verdict = result.check(CHECK)
    if verdict is None:
        return Cell(MISSING)
    return Cell(verdict.status.label, title=verdict.reason)


def _bytes(value: object) -> str:
    return _size(int(value)) if isinstance(value, int | float) and value > 0 else MISSING


def _rate(value: object) -> str:
    if not isinstance(value, int | float) or value <= 0:
        return MISSING
    for unit, size in (("GB/s", 1e9), ("MB/s", 1e6), ("kB/s", 1e3)):
        if value >= size:
            return f"{value / size:.3g} {unit}"
    return f"{value:.3g} B/s"


def _size(value: int) -> str:
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:.4g} {unit}"
    return f"{value} B"


def _sizes(results: Sequence[CaseResult]) -> list[int]:
    sizes = {
        f.size_bytes
        for r in results
        for rank in DistributedArtifacts.of(r).ranks
        for f in rank.link
        if f.size_bytes is not None
    }
    return sorted(sizes)


def _case_row(result: CaseResult, scales: Mapping[str, Any]) -> tuple[Cell, ...]:
    status = "" if result.status is Status.PASSED else f" · {status_label(result.status)}"
    reason = result.reason if result.status is not Status.PASSED else None
    return (
        Cell(result.model, note=result.case_id.rsplit("::", 1)[-1] + status, title=reason),
        Cell(_split(result), note=DistributedArtifacts.of(result).hosts or None),
        *(
            metric_cell(result.metric(spec.name), scales[spec.name], spread=False)
            for spec, _ in FIGURES
        ),
        _check_cell(result),
        metric_cell(result.metric(dm.PEAK_MEMORY.name), scales[dm.PEAK_MEMORY.name], spread=False),
        metric_cell(result.metric(dm.RSS.name), scales[dm.RSS.name], spread=False),
    )


def _rank_rows(results: Sequence[CaseResult], sizes: list[int]) -> list[tuple[Cell, ...]]:
    rows = []
    for result in results:
        for rank in DistributedArtifacts.of(result).ranks:
            rows.append(
                (
                    Cell(result.model, note=_split(result)),
                    Cell(MISSING if rank.rank is None else str(rank.rank), note=rank.host or None),
                    Cell(rank.status or MISSING, title=rank.reason or None),
                    Cell(_bytes(rank.peak_memory_bytes)),
                    Cell(_bytes(rank.rss_bytes)),
                    *(Cell(_rate(rank.rate(op, size))) for op in LINK_OPS for size in sizes),
                )
            )
    return rows


def build(run: RunRecord) -> DistributedSection | None:
    results = sorted(
        (r for r in run.results if r.scenario == SCENARIO.name),
        key=lambda r: (r.model, r.case_id),
    )
    if not results:
        return None

    def values(name: str) -> list[float | None]:
        found = (r.metric(name) for r in results)
        return [m.summary.median for m in found if m is not None and m.samples]

    specs = [spec for spec, _ in FIGURES] + [dm.PEAK_MEMORY, dm.RSS]
    scales = {s.name: choose_scale(s.unit, values(s.name)) for s in specs}
    columns = (
        Column("model"),
        Column("split", title="how the model is spread x ranks; where the ranks ran"),
        *(Column(f"{label} ({scales[s.name].label})", numeric=True) for s, label in FIGURES),
        Column("same tokens", title="every rank's greedy tokens = one process's, token by token"),
        Column(f"peak ({scales[dm.PEAK_MEMORY.name].label})", numeric=True),
        Column(f"RSS ({scales[dm.RSS.name].label})", numeric=True),
    )
    cases = Table(columns, tuple(_case_row(r, scales) for r in results))
    sizes = _sizes(results)
    rows = _rank_rows(results, sizes)
    ranks = None
    if rows:
        rank_columns = (
            Column("model"),
            Column("rank"),
            Column("status"),
            Column("peak memory", numeric=True),
            Column("RSS", numeric=True),
            *(
                Column(
                    f"{op} {_size(size)}", numeric=True, title="bytes/s, measured before the run"
                )
                for op in LINK_OPS
                for size in sizes
            ),
        )
        ranks = Table(rank_columns, tuple(rows))
    return DistributedSection(cases, ranks)


SECTION = Section(
    "distributed",
    "Distributed",
    build,
    claims=(dm.PREFIX,),
    order=METRICS + 145,
    templates=Path(__file__).parent,
)
