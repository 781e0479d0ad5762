"""Run records: the writer (one whole line per event, never a torn one of ours, no reused run
id), and the reader, which survives any bytes with a one-line ``RunFileError``."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import pytest
from record_corpus import (
    CASE,
    END,
    HOSTILE,
    START,
    events,
    jsonl,
    line,
    random_blobs,
    real_record,
    type_mutants,
)

from harness.core.types import CaseResult, Metric, ModelIdentity, RunRecord, Status, Unit
from harness.results.store import (
    SCHEMA_VERSION,
    ReportDirError,
    RunFileError,
    RunIdTaken,
    RunReadWarning,
    RunWriter,
    check_report_root,
    export_csv,
    load_run,
    metrics_frame,
)
from harness.runner.machine import machine


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
    assert load_run(str(tmp_path / "run.jsonl")) == run  # a str path reads the same record


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
    with pytest.warns(RunReadWarning, match=r"run.jsonl:5: last line cut off \(35 bytes"):
        run = load_run(path)
    assert run.finished_at is None and len(run.results) == 2
    assert len(run.read_warnings) == 1 and "run.jsonl:5: last line cut off" in run.read_warnings[0]


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
    assert events[0]["schema_version"] == SCHEMA_VERSION


# -- the writer ------------------------------------------------------------------------------


def _start(writer: RunWriter, run_id: str = "r1") -> None:
    writer.start(
        run_id=run_id,
        started_at="2026-01-01T00:00:00+00:00",
        machine=machine("x"),
        packages={"mlx": "0.32.4"},
        git_sha="abc",
        suites=[],
    )


def _case(case_id: str, status: Status = Status.PASSED, reason: str | None = None) -> CaseResult:
    return CaseResult(case_id, "s", "m", "load", status, reason=reason)


def test_a_new_run_refuses_an_existing_record(tmp_path: Path) -> None:
    path = tmp_path / "reports" / "same" / "run.jsonl"
    _write(path)
    before = path.read_bytes()
    with pytest.raises(RunIdTaken) as info:
        RunWriter(path)
    assert str(info.value) == (
        f"run id 'same' already exists in {tmp_path / 'reports'}; pass --resume same to "
        "continue it or choose another --run-id"
    )
    assert isinstance(info.value, ReportDirError) and path.read_bytes() == before


def test_resume_appends_and_the_last_result_of_a_case_wins(tmp_path: Path) -> None:
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path)
    _start(writer)
    for case_id in ("a", "b", "c"):
        writer.case(_case(case_id, Status.PASSED if case_id == "a" else Status.INTERRUPTED))
    writer.interrupted("2026-01-01T00:00:30+00:00", "interrupted by SIGINT")
    writer.close()
    stopped = load_run(path)
    assert stopped.interrupted == "interrupted by SIGINT" and stopped.finished_at is None

    writer = RunWriter(path, resume=True)
    writer.resumed("2026-01-02T00:00:00+00:00", {"mlx": "0.32.4"}, "abc")
    writer.case(_case("c", Status.FAILED, "boom"))
    writer.case(_case("b"))
    writer.finish("2026-01-02T00:01:00+00:00")
    writer.close()
    run = load_run(path)
    assert [(r.case_id, r.status) for r in run.results] == [
        ("a", Status.PASSED),
        ("b", Status.PASSED),
        ("c", Status.FAILED),
    ]
    assert run.interrupted is None and run.finished_at == "2026-01-02T00:01:00+00:00"
    assert run.read_warnings == ()


def test_resume_with_other_packages_is_a_read_warning(tmp_path: Path) -> None:
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path)
    _start(writer)
    writer.close()
    writer = RunWriter(path, resume=True)
    writer.resumed("2026-01-02T00:00:00+00:00", {"mlx": "0.33.0"}, "def")
    writer.close()
    with pytest.warns(RunReadWarning):
        run = load_run(path)
    assert run.finished_at is None and run.interrupted is None
    assert "run.jsonl:2: resumed with other packages (mlx 0.32.4 -> 0.33.0)" in run.read_warnings[0]


def test_resume_needs_a_record_and_cuts_a_torn_tail(tmp_path: Path) -> None:
    with pytest.raises(ReportDirError, match="no run 'nope' to resume in "):
        RunWriter(tmp_path / "nope" / "run.jsonl", resume=True)
    path = tmp_path / "r1" / "run.jsonl"
    _write(path, finish=False)
    with path.open("ab") as fh:
        fh.write(b'{"event": "case", "result": {"ca')  # the run was killed mid-write
    writer = RunWriter(path, resume=True)
    writer.finish("2026-01-02T00:00:00+00:00")
    writer.close()
    run = load_run(path)  # no warning: the torn tail was cut before appending
    assert run.read_warnings == () and run.finished_at == "2026-01-02T00:00:00+00:00"
    assert len(run.results) == 2


def test_text_that_is_not_unicode_is_written_readably(tmp_path: Path) -> None:
    """A lone surrogate (model bytes decoded with surrogateescape) becomes ?, not a record
    that strict JSON readers refuse."""
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path)
    _start(writer)
    writer.case(_case("a", Status.FAILED, reason="bad byte \udcff here"))
    writer.close()
    assert load_run(path).results[0].reason == "bad byte ? here"


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (
            errno.ENOSPC,
            "out of space (No space left on device); "
            "free space or pass --report-dir on another disk",
        ),
        (errno.EIO, "cannot write (Input/output error); pass --report-dir to a writable folder"),
        (errno.EROFS, "on a read-only file system; pass --report-dir to a writable folder"),
    ],
)
@pytest.mark.parametrize("where", ["write", "short write", "fsync"])
def test_a_failed_write_leaves_no_torn_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failure: int, message: str, where: str
) -> None:
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path)
    _start(writer)
    writer.case(_case("a"))
    before = path.read_bytes()
    real_write = os.write
    calls = {"n": 0}

    def failing_write(fd: int, data: Any) -> int:
        calls["n"] += 1
        if where == "short write" and calls["n"] == 1:
            return real_write(fd, bytes(data)[: len(data) // 2])  # half a line lands
        if where != "fsync":
            raise OSError(failure, os.strerror(failure))
        return real_write(fd, data)

    def failing_fsync(fd: int) -> None:
        raise OSError(failure, os.strerror(failure))

    monkeypatch.setattr(os, "write", failing_write)
    if where == "fsync":
        monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(ReportDirError) as info:
        writer.case(_case("b", reason="x" * 1000))
    monkeypatch.undo()
    assert str(info.value) == f"{path}: {message}"
    assert path.read_bytes() == before  # cut back to the last whole line
    writer.case(_case("c"))  # the record goes on once the disk has room again
    writer.close()
    assert [r.case_id for r in load_run(path).results] == ["a", "c"]


@pytest.mark.parametrize(("sync_each", "syncs"), [(True, 3), (False, 1)])
def test_a_copied_record_syncs_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sync_each: bool, syncs: int
) -> None:
    """A live run syncs every line; a record written whole (merge, import) once, at close."""
    synced: list[int] = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real_fsync(fd))[1])
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path, sync_each=sync_each)
    _start(writer)
    writer.case(_case("a"))
    writer.case(_case("b"))
    writer.close()
    assert len(synced) == syncs
    assert [r.case_id for r in load_run(path).results] == ["a", "b"]


def test_a_failed_sync_at_close_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "r1" / "run.jsonl"
    writer = RunWriter(path, sync_each=False)
    _start(writer)

    def failing_fsync(fd: int) -> None:
        raise OSError(errno.EIO, os.strerror(errno.EIO))

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(ReportDirError) as info:
        writer.close()
    assert str(info.value).startswith(f"{path}: cannot write (Input/output error)")
    writer.close()  # closed once: a second close is nothing


FILL_UNTIL_FULL = """
import resource, signal, sys
from pathlib import Path
from harness.runner.machine import machine
from harness.results.store import ReportDirError, RunWriter
from harness.core.types import CaseResult, Status

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (6000, 6000))  # the kernel refuses bytes past 6000
writer = RunWriter(Path(sys.argv[1]))
writer.start(run_id="full", started_at="t", machine=machine("x"), packages={}, git_sha=None,
             suites=[])
