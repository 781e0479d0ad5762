"""Record migrations (harness.results.migrations): a record of each older version, built here,
loads at today's version through the loader and the history digest; a record of a newer
version is one line saying to upgrade, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.results.digest import digest_run
from harness.results.migrations import RECORD_VERSION, UPDATES, migrated
from harness.results.store import SCHEMA_VERSION, RunFileError, load_run
from harness.scenarios import throughput

MACHINE = {
    "os": "Linux",
    "os_release": "6",
    "arch": "x86_64",
    "cpu": "c",
    "cores": 2,
    "memory_bytes": 1 << 34,
    "python": "3.11",
}


def start(version: int) -> dict[str, Any]:
    return {
        "event": "run_start",
        "schema_version": version,
        "run_id": "r",
        "started_at": "2026-01-01T00:00:00+00:00",
        "machine": MACHINE,
    }


def case(case_id: str, scenario: str, **fields: Any) -> dict[str, Any]:
    result = {"case_id": case_id, "suite": "s", "model": "m", "scenario": scenario}
    return {"event": "case", "result": {**result, "status": "passed", **fields}}


def metric(name: str, unit: str, *samples: float) -> dict[str, Any]:
    return {"name": name, "unit": unit, "samples": list(samples)}


# version 1: the roofline against MLX's own kernels (older names), checks only as an artifact
VERSION_1 = [
    start(1),
    case(
        "s::m::throughput",
        "throughput",
        metrics=[
            metric("throughput.decode_tps", "tok/s", 14.0, 14.2),
            metric("throughput.decode_ceiling_tps", "tok/s", 13.0),
            metric("throughput.decode_share", "x", 0.9, 0.95),
            metric("throughput.prefill_ceiling_tps", "tok/s", 400.0),
            metric("throughput.prefill_share", "x", 0.5),
        ],
    ),
    case(
        "s::m::api_contracts",
        "api_contracts",
        artifacts={
            "checks": [
                {"name": "models_list", "verdict": "pass", "reason": "ok"},
                {"name": "stream", "verdict": "fail", "reason": "no [DONE]"},
            ]
        },
    ),
]
OLDER: dict[int, list[dict[str, Any]]] = {1: VERSION_1}  # one record per version before today's


def write(folder: Path, events: list[dict[str, Any]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    record = folder / "run.jsonl"
    record.write_text("".join(json.dumps(e) + "\n" for e in events), encoding="utf-8")
    return record


def test_every_older_version_has_a_record_here_and_a_step() -> None:
    assert set(OLDER) == set(range(1, RECORD_VERSION))
    assert set(UPDATES) == set(range(2, RECORD_VERSION + 1))
    assert SCHEMA_VERSION == RECORD_VERSION  # what every new record is written in


@pytest.mark.parametrize("version", sorted(OLDER))
def test_an_older_record_loads_at_todays_version(version: int, tmp_path: Path) -> None:
    run = load_run(write(tmp_path, OLDER[version]))
    assert run.schema_version == RECORD_VERSION
    roofline = next(r for r in run.results if r.scenario == "throughput")
    names = [m.name for m in roofline.metrics]
    # MLX's kernel speed keeps a name of its own: never today's hardware ceiling
    assert names == [
        throughput.DECODE.name,
        throughput.KERNEL_CEILING.name,
        throughput.KERNEL_SHARE.name,
        throughput.PREFILL_KERNEL_CEILING.name,
        throughput.PREFILL_KERNEL_SHARE.name,
    ]
    assert throughput.CEILING.name not in names and throughput.SHARE.name not in names
    contracts = next(r for r in run.results if r.scenario == "api_contracts")
    assert contracts.checks == (
        CheckVerdict("models_list", CheckStatus.PASS, "ok"),
        CheckVerdict("stream", CheckStatus.FAIL, "no [DONE]"),
    )
    digest = digest_run(tmp_path / "run.jsonl")
    assert digest.head.schema_version == RECORD_VERSION
    assert {s.metric for s in digest.summaries} >= {throughput.KERNEL_SHARE.name}
    assert "throughput.decode_share" not in {s.metric for s in digest.summaries}


def test_a_step_leaves_a_line_of_todays_format_as_it_is() -> None:
    """A version-1 run resumed by today's harness holds today's lines under its old head."""
    today = case(
        "s::m::throughput",
        "throughput",
        metrics=[metric(throughput.SHARE.name, "x", 0.3)],
        checks=[{"name": "a", "status": "pass", "reason": ""}],
        artifacts={"checks": [{"name": "b", "verdict": "fail"}]},
    )["result"]
    assert migrated(today, 1) == today
    assert migrated(migrated(VERSION_1[1]["result"], 1), 1) == migrated(VERSION_1[1]["result"], 1)


def test_a_step_leaves_the_line_it_was_given_untouched() -> None:
    before = json.dumps(VERSION_1)
    migrated(VERSION_1[1]["result"], 1)
    migrated(VERSION_1[2]["result"], 1)
    assert json.dumps(VERSION_1) == before


def test_a_newer_record_is_one_line_to_upgrade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    newer = RECORD_VERSION + 1
    record = write(tmp_path / "newer", [start(newer), case("s::m::load", "load")])
    with pytest.raises(RunFileError, match=f"schema_version {newer} is newer.*upgrade mlx-harness"):
        load_run(record)
    assert main(["report", str(record.parent)]) != 0
    err = capsys.readouterr().err
    assert "upgrade mlx-harness" in err and "Traceback" not in err
    assert len([line for line in err.splitlines() if "upgrade" in line]) == 1
