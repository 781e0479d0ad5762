"""Progress while a run goes: live on a terminal, plain lines in a CI log, nothing with -q."""

from __future__ import annotations

import io
import threading
import time

import pytest
from rich.text import Text

from harness.report.progress import (
    ProgressMode,
    RepeatsSoFar,
    RunningCase,
    RunProgress,
    StillRunning,
    choose_mode,
    follow,
    make_console,
    repeats_text,
    still_running_line,
)
from harness.runner.repeat_progress import RepeatProgress

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


def _after(*updates: RepeatProgress) -> RepeatsSoFar | None:
    so_far = None
    for update in updates:
        so_far = follow(so_far, update)
    return so_far


@pytest.mark.parametrize(
    ("updates", "text"),
    [
        ((), ""),
        ((RepeatProgress(1, 2, warmup=True),), "warm-up 1/2"),
        ((RepeatProgress(1, 1, warmup=True, tokens=32),), "warm-up 1/1 · 32 tokens"),
        ((RepeatProgress(3, 5),), "repeat 3/5"),
        (tuple(RepeatProgress(i, 5, tokens=32) for i in (1, 2, 3)), "repeat 3/5 · 96 tokens"),
        ((RepeatProgress(1, 5, tokens=1),), "repeat 1/5 · 1 token"),
        ((RepeatProgress(1, 5), RepeatProgress(2, 5, tokens=7)), "repeat 2/5 · 7 tokens"),
        (
            (RepeatProgress(1, 1, warmup=True, tokens=8), RepeatProgress(1, 4, tokens=8)),
            "repeat 1/4 · 16 tokens",  # every token generated, warm-ups included
        ),
        ((RepeatProgress(7, 20, auto=True, tokens=70),), "repeat 7/≤20 · 70 tokens"),
    ],
    ids=[
        "nothing_yet",
        "warm_up",
        "warm_up_tokens",
        "repeat_no_tokens",
        "tokens_add_up",
        "one_token",
        "unknown_then_known",
        "warm_up_tokens_count",
        "auto_shows_its_maximum",
    ],
)
def test_repeats_text(updates: tuple[RepeatProgress, ...], text: str) -> None:
    assert repeats_text(_after(*updates)) == text


def test_still_running_line_with_repeats() -> None:
    case = RunningCase("s::m::throughput", "m", 4, 5, started=0.0)
    so_far = _after(*(RepeatProgress(i, 5, tokens=32) for i in (1, 2, 3)))
    assert still_running_line(case, 20.0, so_far) == (
        "still running: s::m::throughput (case 4/5, repeat 3/5 · 96 tokens) 20 s"
    )


def test_lines_mode_still_running_shows_the_repeats_the_worker_told() -> None:
    out = Tty()
    plan = [("s::m::throughput", "m")]
    wanted = "still running: s::m::throughput (case 1/1, repeat 2/5 · 16 tokens) "
    with RunProgress(plan, ProgressMode.LINES, make_console(out, {}), every_s=0.01) as progress:
        progress.start(*plan[0])
        progress.progressed(RepeatProgress(1, 5, tokens=8))
        progress.progressed(RepeatProgress(2, 5, tokens=8))
        deadline = time.monotonic() + 5
        while wanted not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)
        progress.done("     passed  s::m::throughput")
    assert wanted in out.getvalue()


def test_live_mode_shows_the_running_cases_repeats_and_clears_them() -> None:
    console = make_console(Tty(), {})
    plan = [("s::m1::throughput", HOSTILE), ("s::m1::load", HOSTILE)]

    def frame(progress: RunProgress) -> str:
        assert progress._progress is not None
        shown = io.StringIO()
        snapshot = make_console(Tty(), {})
        snapshot.file, snapshot.width = shown, 200
        snapshot.print(progress._progress.get_renderable())
        return shown.getvalue()

    with RunProgress(plan, ProgressMode.LIVE, console) as progress:
        progress.start(*plan[0])
        for i in (1, 2, 3):
            progress.progressed(RepeatProgress(i, 5, tokens=32))
        during = frame(progress)
        progress.done("     passed  s::m1::throughput", HOSTILE)
        progress.start(*plan[1])
        next_case = frame(progress)
        progress.done("     passed  s::m1::load", HOSTILE)
    assert "repeat 3/5 · 96 tokens" in during
    assert "repeat" not in next_case  # a new case starts with no repeats told