for i in range(1000):
    try:
        writer.case(CaseResult(f"case-{i}", "s", "m", "load", Status.PASSED, reason="y" * 333))
    except ReportDirError as exc:
        print(i, exc)
        break
"""


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_FSIZE short writes are Linux's")
def test_a_real_full_file_leaves_only_whole_lines(tmp_path: Path) -> None:
    """The kernel writes part of the line that crosses the limit, then refuses: the record is
    cut back to whole lines and the error is one line."""
    path = tmp_path / "full" / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-c", FILL_UNTIL_FULL, str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    written, message = done.stdout.strip().split(" ", 1)
    assert message == (
        f"{path}: out of space (File too large); free space or pass --report-dir on another disk"
    )
    data = path.read_bytes()
    assert data.endswith(b"\n") and len(data) <= 6000
    run = load_run(path)
    assert len(run.results) == int(written) and run.read_warnings == ()


def test_check_report_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    check_report_root(tmp_path / "new" / "reports")  # created
    assert (tmp_path / "new" / "reports").is_dir()
    assert list((tmp_path / "new" / "reports").iterdir()) == []  # the probe file is gone
    a_file = tmp_path / "file"
    a_file.write_text("x")
    with pytest.raises(ReportDirError) as info:
        check_report_root(a_file)
    assert str(info.value) == (
        f"{a_file}: is a file, not a folder; pass --report-dir to a writable folder"
    )
    with pytest.raises(ReportDirError) as info:
        check_report_root(a_file / "reports")  # a file where a parent folder should be
    assert str(info.value).startswith(f"{a_file}: is a file, not a folder")

    def denied(*args: Any, **kwargs: Any) -> int:
        raise PermissionError(errno.EACCES, "Permission denied")

    monkeypatch.setattr(os, "open", denied)  # as root, chmod would not stop us: simulate
    with pytest.raises(ReportDirError) as info:
        check_report_root(tmp_path)
    assert str(info.value) == (
        f"{tmp_path}: not writable (Permission denied); pass --report-dir to a writable folder"
    )


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_check_report_root_on_a_read_only_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir(mode=0o555)
    with pytest.raises(ReportDirError, match="not writable"):
        check_report_root(folder)


# -- the reader: hostile records ------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "fragment"), [c[1:] for c in HOSTILE], ids=[c[0] for c in HOSTILE]
)
def test_hostile_records_are_one_line_errors(tmp_path: Path, content: bytes, fragment: str) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    with pytest.raises(RunFileError) as info:
        load_run(path)
    message = str(info.value)
    assert fragment in message and message.startswith(str(path))
    assert "\n" not in message and len(message) < 400


@pytest.mark.parametrize(
    ("name", "content", "cases", "warned"),
    [
        ("a UTF-8 BOM", b"\xef\xbb\xbf" + line(START) + line(CASE), 1, False),
        ("CRLF line ends", (line(START) + line(CASE)).replace(b"\n", b"\r\n"), 1, False),
        ("blank lines", line(START) + b"\n\n" + line(CASE) + b"  \n", 1, False),
        ("an unknown event kind", line(START) + line({"event": "later", "x": [1]}), 0, False),
        ("unknown fields", line({**START, "new": 1}) + line(CASE), 1, False),
        ("a last line without newline", line(START) + line(CASE)[:-1], 1, False),
        ("a cut last line", line(START) + line(CASE) + line(CASE)[:25], 1, True),
        ("a last line cut mid-character", line(START) + '{"x": "é'.encode()[:-1], 0, True),
        ("a second run_start", line(START) + line(START) + line(CASE), 1, False),
    ],
)
def test_records_that_still_read(
    tmp_path: Path, name: str, content: bytes, cases: int, warned: bool
) -> None:
    path = tmp_path / "run.jsonl"
    path.write_bytes(content)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = load_run(path)
    assert len(run.results) == cases
    assert bool(run.read_warnings) is warned
    assert [str(w.message) for w in caught if w.category is RunReadWarning] == list(
        run.read_warnings
    )


def test_paths_that_are_not_records(tmp_path: Path) -> None:
    with pytest.raises(RunFileError, match=r"run\.jsonl: no such file; pass a run folder"):
        load_run(tmp_path)  # a folder without a record
    fifo = tmp_path / "fifo.jsonl"
    os.mkfifo(fifo)  # reading it would block forever
    with pytest.raises(RunFileError, match=r"fifo\.jsonl: not a regular file"):
        load_run(fifo)


def test_interrupted_is_the_reason_until_a_later_run_end(tmp_path: Path) -> None:
    stop = {"event": "run_interrupted", "at": "t", "reason": "interrupted by SIGTERM"}
    path = tmp_path / "run.jsonl"
    path.write_bytes(jsonl([START, CASE, stop]))
    assert load_run(path).interrupted == "interrupted by SIGTERM"
    path.write_bytes(jsonl([START, CASE, stop, END]))
    run = load_run(path)
    assert run.interrupted is None and run.finished_at == END["finished_at"]


def test_a_case_recorded_twice_keeps_the_last_in_first_order(tmp_path: Path) -> None:
    def case(case_id: str, status: str) -> dict[str, Any]:
        return {"event": "case", "result": {**CASE["result"], "case_id": case_id, "status": status}}

    path = tmp_path / "run.jsonl"
    path.write_bytes(
        jsonl([START, case("a", "interrupted"), case("b", "passed"), case("a", "failed")])
    )
    run = load_run(path)
    assert [(r.case_id, r.status.value) for r in run.results] == [("a", "failed"), ("b", "passed")]


# -- the reader: generated corpora -----------------------------------------------------------


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return real_record(tmp_path_factory.mktemp("real"))


def _outcome(path: Path, data: bytes) -> RunRecord | None:
    """``load_run`` of ``data``: the run, or None on RunFileError; anything else escapes."""
    path.write_bytes(data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RunReadWarning)
        try:
            return load_run(path)
        except RunFileError as exc:
            assert "\n" not in str(exc)
            return None


# `make test` cuts a record near every line boundary and at every QUICK_STRIDE-th byte; the
# nightly tests cut it at every byte (and type-mutate every value, not every third)
QUICK_STRIDE = 5
EVERY = [pytest.param("quick"), pytest.param("every", marks=pytest.mark.nightly)]


def _cut_points(data: bytes, starts: list[int], part: str) -> list[int]:
    """Where to cut ``data``: every byte, or (``quick``) the bytes around each line boundary
    (where the verdict changes) and every QUICK_STRIDE-th byte between them."""
    if part == "every":
        return list(range(len(data) + 1))
    near = {s + d for s in starts for d in (-2, -1, 0, 1, 2)}
    return sorted(
        {o for o in near if 0 <= o <= len(data)}
        | set(range(0, len(data) + 1, QUICK_STRIDE))
        | {len(data)}
    )


@pytest.mark.parametrize("part", EVERY)
@pytest.mark.parametrize("ascii_only", [True, False], ids=["as written", "utf-8 text"])
def test_every_truncation_of_a_real_record(
    tmp_path: Path, real: Path, ascii_only: bool, part: str
) -> None:
    """Cut at every byte: whole lines read as they are; a cut later line is skipped with one
    warning; a cut first line is a RunFileError; nothing else escapes."""
    items = events(real)
    data = jsonl(items, ascii_only=ascii_only)
    assert ascii_only or not data.isascii()  # the record carries non-ASCII text
    starts = [0] + [i + 1 for i, byte in enumerate(data) if byte == ord("\n")]
    path = tmp_path / "run.jsonl"
    for offset in _cut_points(data, starts, part):
        whole = sum(1 for start in starts[1:] if start <= offset)  # lines with their newline
        rest = data[starts[whole] : offset]
        if rest and rest == data[starts[whole] : starts[whole + 1] - 1]:
            whole, rest = whole + 1, b""  # all of a line but its newline: still a whole event
        run = _outcome(path, data[:offset])
        if whole == 0:
            assert run is None, offset
            continue
        assert run is not None, offset
        assert len(run.read_warnings) == (1 if rest else 0), offset
        assert len(run.results) == sum(1 for e in items[:whole] if e["event"] == "case"), offset
    assert len(data) > 3000  # thousands of records per variant


def test_random_bytes_are_run_file_errors(tmp_path: Path) -> None:
    path = tmp_path / "run.jsonl"
    read = 0
    for number, blob in enumerate(random_blobs(400)):
        run = _outcome(path, blob)
        if run is not None:  # only a valid first line and a garbage tail, skipped as cut
            read += 1
            assert blob.startswith(line(START)) and b"\n" not in blob[len(line(START)) :]
            assert len(run.read_warnings) == 1 and run.results == (), number
    assert read < 200


@pytest.mark.parametrize("part", EVERY)
def test_every_type_mutation_of_a_real_record(tmp_path: Path, real: Path, part: str) -> None:
    """Each value of each event replaced by null, numbers, strings, containers, or removed:
    a RunFileError or a record; downstream readers take every record that reads (``quick``:
    every third mutant, each kind of value still met)."""
    from harness.report import render_html, render_markdown
    from harness.results.benchmark_json import pytest_benchmark_json
    from harness.results.compare import compare_runs
    from harness.results.history import series

    base = load_run(real)
    path = tmp_path / "run.jsonl"
    read = refused = 0
    step = 3 if part == "quick" else 1
    for number, (label, data) in enumerate(type_mutants(events(real))):
        if number % step:
            continue
        run = _outcome(path, data)
        if run is None:
            refused += 1
            continue
        read += 1
        json.dumps(pytest_benchmark_json(run))
        series([base, run], "throughput.decode_tps")
        if number % (60 * step) == 0:  # the slow readers on a sample
            compare_runs(base, run)
            assert "could not be built" not in render_markdown(run), label
            render_html(run)
    assert read > 500 // step and refused > 1000 // step, (read, refused)
