"""Every raw sample as one flat table (JSON Lines, Parquet) with all of a case's params."""

from __future__ import annotations

import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.core.types import CaseResult, Machine, Metric, RunRecord, Status, Unit
from harness.results.sample_export import (
    COLUMNS,
    ExportFormat,
    ExportUnavailable,
    export_samples,
    sample_rows,
)
from harness.results.store import write_record

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 8 << 30, "3.11")


def _run(last_ttft: float = math.nan) -> RunRecord:
    throughput = CaseResult(
        case_id="s::[bold]m[/]::throughput[prompt_tokens=64]",
        suite="s",
        model="[bold]m[/]",
        scenario="throughput",
        status=Status.PASSED,
        params={"prompt_tokens": 64, "gen_tokens": 32, "ignore_eos": True, "depth": None},
        point={"prompt_tokens": 64},  # only this one was swept
        metrics=(
            Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, (10.0, 11.0), (9.0,)),
            Metric(
                "throughput.ttft_s", Unit.SECONDS, (0.5, last_ttft)
            ),  # NaN: a sample that failed
        ),
    )
    serving = CaseResult(
        case_id="s::m::serving",
        suite="s",
        model="m",
        scenario="serving",
        status=Status.FAILED,
        params={"concurrency": [1, 2], "prompt_tokens": 128.5, "seed": 0},
        metrics=(Metric("serving.c1.completed", Unit.COUNT, (4.0,)),),
        scenario_version=2,
    )
    return RunRecord(
        schema_version=1,
        run_id="r1",
        started_at="2026-01-01T00:00:00",
        machine=MACHINE,
        packages={},
        git_sha=None,
        results=(throughput, serving),
        finished_at="2026-01-01T00:01:00",
    )


def test_one_row_per_sample_with_every_param_of_the_case() -> None:
    rows = sample_rows(_run())
    assert len(rows) == 2 + 1 + 2 + 1  # warm-ups included, marked
    first = rows[0]
    assert {k: first[k] for k in COLUMNS} == {
        "run_id": "r1",
        "suite": "s",
        "case_id": "s::[bold]m[/]::throughput[prompt_tokens=64]",
        "model": "[bold]m[/]",
        "scenario": "throughput",
        "scenario_version": 1,
        "status": "passed",
        "metric": "throughput.decode_tps",
        "unit": "tok/s",
        "view": None,
        "warmup": True,
        "repeat": 0,
        "value": 9.0,
    }
    # the defaults too, not only the swept prompt_tokens
    assert first["param.gen_tokens"] == 32 and first["param.ignore_eos"] is True
    assert [r["repeat"] for r in rows if r["metric"] == "throughput.decode_tps"] == [0, 0, 1]


def test_jsonl_has_the_same_columns_on_every_line_and_nan_as_null(tmp_path: Path) -> None:
    out = export_samples(_run(), ExportFormat.JSONL, tmp_path / "samples.jsonl")
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len({tuple(r) for r in records}) == 1
    assert list(records[0])[: len(COLUMNS)] == list(COLUMNS)
    ttft = [r["value"] for r in records if r["metric"] == "throughput.ttft_s"]
    assert ttft == [0.5, None]
    assert records[-1]["param.concurrency"] == [1, 2] and records[0]["param.concurrency"] is None


def test_parquet_columns_take_one_type_each(tmp_path: Path) -> None:
    pq = pytest.importorskip("pyarrow.parquet")
    out = export_samples(_run(), ExportFormat.PARQUET, tmp_path / "samples.parquet")
    table = pq.read_table(out)
    types = {f.name: str(f.type) for f in table.schema}
    assert types["value"] == "double" and types["repeat"] == "int64"
    assert types["warmup"] == "bool"
    assert types["param.gen_tokens"] == "int64"
    assert types["param.prompt_tokens"] == "double"  # 64 and 128.5
    assert types["param.concurrency"] == "string"  # a list: JSON text
    rows: list[dict[str, Any]] = table.to_pylist()
    assert rows[-1]["param.concurrency"] == "[1, 2]"
    assert rows[0]["model"] == "[bold]m[/]"
    assert len(rows) == 6


def test_parquet_without_pyarrow_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(ExportUnavailable, match=r"mlx-harness\[parquet\]"):
        export_samples(_run(), ExportFormat.PARQUET, tmp_path / "samples.parquet")


def test_export_command_writes_next_to_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    write_record(_run(last_ttft=0.6), tmp_path / "run")  # records hold no NaN
    assert main(["export", str(tmp_path / "run"), "--format", "jsonl"]) == 0
    assert (tmp_path / "run" / "samples.jsonl").is_file()
    assert capsys.readouterr().out.strip() == f"wrote {tmp_path / 'run' / 'samples.jsonl'}"
    assert main(["export", str(tmp_path / "run")]) == 2
    assert "export needs --format parquet|jsonl" in capsys.readouterr().err
