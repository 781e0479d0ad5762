"""``mlx-harness site``: the command builds the site, says what it read, and reads only new
records when run again; a path without records is one error line."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent / "results"))

from history_nights import Plan, write_night, write_nights

from harness.cli import main


def test_site_builds_then_reads_only_the_new_night(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = Plan(nights=6, cases=2, step_at=3)
    write_nights(tmp_path / "reports", plan)
    out = tmp_path / "site"
    assert main(["site", str(tmp_path / "reports"), "--out", str(out)]) == 0
    first = capsys.readouterr().out
    assert first == (
        f"site: {out / 'index.html'} (4 pages, 1 machine(s), 6 runs: 6 read, 0 from the index)\n"
    )
    write_night(tmp_path / "reports", Plan(nights=7, cases=2, step_at=3), 6)
    assert main(["site", str(tmp_path / "reports"), "--out", str(out)]) == 0
    assert "7 runs: 1 read, 6 from the index" in capsys.readouterr().out
    assert main(["site", str(tmp_path / "reports"), "--out", str(out), "--no-incremental"]) == 0
    assert "7 runs: 7 read, 0 from the index" in capsys.readouterr().out
    assert "<h2>Open regressions</h2>" in (out / "machine-1" / "index.html").read_text()


def test_site_without_records_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["site", str(tmp_path / "empty"), "--out", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"mlx-harness: error: no readable run under {tmp_path / 'empty'}; check the paths"
    ]


def test_site_skips_an_unreadable_record_with_a_warning(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write_nights(tmp_path / "reports", Plan(nights=2, cases=1))
    bad = tmp_path / "reports" / "bad" / "run.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(b"\xff\xfe not a record\n")
    assert main(["site", str(tmp_path / "reports"), "--out", str(tmp_path / "site")]) == 0
    captured = capsys.readouterr()
    assert f"mlx-harness: warning: {bad}:1: not UTF-8 text" in captured.err
    assert "2 runs: 2 read" in captured.out
