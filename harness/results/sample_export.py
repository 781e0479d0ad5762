"""Every raw sample of a run as one flat table: JSON Lines, or Parquet (pyarrow, an extra).

One row per (case, metric, sample): the run, suite, case, model, scenario (and its version),
status, metric, unit, memory view, whether it is a warm-up, the repeat index and the value, and
one ``param.<name>`` column per parameter of the case, all of them (the defaults too, not only
the swept ones), so a notebook can group by any of them.

Parquet needs one type per column; a parameter's column takes the narrowest type its values
share (bool, int, float), else string, with lists and objects written as JSON text. JSON Lines
keeps every value as it is.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from enum import Enum
from pathlib import Path
from typing import Any

from harness.core.types import CaseResult, RunRecord

PARAM_PREFIX = "param."
# the fixed columns, in order; ``param.*`` columns follow, sorted
COLUMNS: tuple[str, ...] = (
    "run_id",
    "suite",
    "case_id",
    "model",
    "scenario",
    "scenario_version",
    "status",
    "metric",
    "unit",
    "view",
    "warmup",
    "repeat",
    "value",
)
PARQUET_HINT = "pip install 'mlx-harness[parquet]' (pyarrow), or use --format jsonl"


class ExportFormat(str, Enum):
    JSONL = "jsonl"
    PARQUET = "parquet"

    @property
    def file_name(self) -> str:
        return f"samples.{self.value}"


class ExportUnavailable(RuntimeError):
    """A format whose library is not installed; the message says what to install."""


def sample_rows(run: RunRecord) -> list[dict[str, Any]]:
    """The rows of :data:`COLUMNS` plus ``param.*``, one per raw sample (warm-ups included)."""
    rows: list[dict[str, Any]] = []
    for result in run.results:
        params = {**result.params, **result.point}
        base = {
            "run_id": run.run_id,
            "suite": result.suite,
            "case_id": result.case_id,
            "model": result.model,
            "scenario": result.scenario,
            "scenario_version": result.scenario_version,
            "status": result.status.value,
            **{f"{PARAM_PREFIX}{key}": value for key, value in params.items()},
        }
        for fields in sample_fields(result, "repeat"):
            rows.append({**base, **fields, "value": float(fields["value"])})
    return rows


def sample_fields(result: CaseResult, index_key: str) -> Iterator[dict[str, Any]]:
    """Each raw sample of a case (per metric, warm-ups first): its metric, unit, view, whether
    a warm-up, its index among its kind (under ``index_key``) and its value."""
    for metric in result.metrics:
        for warmup, samples in ((True, metric.warmup_samples), (False, metric.samples)):
            for index, value in enumerate(samples):
                yield {
                    "metric": metric.name,
                    "unit": metric.unit.value,
                    "view": metric.view,
                    "warmup": warmup,
                    index_key: index,
                    "value": value,
                }


def column_names(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    params = sorted({key for row in rows for key in row if key.startswith(PARAM_PREFIX)})
    return [*COLUMNS, *params]


def _json_value(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no NaN; a failed sample reads as null
    return value


def write_jsonl(rows: list[dict[str, Any]], out: Path) -> Path:
    names = column_names(rows)
    with out.open("w", encoding="utf-8") as fh:
        for row in rows:
            record = {name: _json_value(row.get(name)) for name in names}
            fh.write(json.dumps(record, ensure_ascii=False, allow_nan=False) + "\n")
    return out


def _param_type(values: list[Any]) -> str:
    """``bool``, ``int``, ``float`` or ``string``: the narrowest type all non-null values share."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present):
        return "bool"
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present):
        return "int"
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return "float"
    return "string"


def _as_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def write_parquet(rows: list[dict[str, Any]], out: Path) -> Path:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ExportUnavailable(f"Parquet needs pyarrow: {PARQUET_HINT}") from None
    fixed = {
        "run_id": pa.string(),
        "suite": pa.string(),
        "case_id": pa.string(),
        "model": pa.string(),
        "scenario": pa.string(),
        "scenario_version": pa.int64(),
        "status": pa.string(),
        "metric": pa.string(),
        "unit": pa.string(),
        "view": pa.string(),
        "warmup": pa.bool_(),
        "repeat": pa.int64(),
        "value": pa.float64(),
    }
    arrow_types = {"bool": pa.bool_(), "int": pa.int64(), "float": pa.float64()}
    columns: dict[str, Any] = {}
    fields = []
    for name in column_names(rows):
        values = [row.get(name) for row in rows]
        if name in fixed:
            kind = fixed[name]
        else:
            chosen = _param_type(values)
            kind = arrow_types.get(chosen, pa.string())
            if chosen == "string":
                values = [_as_text(v) for v in values]
            elif chosen == "float":
                values = [None if v is None else float(v) for v in values]
        fields.append(pa.field(name, kind))
        columns[name] = pa.array(values, type=kind)
    table = pa.Table.from_pydict(columns, schema=pa.schema(fields))
    pq.write_table(table, out)
    return out


def export_samples(run: RunRecord, fmt: ExportFormat, out: Path) -> Path:
    """Write every sample of ``run`` to ``out`` in ``fmt``; return the path."""
    rows = sample_rows(run)
    if fmt is ExportFormat.PARQUET:
        return write_parquet(rows, out)
    return write_jsonl(rows, out)
