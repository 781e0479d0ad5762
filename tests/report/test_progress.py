"""Progress while a run goes: live on a terminal, plain lines in a CI log, nothing with -q."""

from __future__ import annotations

import io
import threading

import pytest
from rich.text import Text

from harness.report.progress import (
    ProgressMode,
    RunningCase,
    RunProgress,
    StillRunning,
    choose_mode,
    make_console,
    still_running_line,
)

HOSTILE = "[bold red]x[/]"


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("requested", "stream", "env", "mode"),
    [
        ("auto", Tty(), {}, ProgressMode.LIVE),
        ("auto", io.StringIO(), {}, ProgressMode.LINES),  # a pipe or a file
        ("auto", Tty(), {"CI": "true"}, ProgressMode.LINES),
        ("auto", Tty(), {"TERM": "dumb"}, ProgressMode.LINES),
        ("off", Tty(), {}, ProgressMode.OFF),
        ("live", io.StringIO(), {}, ProgressMode.LIVE),
    ],
)
def test_choose_mode(requested: str, stream: io.StringIO, env: dict[str, str], mode: str) -> None:
    assert choose_mode(requested, stream, env) is mode


@pytest.mark.parametrize(
    ("elapsed", "shown"),
    [(0.4, "0 s"), (20.2, "20 s"), (80, "1 min 20 s"), (3725, "1 h 02 min")],
)
def test_still_running_line(elapsed: float, shown: str) -> None:
    case = RunningCase("s::m::throughput", "m", 3, 12, started=100.0)
    assert still_running_line(case, 100.0 + elapsed) == (
        f"still running: s::m::throughput (case 3/12) {shown}"
    )


def test_still_running_line_is_terminal_safe() -> None:
    case = RunningCase("s::\x1b[31mevil\nid", "m", 1, 1, started=0.0)
    line = still_running_line(case, 0.0)
    assert "\x1b" not in line and "\n" not in line


def test_still_running_ticks_until_the_case_ends() -> None:
    lines: list[str] = []
    ticked = threading.Event()

    def write(line: str) -> None:
        lines.append(line)
        if len(lines) >= 2:
            ticked.set()

    with StillRunning(RunningCase("c", "m", 1, 2, 0.0), write, every_s=0.01, clock=lambda: 40.0):
        assert ticked.wait(5)
    count = len(lines)
    assert lines[0] == "still running: c (case 1/2) 40 s"
    threading.Event().wait(0.05)
    assert len(lines) == count  # stopped with the case


def _run(mode: ProgressMode, env: dict[str, str], every_s: float = 60.0) -> str:
    out = Tty()
    console = make_console(out, env)
    plan = [("s::m1::load", HOSTILE), ("s::m1::throughput", HOSTILE), ("s::m2::load", "m2")]
    with RunProgress(plan, mode, console, every_s=every_s) as progress:
        for case_id, model in plan:
            progress.start(case_id, model)
            progress.done(f"     passed  {case_id}", model)
    return out.getvalue()


def test_lines_mode_prints_one_plain_line_per_case() -> None:
    text = _run(ProgressMode.LINES, {})
    assert text.splitlines() == [
        "     passed  s::m1::load",
        "     passed  s::m1::throughput",
        "     passed  s::m2::load",
    ]


def test_live_mode_shows_models_and_cases_and_keeps_the_case_lines() -> None:
    out = Tty()
    console = make_console(out, {})
    console.width = 160
    plan = [("s::m1::load", HOSTILE), ("s::m1::throughput", HOSTILE)]
    with RunProgress(plan, ProgressMode.LIVE, console) as progress:
        progress.start(*plan[0])
        assert progress._progress is not None
        frame = io.StringIO()
        snapshot = make_console(Tty(), {})
        snapshot.file, snapshot.width = frame, 160
        snapshot.print(progress._progress.get_renderable())
        progress.done("     passed  s::m1::load", HOSTILE)
    shown = frame.getvalue()
    assert shown.count("0/2") == 2 and "all cases" in shown  # the run and the model
    assert f"{HOSTILE} · s::m1::load" in shown  # the name as it is: not markup
    assert "passed  s::m1::load" in out.getvalue()


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {}])
def test_live_mode_honours_no_color(env: dict[str, str]) -> None:
    out = Tty()
    console = make_console(out, env)
    console.print(Text("x", style="red"))
    assert ("\x1b[31m" in out.getvalue()) is not env


def test_markup_in_a_case_line_is_printed_as_it_is() -> None:
    out = Tty()
    with RunProgress([], ProgressMode.OFF, make_console(out, {})) as progress:
        progress.note(f"     passed  s::{HOSTILE}::load")
    assert out.getvalue() == f"     passed  s::{HOSTILE}::load\n"
