"""Publishing reports: written whole, ``latest`` swapped atomically, bad folders one line."""

from __future__ import annotations

import dataclasses
import errno
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from report_fixtures import realistic_run

from harness.core.types import RunRecord
from harness.report.publish import LATEST, ReportDirError, publish_reports
from harness.report.render import HTML_FILE, MD_FILE
from harness.results.store import RUN_FILE, RunFileError, RunWriter, load_run


def _run(run_id: str) -> RunRecord:
    return dataclasses.replace(realistic_run(), run_id=run_id)


def _record(root: Path, run_id: str) -> tuple[RunRecord, Path]:
    """A run with its record on disk in ``root/run_id``, as a run leaves it."""
    run = _run(run_id)
    run_dir = root / run_id
    writer = RunWriter(run_dir / RUN_FILE)
    writer.start(
        run_id=run_id,
        started_at=run.started_at,
        machine=run.machine,
        packages=run.packages,
        git_sha=run.git_sha,
        suites=run.suites,
    )
    for result in run.results:
        writer.case(result)
    writer.finish("2026-01-01T00:01:00+00:00")
    writer.close()
    return load_run(run_dir), run_dir


def _hidden(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("."))


def _whole_html(text: str) -> bool:
    return text.startswith("<!DOCTYPE html>") and text.endswith("</html>\n")


def test_publish_points_latest_at_the_run(tmp_path: Path) -> None:
    run, run_dir = _record(tmp_path, "first")
    html = publish_reports(run, run_dir, tmp_path / LATEST)
    assert html == tmp_path / LATEST / HTML_FILE
    assert os.readlink(tmp_path / LATEST) == "first"  # relative: the folder can move
    for name in (RUN_FILE, MD_FILE, HTML_FILE):
        assert (tmp_path / LATEST / name).read_bytes() == (run_dir / name).read_bytes()
    assert "first" in html.read_text(encoding="utf-8")

    second, second_dir = _record(tmp_path, "second")
    publish_reports(second, second_dir, tmp_path / LATEST)
    assert os.readlink(tmp_path / LATEST) == "second"
    assert load_run(tmp_path / LATEST).run_id == "second"
    assert (run_dir / HTML_FILE).is_file()  # the older run keeps its own reports
    assert _hidden(tmp_path) == []


def test_without_latest_the_run_folder_report_is_returned(tmp_path: Path) -> None:
    run, run_dir = _record(tmp_path, "r")
    assert publish_reports(run, run_dir, None) == run_dir / HTML_FILE
    assert not (tmp_path / LATEST).exists()


def test_a_real_latest_folder_from_an_older_version_is_replaced(tmp_path: Path) -> None:
    old = tmp_path / LATEST
    old.mkdir()
    for name in (RUN_FILE, MD_FILE, HTML_FILE):
        (old / name).write_text("from an older mlx-harness")
    run, run_dir = _record(tmp_path, "r")
    publish_reports(run, run_dir, old)
    assert old.is_symlink() and os.readlink(old) == "r"
    assert _hidden(tmp_path) == []


