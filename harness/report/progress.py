"""Progress while a run goes: which model and case, how long it has run, what is left.

Three ways to show it (:class:`ProgressMode`), chosen by :func:`choose_mode`:

- ``live`` (a terminal): a rich display under the case lines: the whole run (cases done of all,
  elapsed, ETA from the cases so far) and the current model (its cases done of its own, the
  case running, how long it has run, its repeats done and tokens generated so far:
  ``repeat 3/5 · 96 tokens``). ``NO_COLOR`` turns the colours off;
- ``lines`` (a CI log, a pipe): no animation; a plain line per case, and a ``still running``
  line every ``every_s`` seconds of a long case, with its repeats when the worker told them;
- ``off`` (``-q``, ``--progress off``): the case lines only.

Every name shown (models, cases, reasons) is untrusted text: it goes to rich as
:class:`rich.text.Text` (never parsed as markup) after :func:`harness.report.escape.plain`.
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from types import TracebackType
from typing import IO, TYPE_CHECKING

from harness.report.escape import plain
from harness.runner.repeat_progress import RepeatProgress

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, Task, TaskID
    from rich.text import Text

STILL_RUNNING_EVERY_S = 20.0
LABEL_WIDTH = 72  # characters of "model · case" shown in the live display


class ProgressMode(str, Enum):
    LIVE = "live"
    LINES = "lines"
    OFF = "off"


def choose_mode(
    requested: str, stream: IO[str], env: Mapping[str, str] | None = None
) -> ProgressMode:
    """``auto`` is live on a terminal, lines elsewhere (a pipe, a file, ``CI``, ``TERM=dumb``)."""
    if requested != "auto":
        return ProgressMode(requested)
    env = os.environ if env is None else env
    isatty = getattr(stream, "isatty", None)
    terminal = bool(isatty and isatty())
    if not terminal or env.get("CI") or env.get("TERM") == "dumb":
        return ProgressMode.LINES
    return ProgressMode.LIVE


def _duration(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, secs = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@dataclass(frozen=True)
class RunningCase:
    """The case now running, and where it stands in the run."""

    case_id: str
    model: str
    index: int  # 1-based, over the run
    total: int
    started: float  # clock() when it began


@dataclass(frozen=True)
class RepeatsSoFar:
    """The running case's last run, and the tokens all its runs (warm-ups too) generated."""

    last: RepeatProgress
    tokens: int | None = None  # None: no run said

    def after(self, update: RepeatProgress) -> RepeatsSoFar:
        return RepeatsSoFar(update, _plus(self.tokens, update.tokens))

    @classmethod
    def first(cls, update: RepeatProgress) -> RepeatsSoFar:
        return cls(update, update.tokens)


def _plus(a: int | None, b: int | None) -> int | None:
    return b if a is None else a if b is None else a + b


def follow(so_far: RepeatsSoFar | None, update: RepeatProgress) -> RepeatsSoFar:
    return RepeatsSoFar.first(update) if so_far is None else so_far.after(update)


def repeats_text(so_far: RepeatsSoFar | None) -> str:
    """``repeat 3/5 · 96 tokens``, ``warm-up 1/1``, ``repeat 4/≤20`` (``repeats: auto``)."""
    if so_far is None:
        return ""
    last = so_far.last
    if last.warmup:
        text = f"warm-up {last.repeat}/{last.of}"
    else:
        text = f"repeat {last.repeat}/{'≤' if last.auto else ''}{last.of}"
    if so_far.tokens is not None:
        text += f" · {so_far.tokens} token{'' if so_far.tokens == 1 else 's'}"
    return text


def still_running_line(case: RunningCase, now: float, so_far: RepeatsSoFar | None = None) -> str:
    """``still running: CASE (case 3/12, repeat 2/5 · 64 tokens) 20 s``, terminal-safe."""
    repeats = repeats_text(so_far)
    where = f"case {case.index}/{case.total}" + (f", {repeats}" if repeats else "")
    return f"still running: {plain(case.case_id, 160)} ({where}) {_duration(now - case.started)}"


class StillRunning:
    """While a case runs, call ``write(still_running_line(...))`` every ``every_s`` seconds;
    :meth:`progressed` (the worker's progress) adds the repeats to the next lines."""

    def __init__(
        self,
        case: RunningCase,
        write: Callable[[str], None],
        every_s: float = STILL_RUNNING_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.case, self.write, self.every_s, self.clock = case, write, every_s, clock
        self.so_far: RepeatsSoFar | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="still-running", daemon=True)

    def progressed(self, update: RepeatProgress) -> None:
        self.so_far = follow(self.so_far, update)

    def _loop(self) -> None:
        while not self._stop.wait(self.every_s):
            self.write(still_running_line(self.case, self.clock(), self.so_far))

    def __enter__(self) -> StillRunning:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()


def _label(model: str, case_id: str) -> str:
    return plain(f"{model} · {case_id}", LABEL_WIDTH)


