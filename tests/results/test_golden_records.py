"""Records written by earlier versions of the harness (tests/results/data/golden, one folder per
version) through every reader, in process through the CLI: loaded with the same cases and
statuses, rendered, exported, compared with today's and followed by history."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.core.types import Status
from harness.results.store import load_run

GOLDEN = Path(__file__).parent / "data" / "golden"
VERSIONS = sorted(p.name for p in GOLDEN.iterdir() if (p / "run.jsonl").is_file())
NEWEST = VERSIONS[-1]
STATUSES = {
    "fake-fast::load": Status.PASSED,
    "fake-fast::throughput[prompt_tokens=16]": Status.FAILED,
    "fake-fast::throughput[prompt_tokens=32]": Status.FAILED,
    "fake-crash::load": Status.PASSED,
    "fake-crash::throughput[prompt_tokens=16]": Status.ERRORED,
    "fake-crash::throughput[prompt_tokens=32]": Status.ERRORED,
}


def test_the_oldest_and_newest_formats_are_kept() -> None:
    assert len(VERSIONS) >= 3 and VERSIONS[0].endswith("fee57dd")


def _copy(version: str, tmp_path: Path) -> Path:
    target = tmp_path / version
    shutil.copytree(GOLDEN / version, target)
    return target


@pytest.mark.parametrize("version", VERSIONS)
def test_loaded_with_every_case_and_status(version: str) -> None:
    run = load_run(GOLDEN / version / "run.jsonl")
    got = {r.case_id.split("::", 1)[1]: r.status for r in run.results}
    assert got == STATUSES
    fast = next(
        r for r in run.results if r.case_id.endswith("fake-fast::throughput[prompt_tokens=16]")
    )
    decode = next(m for m in fast.metrics if m.name == "throughput.decode_tps")
    assert len(decode.samples) == 3 and all(s > 0 for s in decode.samples)


@pytest.mark.parametrize("version", VERSIONS)
def test_reported_and_exported(
    version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = _copy(version, tmp_path)
    assert main(["report", str(folder)]) == 1  # failed and errored cases
    markdown = (folder / "report.md").read_text()
    html = (folder / "report.html").read_text()
    for case in STATUSES:
        name = case.split("::")[0]
        assert name in markdown and name in html
    assert "fake backend: failure on purpose" in markdown
    assert main(["export", str(folder), "--format", "jsonl"]) == 0
    samples = [json.loads(line) for line in (folder / "samples.jsonl").read_text().splitlines()]
    assert samples and {s["case_id"].split("::", 1)[1] for s in samples} >= {
        c for c, s in STATUSES.items() if s is not Status.ERRORED
    }
    assert "Traceback" not in capsys.readouterr().err


@pytest.mark.parametrize("version", VERSIONS[:-1])
def test_compared_with_the_newest(
    version: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old, new = _copy(version, tmp_path), _copy(NEWEST, tmp_path)
    status = main(["compare", str(old), str(new)])
    out, err = capsys.readouterr()
    assert status in (0, 1), err
    assert "fake-fast" in out and "Traceback" not in out + err


def test_followed_by_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for version in VERSIONS:
        _copy(version, tmp_path)
    """Every version wrote run id "golden", each in its own folder (as a nightly job with a fixed
    --run-id does): they are three runs, not one found three times."""
    assert main(["history", str(tmp_path), "--metric", "throughput.decode_tps"]) == 0
    out, err = capsys.readouterr()
    assert "fake-fast" in out and "Traceback" not in out + err
    assert out.count(f"over {len(VERSIONS)} runs") == 2  # both throughput cases


def test_history_without_a_metric_lists_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for version in VERSIONS:
        _copy(version, tmp_path)
    assert main(["history", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith(f" metrics in {len(VERSIONS)} runs; follow one with --metric NAME")
    decode = next(line.split() for line in lines if "throughput.decode_tps" in line)
    assert decode == ["throughput.decode_tps", "tok/s", str(len(VERSIONS)), "runs", "2", "cases"]