def test_without_symlinks_latest_is_a_whole_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refused(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(os, "symlink", refused)  # as on a FAT-formatted or some network drives
    for run_id in ("first", "second"):
        run, run_dir = _record(tmp_path, run_id)
        publish_reports(run, run_dir, tmp_path / LATEST)
        latest = tmp_path / LATEST
        assert latest.is_dir() and not latest.is_symlink()
        assert sorted(p.name for p in latest.iterdir()) == sorted([RUN_FILE, MD_FILE, HTML_FILE])
        assert load_run(latest).run_id == run_id
    assert _hidden(tmp_path) == []


def test_folders_that_cannot_be_written_are_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = _run("r")
    a_file = tmp_path / "reports"
    a_file.write_text("not a folder")
    fix = "pass --report-dir to a writable folder"
    with pytest.raises(ReportDirError) as info:
        publish_reports(run, a_file / "r", a_file / LATEST)
    assert str(info.value) == f"{a_file}: is a file, not a folder; {fix}"

    folder = tmp_path / "ok"
    real_open = os.open

    def denied(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith(".tmp"):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", denied)
    with pytest.raises(ReportDirError) as info:
        publish_reports(run, folder / "r", folder / LATEST)
    assert str(info.value) == (f"{folder / 'r' / MD_FILE}: not writable (Permission denied); {fix}")
    assert "\n" not in str(info.value)


def test_a_full_disk_keeps_the_previous_report_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run, run_dir = _record(tmp_path, "r")
    publish_reports(run, run_dir, tmp_path / LATEST)
    before = (run_dir / HTML_FILE).read_bytes()
    real_write = os.write

    def half_then_full(fd: int, data: Any) -> int:
        if len(data) > 1000:
            real_write(fd, bytes(data)[: len(data) // 2])
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(ReportDirError, match="out of space"):
        publish_reports(_run("r"), run_dir, tmp_path / LATEST)
    monkeypatch.undo()
    assert (tmp_path / LATEST / HTML_FILE).read_bytes() == before
    assert _hidden(tmp_path) == [] and _hidden(run_dir) == []


RENDER_INTO_A_FULL_FILE_SYSTEM = """
import resource, signal, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from report_fixtures import realistic_run
from harness.report.publish import ReportDirError, publish_reports

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))  # no file may grow past 4 KiB
try:
    publish_reports(realistic_run(), Path(sys.argv[1]), None)
except ReportDirError as exc:
    print(exc)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE short writes are Linux's")
def test_a_real_write_failure_leaves_the_old_report(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    run_dir.mkdir()
    (run_dir / MD_FILE).write_text("old report")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            RENDER_INTO_A_FULL_FILE_SYSTEM,
            str(run_dir),
            str(Path(__file__).parent),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    assert done.stdout.strip() == (
        f"{run_dir / MD_FILE}: out of space (File too large); "
        "free space or pass --report-dir on another disk"
    )
    assert (run_dir / MD_FILE).read_text() == "old report"
    assert sorted(p.name for p in run_dir.iterdir()) == [MD_FILE]  # no temporary file left


PUBLISHER = """
import sys, time
from pathlib import Path
sys.path.insert(0, sys.argv[4])
from test_publish import _record
from harness.report.publish import publish_reports

root, tag, seconds = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3])
end, count = time.monotonic() + seconds, 0
while (time.monotonic() < end or count < 5) and count < 400:  # 5 each at least, however slow
    run, run_dir = _record(root, f"{tag}-{count:03d}")
    publish_reports(run, run_dir, root / "latest")
    count += 1
print(count)
"""


def test_concurrent_publishers_never_show_a_half_report(tmp_path: Path) -> None:
    """Two processes publish into one reports folder in a loop while a thread reads
    ``latest``: it is never missing once made, its report is always whole, its record reads."""
    here = str(Path(__file__).parent)
    publishers = [
        subprocess.Popen(
            [sys.executable, "-c", PUBLISHER, str(tmp_path), tag, "3", here],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for tag in ("a", "b")
    ]
    latest = tmp_path / LATEST
    checked: list[int] = [0]
    problems: list[str] = []

    def read() -> None:
        seen = False
        while any(p.poll() is None for p in publishers):
            if not os.path.lexists(latest):
                if seen:
                    problems.append("latest vanished")
                continue
            seen = True
            try:
                html = (latest / HTML_FILE).read_text(encoding="utf-8")
                if not _whole_html(html):
                    problems.append(f"cut report.html ({len(html)} characters)")
                load_run(latest)
            except (OSError, RunFileError) as exc:
                problems.append(f"{type(exc).__name__}: {exc}")
            checked[0] += 1

    reader = threading.Thread(target=read)
    reader.start()
    outputs = [p.communicate(timeout=300) for p in publishers]
    reader.join(timeout=30)
    for publisher, (_, err) in zip(publishers, outputs, strict=True):
        assert publisher.returncode == 0 and "Traceback" not in err, err
    published = [int(out) for out, _ in outputs]
    print(f"published {published} runs; {checked[0]} reads of latest checked")
    assert problems == []
    assert checked[0] >= 20
    runs = sorted(p.name for p in tmp_path.iterdir() if p.name != LATEST)
    assert len(runs) == sum(published)  # no run lost its folder, nothing stray left behind
    assert os.readlink(latest) in runs
    for name in runs:
        assert _whole_html((tmp_path / name / HTML_FILE).read_text(encoding="utf-8"))


def test_the_checker_sees_a_cut_report(tmp_path: Path) -> None:
    run, run_dir = _record(tmp_path, "r")
    html = publish_reports(run, run_dir, None).read_text(encoding="utf-8")
    assert _whole_html(html) and not _whole_html(html[: len(html) // 2])
