"""``mlx-harness run --shard I/N`` and ``mlx-harness merge`` in process, on fake-backend models:
a suite run whole and in three shards merged has the same cases and statuses; an empty shard
is a run; bad values and unmergeable runs are one line; the example workflow parses."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.core.types import RunRecord
from harness.results.store import RunWriter, load_run

ROOT = Path(__file__).resolve().parents[1]
WORKFLOW = ROOT / "examples" / "github-actions" / "mlx-harness.yml"


@pytest.fixture()
def suite(tmp_path: Path) -> Path:
    """Five fake models, one of which fails its gate: 3 cases each, 15 in all."""
    lines = ["schema_version: 1", "defaults: {repeats: 2, warmup: 0}", "models:"]
    for name in "abcde":
        slow = 0.2 if name == "c" else 0.001  # under the gate: a failed case
        write_fake_model(tmp_path / "models" / name, per_token_s=slow)
        lines.append(f"  - {{name: {name}, path: models/{name}, backend: fake}}")
    lines += [
        "scenarios:",
        "  - scenario: load",
        "  - scenario: throughput",
        "    params: {gen_tokens: 2}",
        "    sweep: {prompt_tokens: [4, 8]}",
        "    gates: {throughput.decode_tps: '>= 20'}",
    ]
    path = tmp_path / "five.suite.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _statuses(run: RunRecord) -> dict[str, str]:
    return {r.case_id: r.status.value for r in run.results}


def _run(suite: Path, reports: Path, run_id: str, *extra: str) -> int:
    return main(["run", str(suite), "--report-dir", str(reports), "--run-id", run_id, *extra])


def test_three_shards_merged_equal_one_whole_run(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    assert _run(suite, reports, "whole") == 1  # model c fails its gate
    whole = load_run(reports / "whole")
    assert len(whole.results) == 15
    for index in (1, 2, 3):
        _run(suite, reports, f"s{index}", "--shard", f"{index}/3")
    shards = [load_run(reports / f"s{i}") for i in (1, 2, 3)]
    assert [s.shard.label if s.shard else None for s in shards] == ["1/3", "2/3", "3/3"]
    assert {len(s.results) for s in shards} == {6, 3}  # 5 models of 3 cases dealt 2, 2, 1
    capsys.readouterr()
    out = tmp_path / "merged"
    assert main(["merge", *(str(reports / f"s{i}") for i in (3, 1, 2)), "--out", str(out)]) == 1
    printed = capsys.readouterr().out
    merged = load_run(out)
    assert _statuses(merged) == _statuses(whole)
    assert merged.run_id == "merged" and [p.run_id for p in merged.parts] == ["s1", "s2", "s3"]
    assert "15 cases: 13 passed, 2 failed" in printed
    assert "merged from 3 runs: s1 (shard 1/3), s2 (shard 2/3), s3 (shard 3/3)" in printed
    assert "spans" not in printed  # one machine
    report = (out / "report.md").read_text()
    assert "**15 cases:**" in report and "merged from 3 runs" in report


def _as_other_machine(run_dir: Path, out: Path) -> Path:
    """The run in ``run_dir`` rewritten by the store's writer as if another host ran it."""
    run = load_run(run_dir)
    writer = RunWriter(out / "run.jsonl")
    writer.start(
        run_id=f"{run.run_id}-b",
        started_at=run.started_at,
        machine=dataclasses.replace(run.machine, hostname="mac-b", cores=12),
        packages={**run.packages, "mlx-lm": "0.31.3"},
        git_sha=run.git_sha,
        suites=run.suites,
        shard=run.shard,
    )
    for result in run.results:
        writer.case(result)
    assert run.finished_at is not None
    writer.finish(run.finished_at)
    writer.close()
    return out


def test_a_merge_over_two_machines_says_so(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    for index in (1, 2):
        _run(suite, reports, f"s{index}", "--shard", f"{index}/2")
    other = _as_other_machine(reports / "s2", tmp_path / "elsewhere" / "s2-b")
    capsys.readouterr()
    main(["merge", str(reports / "s1"), str(other), "--out", str(tmp_path / "m")])
    printed = capsys.readouterr().out
    assert "spans 2 machines" in printed
    assert "mac-b (" in printed and "from s2-b (shard 2/2)" in printed
    assert "package mlx-lm differs between runs" in printed
    report = (tmp_path / "m" / "report.md").read_text()
    assert "spans 2 machines" in report and "mac-b" in report


def test_an_empty_shard_is_a_run_that_says_so(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    assert _run(suite, reports, "empty", "--shard", "6/6") == 0
    assert "shard 6/6: no cases (the plan's 5 models went to the other shards)" in (
        capsys.readouterr().out
    )
    run = load_run(reports / "empty")
    assert run.results == () and run.shard is not None and run.shard.plan_cases == 15
    assert "shard 6/6: no cases" in (reports / "empty" / "report.md").read_text()


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("0/3", "mlx-harness: error: --shard 0/3: I must be between 1 and 3, e.g. --shard 1/3"),
        ("4/3", "mlx-harness: error: --shard 4/3: I must be between 1 and 3, e.g. --shard 1/3"),
        ("x", "mlx-harness: error: --shard x: expected I/N (this job's shard of N), e.g."),
    ],
)
def test_bad_shard_is_one_line(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str, line: str
) -> None:
    assert _run(suite, tmp_path / "reports", "r", "--shard", value) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(line) and "\n" not in err
    assert not (tmp_path / "reports").exists()


def test_unmergeable_runs_are_one_line(
    suite: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    _run(suite, reports, "whole", "-k", "::a::")
    _run(suite, reports, "again", "-k", "::a::")
    capsys.readouterr()
    assert main(["merge", str(reports / "whole"), str(reports / "again")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (
        f"mlx-harness: error: case five::a::load is in both {reports / 'whole'} and "
        f"{reports / 'again'}; a case may come from one run only (merge each shard once)"
    )
    out = tmp_path / "m"
    assert main(["merge", str(reports / "whole"), "--out", str(out)]) == 0
    assert main(["merge", str(reports / "whole"), "--out", str(out)]) == 2
    assert "already holds a run record" in capsys.readouterr().err


def test_example_workflow_parses_and_shards_agree() -> None:
    workflow = yaml.safe_load(WORKFLOW.read_text())
    jobs = workflow["jobs"]
    shard, merge = jobs["shard"], jobs["merge"]
    assert shard["runs-on"] == ["self-hosted", "macOS", "ARM64"]
    count = int(workflow["env"]["SHARDS"])
    assert shard["strategy"]["matrix"]["shard"] == list(range(1, count + 1))
    assert shard["strategy"]["matrix"]["pinset"] and merge["strategy"]["matrix"]["pinset"]
    steps = " ".join(str(step.get("run", "")) for step in shard["steps"])
    assert "--shard" in steps
    uploads = [s for s in shard["steps"] if str(s.get("uses", "")).startswith("actions/upload")]
    assert uploads and uploads[0]["with"]["path"] == "reports/${{ env.RUN_ID }}/"
    assert merge["needs"] == "shard"
    assert any("mlx-harness merge" in str(step.get("run", "")) for step in merge["steps"])