class RunProgress:
    """Progress of one run over ``plan`` (``(case_id, model)`` pairs, in run order).

    Use it as a context manager; call :meth:`start` before each case, :meth:`progressed` with
    each progress message of its worker, :meth:`done` with the case's line after it, and
    :meth:`note` for any other line (they print above the display).
    """

    def __init__(
        self,
        plan: Sequence[tuple[str, str]],
        mode: ProgressMode,
        console: Console,
        every_s: float = STILL_RUNNING_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.mode, self.console, self.every_s, self.clock = mode, console, every_s, clock
        self.total = len(plan)
        self.per_model = Counter(model for _, model in plan)
        self.done_per_model: Counter[str] = Counter()
        self.finished = 0
        self.started_at = clock()
        self._case: RunningCase | None = None
        self._so_far: RepeatsSoFar | None = None
        self._ticker: StillRunning | None = None
        self._progress: Progress | None = None
        self._run_task: TaskID | None = None
        self._model_task: TaskID | None = None
        self._model: str | None = None
        self._lock = threading.Lock()

    # -- context ---------------------------------------------------------------------------
    def __enter__(self) -> RunProgress:
        if self.mode is ProgressMode.LIVE:
            self._progress = _live_progress(self.console, self.clock)
            self._run_task = self._progress.add_task("run", total=self.total, label="all cases")
            self._progress.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop_ticker()
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    # -- events ----------------------------------------------------------------------------
    def start(self, case_id: str, model: str) -> None:
        """A case begins (its worker may load the model first)."""
        self._stop_ticker()
        index = min(self.finished + 1, self.total)
        self._case = RunningCase(case_id, model, index, self.total, self.clock())
        self._so_far = None
        if self._progress is not None:
            if model != self._model:
                if self._model_task is not None:
                    self._progress.remove_task(self._model_task)
                self._model_task = self._progress.add_task(
                    "model", total=self.per_model[model] or None, label=""
                )
                self._model = model
            assert self._model_task is not None
            self._progress.update(
                self._model_task,
                completed=self.done_per_model[model],
                label=_label(model, case_id),
                case_started=self._case.started,
                repeats="",
            )
        elif self.mode is ProgressMode.LINES:
            self._ticker = StillRunning(self._case, self.note, self.every_s, self.clock)
            self._ticker.__enter__()

    def progressed(self, update: RepeatProgress) -> None:
        """The running case's worker ended one of its runs."""
        self._so_far = follow(self._so_far, update)
        if self._progress is not None and self._model_task is not None:
            self._progress.update(self._model_task, repeats=repeats_text(self._so_far))
        elif self._ticker is not None:
            self._ticker.progressed(update)

    def done(self, line: str, model: str | None = None) -> None:
        """A case ended: print its (terminal-safe) line and count it."""
        self._stop_ticker()
        model = model if model is not None else (self._case.model if self._case else "")
        self.finished += 1
        self.done_per_model[model] += 1
        self._case = None
        self._so_far = None
        if self._progress is not None:
            assert self._run_task is not None
            self._progress.update(self._run_task, completed=self.finished)
            if self._model_task is not None:
                self._progress.update(
                    self._model_task,
                    completed=self.done_per_model[model],
                    case_started=None,
                    repeats="",
                )
        self.note(line)

    def note(self, line: str) -> None:
        """Print a line (already terminal-safe): above the live display, or as it is."""
        from rich.text import Text

        with self._lock:
            self.console.print(Text(line), soft_wrap=True)

    def _stop_ticker(self) -> None:
        if self._ticker is not None:
            self._ticker.__exit__(None, None, None)
            self._ticker = None


def _live_progress(console: Console, clock: Callable[[], float]) -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        SpinnerColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class LabelColumn(ProgressColumn):
        """The task's label as plain text: a name like ``[bold]x[/]`` stays as it is."""

        def render(self, task: Task) -> Text:
            return Text(str(task.fields.get("label", "")), overflow="ellipsis", no_wrap=True)

    class CaseElapsedColumn(ProgressColumn):
        """How long the current case has run (blank between cases)."""

        def render(self, task: Task) -> Text:
            started = task.fields.get("case_started")
            if started is None:
                return Text("")
            return Text(f"case {_duration(clock() - float(started))}", style="progress.elapsed")

    class RepeatsColumn(ProgressColumn):
        """``repeat 3/5 · 96 tokens`` of the current case (blank until its worker says)."""

        def render(self, task: Task) -> Text:
            return Text(str(task.fields.get("repeats", "")), style="progress.download")

    class EtaColumn(ProgressColumn):
        """``ETA 0:01:23``: rich's estimate from the cases finished so far."""

        remaining = TimeRemainingColumn()

        def render(self, task: Task) -> Text:
            return Text.assemble(("ETA ", "progress.remaining"), self.remaining.render(task))

    return Progress(
        SpinnerColumn(),
        BarColumn(bar_width=24),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        EtaColumn(),
        CaseElapsedColumn(),
        RepeatsColumn(),
        LabelColumn(),
        console=console,
        transient=True,
        refresh_per_second=4,
    )


def make_console(stream: IO[str], env: Mapping[str, str] | None = None) -> Console:
    """A rich console on ``stream`` that honours ``NO_COLOR`` and never reads markup."""
    from rich.console import Console

    env = os.environ if env is None else env
    return Console(
        file=stream,
        no_color=bool(env.get("NO_COLOR")),
        markup=False,
        emoji=False,
        highlight=False,
        soft_wrap=True,
    )
