from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.runner.machine import machine
from harness.store import RunFileError, RunWriter, export_csv, load_run, metrics_frame
from harness.types import CaseResult, Metric, ModelIdentity, Status, Unit


def _write(path: Path, *, finish: bool = True) -> None:
    writer = RunWriter(path)
    writer.start(
        run_id="r1",
        started_at="2026-01-01T00:00:00+00:00",
        machine=machine("x"),
        packages={"mlx": "0.32.4"},
        git_sha="abc",
        suites=[],
    )
    writer.model(ModelIdentity("m", "/models/m", "mlx_lm"), device="cpu", blas="openblas (x)")
    writer.case(
        CaseResult(
            case_id="s::m::throughput[prompt_tokens=8]",
            suite="s",
            model="m",
            scenario="throughput",
            status=Status.PASSED,
            point={"prompt_tokens": 8},
            metrics=(
                Metric(
                    "throughput.decode_tps",
                    Unit.TOKENS_PER_SECOND,
                    (10.0, 12.0),
                    warmup_samples=(3.0,),
                ),
            ),
        )
    )
    writer.case(
        CaseResult(
            case_id="s::m::load",
            suite="s",
            model="m",
            scenario="load",
            status=Status.CRASHED,
            reason="worker killed by SIGKILL",
        )
    )
    if finish:
        writer.finish("2026-01-01T00:01:00+00:00")
    writer.close()


def test_round_trip(tmp_path: Path) -> None:
    _write(tmp_path / "run.jsonl")
    run = load_run(tmp_path)
    assert run.run_id == "r1" and run.finished_at is not None
    assert run.machine.mlx_device == "cpu" and run.machine.blas == "openblas (x)"
    assert [r.status for r in run.results] == [Status.PASSED, Status.CRASHED]
    decode = run.results[0].metric("throughput.decode_tps")
    assert decode is not None and decode.samples == (10.0, 12.0) and decode.median == 11.0
    assert run.models["m"].path == "/models/m"


def test_dataframe_and_csv_keep_every_raw_sample(tmp_path: Path) -> None:
    _write(tmp_path / "run.jsonl")
    frame = metrics_frame(load_run(tmp_path))
    assert list(frame["value"]) == [3.0, 10.0, 12.0]
    assert list(frame["warmup"]) == [True, False, False]
    assert set(frame["param.prompt_tokens"]) == {8}
    out = export_csv(load_run(tmp_path), tmp_path / "x.csv")
    assert len(out.read_text().splitlines()) == 4


def test_a_run_killed_mid_write_keeps_its_finished_cases(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    _write(path, finish=False)
    with path.open("a") as fh:
        fh.write('{"event": "case", "result": {"case_')  # cut off mid-line
    run = load_run(path)
    assert run.finished_at is None and len(run.results) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "not a run record"),
        ('{"event": "case"}\n', "not a run record"),
        ('{"event": "run_start", "schema_version": 99}\n', "newer than this harness reads"),
        ('{"event": "run_start", "schema_version": 1}\nnot json\n{}\n', ":2: not a JSON line"),
    ],
)
def test_bad_run_files_are_one_line_errors(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_text(content)
    with pytest.raises(RunFileError, match=message) as info:
        load_run(path)
    assert "\n" not in str(info.value)


def test_lines_are_plain_json(tmp_path: Path) -> None:
    _write(tmp_path / "run.jsonl")
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert [e["event"] for e in events] == ["run_start", "model", "case", "case", "run_end"]
    assert events[0]["schema_version"] == 1
