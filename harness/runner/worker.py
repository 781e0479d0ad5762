"""The worker process: loads one model once and runs that model's cases on request.

Protocol: one JSON object per line on stdin (requests) and on the original stdout (replies);
anything a library prints goes to stderr, which the supervisor keeps as the worker's log. The
messages are the typed ones of :mod:`harness.runner.messages`: a :class:`LoadRequest` is
answered with :class:`LoadedReply`, a :class:`RunRequest` with :class:`ResultReply` (before it,
a :class:`~harness.runner.repeat_progress.RepeatProgress` after each of the case's runs), either
with :class:`ErrorReply` when it fails (a request that is not a message too) or
:class:`CrashReply` when the worker cannot go on; :class:`ExitRequest` ends the worker.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import IO, Any

from harness.core.exception_line import exception_line
from harness.core.types import ServerRef
from harness.runner.messages import (
    CrashReply,
    ErrorReply,
    ExitRequest,
    LoadedReply,
    LoadRequest,
    MessageError,
    Reply,
    ResultReply,
    RunRequest,
    request_from_wire,
)

TIMING_ARTIFACT = "timing"  # seconds inside backend calls: the model's load, the scenario


class Worker:
    def __init__(self, out: IO[str]) -> None:
        self.out = out
        self.backend: Any = None
        self.backend_name = "unknown"
        self.path: Path | None = None
        self.server: ServerRef | None = None
        self.log_dir = Path(".")
        self.model: Any = None
        self.load_info: Any = None
        self.load_s = 0.0  # seconds of the last load not yet reported in a result

    def reply(self, message: Reply) -> None:
        self.out.write(json.dumps(message.to_wire()) + "\n")
        self.out.flush()

    def load(self, request: LoadRequest) -> None:
        from harness.backends import BACKENDS
        from harness.backends.base import check_delivered, declared_capabilities
        from harness.backends.mlx_runtime import blas_in_use

        self.backend_name = request.backend
        self.backend = BACKENDS.get(self.backend_name)
        declared = declared_capabilities(self.backend, self.backend_name)
        self.path = Path(request.path) if request.path else None
        self.server = request.server
        self.log_dir = Path(request.log_dir or ".")
        start = time.perf_counter()
        self.model, self.load_info = self._load()
        self.load_s = time.perf_counter() - start  # reported with the next case's result
        check_delivered(self.backend_name, declared, self.model)  # once: a backend bug errors
        self.reply(LoadedReply(self.load_info, blas_in_use(), os.getpid()))

    def _load(self) -> tuple[Any, Any]:
        from harness.backends.base import BackendError, ServerLoading

        if self.server is not None:
            if not isinstance(self.backend, ServerLoading):
                raise BackendError(f"backend {self.backend_name} cannot serve over HTTP")
            return self.backend.load_server(self.path, self.server, self.log_dir)
        if self.path is None:
            raise BackendError(f"backend {self.backend_name} needs a local model path")
        return self.backend.load(self.path)

    def _reload(self) -> Any:
        self.close_model()
        self.model, self.load_info = self._load()
        return self.model, self.load_info

    def close_model(self) -> None:
        """Stop what the model holds outside this process (a server), if anything."""
        from harness.backends.base import Served

        model, self.model = self.model, None
        if isinstance(model, Served):
            model.close()

    def run(self, request: RunRequest) -> None:
        from harness.backends import mlx_runtime as device
        from harness.runner.repeat_loop import ARTIFACT as REPEATS_ARTIFACT
        from harness.runner.repeat_loop import headline_names, run_repeats
        from harness.runner.repeat_progress import RepeatCounter, RepeatProgress, batch_tokens
        from harness.runner.sample_guard import SampleGuard, cpu_reading
        from harness.scenarios import SCENARIOS
        from harness.scenarios.base import ScenarioContext

        scenario = SCENARIOS.get(request.scenario)
        params = scenario.params_model.model_validate(request.params)
        auto_repeats = request.auto
        applies = scenario.repeats_apply
        repeats = request.repeats
        case_end = case_end_for(request.timeout_s)

        guard = SampleGuard(
            partial(cpu_reading, os.getppid()),  # the harness's process: ours, and all under it
            judge_busy=self.server is None or not self.server.url,
        )
        guard.settle(request.cooldown_s, request.wait_for_quiet_s)
        guard.begin()

        def emit(progress: RepeatProgress) -> None:
            guard.progress(progress.repeat, progress.warmup)
            self.reply(progress)

        counter = RepeatCounter(
            emit,
            auto_repeats.max_repeats if auto_repeats is not None else repeats,
            auto=auto_repeats is not None,
        )

        def batch(warmup: int, repeats: int) -> Any:
            guard.batch_begin(warmup)
            ctx = ScenarioContext(
                model=self.model,
                load_info=self.load_info,
                repeats=repeats,
                warmup=warmup,
                reload=self._reload,
                backend=self.backend_name,
                run_done=counter.run_done,
                case_end=case_end,
            )
            return scenario.run(ctx, params)

        rss_view = device.reset_peaks()
        start = time.perf_counter()
        output, stop = run_repeats(
            batch,
            repeats,
            request.warmup,
            auto_repeats,
            headline_names(scenario),
            applies=applies,
            counter=counter if applies else None,  # its samples come from elsewhere
        )
        elapsed = time.perf_counter() - start
        if not applies:  # no progress from the repeat loop: the case as one span
            guard.progress(1, False)
        machine_state = guard.finish(batch_tokens(output.artifacts))
        memory = device.snapshot(rss_view)
        timing = {"load_s": self.load_s, "scenario_s": elapsed}  # time inside backend calls
        self.load_s = 0.0
        self.reply(
            ResultReply(
                metrics=tuple(output.metrics),
                artifacts={
                    **output.artifacts,
                    REPEATS_ARTIFACT: stop.to_json(),
                    TIMING_ARTIFACT: timing,
                    **machine_state,
                },
                memory=memory,
                elapsed_s=elapsed,
                version=scenario.version,
                failures=tuple(output.failures),
                skip_reason=output.skip_reason,
                timed_out=output.timed_out,
                checks=tuple(output.checks),
            )
        )

    def serve(self, requests: IO[str]) -> int:
        try:
            return self._serve(requests)
        finally:
            self.close_model()

    def _serve(self, requests: IO[str]) -> int:
        for line in requests:
            if not line.strip():
                continue
            try:
                request = request_from_wire(json.loads(line))
            except (ValueError, RecursionError) as exc:  # json's errors are ValueErrors
                detail = str(exc) if isinstance(exc, MessageError) else exception_line(exc)
                self.reply(ErrorReply(f"not a request: {detail}"))
                continue
            if isinstance(request, ExitRequest):
                return 0
            try:
                if isinstance(request, LoadRequest):
                    self.load(request)
                else:
                    self.run(request)
            except MemoryError as exc:
                self.reply(CrashReply(f"out of memory: {exception_line(exc)}"))
                return 3
            except Exception as exc:  # every failure is a result the supervisor records
                import traceback

                traceback.print_exc(file=sys.stderr)
                from harness.backends.base import ServerArgsRefused, ServerUnreachable

                # the suite's server did not answer: the case fails, it is not our error
                if isinstance(exc, ServerUnreachable):
                    self.reply(ErrorReply(str(exc), failed=True))
                elif isinstance(exc, ServerArgsRefused):  # this release lacks an option
                    self.reply(ErrorReply(str(exc), skipped=True))
                else:
                    self.reply(ErrorReply(exception_line(exc)))
        return 0


PARENT_POLL_S = 0.5
REPORT_MARGIN_S = (2.0, 15.0)  # time kept back from a case's limit to reply: at least, at most


def case_end_for(timeout_s: object) -> float | None:
    """When a scenario must return (``time.monotonic()``), given the case's time limit in
    seconds as the supervisor counts it from sending the request: the limit less a margin (5%,
    kept within ``REPORT_MARGIN_S``) for the reply to reach it. None without a limit."""
    if not isinstance(timeout_s, int | float) or timeout_s <= 0:
        return None
    low, high = REPORT_MARGIN_S
    margin = min(max(0.05 * timeout_s, low), high, 0.5 * timeout_s)
    return time.monotonic() + timeout_s - margin


def die_with_parent() -> None:
    """Never outlive the supervisor, even when it is SIGKILLed and cannot clean up.

    Linux: the kernel sends SIGKILL when the parent dies (``PR_SET_PDEATHSIG``). Everywhere: a
    daemon thread notices being re-parented and exits (covers macOS, and the race before prctl).
    """
    parent = os.getppid()
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        try:
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass

    def watch() -> None:
        while True:
            if os.getppid() != parent:
                os._exit(70)
            time.sleep(PARENT_POLL_S)

    if parent == 1 or os.getppid() != parent:
        os._exit(70)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main() -> int:
    die_with_parent()
    protocol = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # library prints must never corrupt the protocol stream
    sys.stdout = sys.stderr
    return Worker(protocol).serve(sys.stdin)


if __name__ == "__main__":
    sys.exit(main())
