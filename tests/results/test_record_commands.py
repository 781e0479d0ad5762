"""Commands that read run records (compare, export, report, history) survive any bytes: one
line naming the file, never a traceback; a cut last line is read with a warning line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from record_corpus import HOSTILE, real_record

from harness.cli import main

READERS = {
    "compare as baseline": lambda bad, good, out: ["compare", str(bad), str(good)],
    "compare as current": lambda bad, good, out: ["compare", str(good), str(bad)],
    "export": lambda bad, good, out: ["export", str(bad), "--csv", str(out / "x.csv")],
    "report": lambda bad, good, out: ["report", str(bad)],
    "history": lambda bad, good, out: ["history", str(bad), "--metric", "load.load_s"],
}
FOR_CLI = ("binary", "utf-16", "number for mapping", "unknown status", "newer schema", "empty")
HOSTILE_FOR_CLI = [h for h in HOSTILE if h[0] in {*FOR_CLI, "nested 100000 deep", "huge float"}]


@pytest.fixture(scope="module")
def good_record(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_record(tmp_path_factory.mktemp("good"))


@pytest.mark.parametrize("command", list(READERS))
@pytest.mark.parametrize(
    ("content", "fragment"), [h[1:] for h in HOSTILE_FOR_CLI], ids=[h[0] for h in HOSTILE_FOR_CLI]
)
def test_reading_commands_give_one_line_on_hostile_records(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    good_record: Path,
    command: str,
    content: bytes,
    fragment: str,
) -> None:
    bad = tmp_path / "bad" / "run.jsonl"
    bad.parent.mkdir()
    bad.write_bytes(content)
    code = main(READERS[command](bad, good_record, tmp_path))
    err = capsys.readouterr().err
    assert code == 2, err
    lines = err.splitlines()
    assert "internal error" not in err and "Traceback" not in err
    if command == "history":  # the record is skipped with a warning; then nothing is left
        assert lines[0].startswith(f"mlx-harness: warning: {bad}") and fragment in lines[0]
        assert lines[1].startswith("mlx-harness: error: no run under")
    else:
        assert (
            len(lines) == 1
            and lines[0].startswith(f"mlx-harness: error: {bad}")
            and fragment in lines[0]
        )


def test_a_cut_last_line_is_read_with_a_warning_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], good_record: Path
) -> None:
    cut = tmp_path / "cut" / "run.jsonl"
    cut.parent.mkdir()
    data = good_record.read_bytes()
    cut.write_bytes(data[: data.rindex(b"\n", 0, len(data) - 1) + 20])  # into the last line
    for argv in (
        ["export", str(cut), "--csv", str(tmp_path / "x.csv")],
        ["compare", str(good_record), str(cut)],
        ["history", str(tmp_path), "--metric", "throughput.decode_tps"],
        ["report", str(cut.parent)],
    ):
        assert main(argv) in (0, 1), argv  # compare may find changes; never an error
        err = capsys.readouterr().err
        assert f"mlx-harness: warning: {cut}:" in err and "last line cut off" in err, argv
    # report.md wraps its notes (a block quote): the words may fall on two lines, as the path's
    # length decides; read it as the reader does, one paragraph
    lines = (cut.parent / "report.md").read_text(encoding="utf-8").splitlines()
    shown = " ".join(line.removeprefix(">").strip() for line in lines)
    assert "last line cut off" in shown


@pytest.mark.parametrize(
    ("name", "argv"),
    [
        ("binary", lambda bad, good, out: ["compare", str(good), str(bad)]),
        ("utf-16", lambda bad, good, out: ["report", str(bad)]),
        ("unknown status", lambda bad, good, out: ["export", str(bad), "--csv", str(out / "x")]),
        ("nested 100000 deep", lambda bad, good, out: ["history", str(bad), "--metric", "m"]),
    ],
)
def test_no_traceback_from_the_real_command(
    tmp_path: Path, good_record: Path, name: str, argv
) -> None:  # type: ignore[no-untyped-def]
    content = next(h[1] for h in HOSTILE if h[0] == name)
    bad = tmp_path / "run.jsonl"
    bad.write_bytes(content)
    done = subprocess.run(
        [sys.executable, "-m", "harness.cli", *argv(bad, good_record, tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert "mlx-harness: error: " in done.stderr and str(bad) in done.stderr
