"""Run one world size as its own ``mlx.launch`` process group and read back each rank's result.

``mlx.launch`` starts the ranks (``--hosts 127.0.0.1 -n N`` for a local ring, or the suite's
hostfile for a real cluster: ring over Ethernet, JACCL over Thunderbolt RDMA, the same API); each
rank runs ``python -m <rank module> JOB_DIR`` and writes ``rank-<r>.json`` there (on a cluster
the job folder must be one every host sees at the same path). A rank with no result (it died,
or hung past the limit) is named in one line.

No process outlives the run, as the server processes (:mod:`harness.backends.server_process`):
``mlx.launch`` gets a process group of its own, killed whole (SIGTERM, then SIGKILL) on the
time limit, on Ctrl-C and on any error here; the kernel kills it when the worker dies
(``PR_SET_PDEATHSIG``, set by this module run as ``python -m harness.backends.distributed_launch
-- ARGV``, which then execs ``ARGV``), and every rank exits when its launcher or the worker is
gone.

No ``preexec_fn``: a worker that has run MLX holds OpenBLAS threads, and a plain ``fork`` runs
OpenBLAS's at-fork handler, which waited forever on them (seen: the worker hung in
``blas_thread_shutdown_``); without one, Python starts the child by ``vfork``, which runs no
at-fork handler.

``mlx.launch`` forwards its stdin to the ranks, polling it every 0.1 s with ``select``: given
``/dev/null`` (always readable, at its end) that loop never waits; a pipe held open and never
written makes it wait. Its per-rank threads still poll the ranks' stdin (always writable)
without waiting: about 13% of a core for 2 ranks on this 2-core box.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.backends.distributed_types import RankJob, RankResult, read_rank
from harness.backends.server_process import _die_with_parent, free_port, log_tail

RANK_MODULE = "harness.backends.distributed_rank"
GUARD_MODULE = "harness.backends.distributed_launch"  # sets the parent-death signal, then execs
STOP_GRACE_S = 5.0
LOG_LINES = 2
ANSI = re.compile(r"\x1b\[[0-9;]*m")
NODE_EXIT = re.compile(r"Node with rank (\d+) (exited with code -?\d+|was killed)")


def launcher() -> str:
    """The ``mlx.launch`` beside this Python (the one the harness runs in)."""
    found = Path(sys.executable).with_name("mlx.launch")
    return str(found) if found.exists() else "mlx.launch"


@dataclass(frozen=True)
class LaunchPlan:
    """One world size: ``world_size`` ranks, by ``backend`` (ring, jaccl, ...), on the hosts of
    ``hostfile`` (None: all on this machine, ring over loopback)."""

    world_size: int
    backend: str = "ring"
    hostfile: Path | None = None
    rank_module: str = RANK_MODULE

    def argv(self, job_dir: Path) -> tuple[str, ...]:
        where: tuple[str, ...]
        if self.hostfile is not None:
            where = ("--hostfile", str(self.hostfile))
        else:
            where = ("--hosts", "127.0.0.1", "-n", str(self.world_size))
        port = ("--starting-port", str(free_port())) if self.backend == "ring" else ()
        return (
            sys.executable,
            "-m",
            GUARD_MODULE,
            "--",
            launcher(),
            "--backend",
            self.backend,
            *where,
            *port,
            "--env",
            f"MLX_HARNESS_DIST_BACKEND={self.backend}",
            "--",
            sys.executable,
            "-m",
            self.rank_module,
            str(job_dir),
        )


@dataclass(frozen=True)
class LaunchOutcome:
    """Each rank's result (None: it wrote none), how the launcher ended, and the one line that
    names the ranks with no result (empty when every rank answered)."""

    results: tuple[RankResult | None, ...]
    exit_code: int | None
    timed_out: bool
    wall_s: float
    problem: str

    @property
    def complete(self) -> bool:
        return all(r is not None for r in self.results)


def _kill_group(proc: subprocess.Popen[bytes], grace_s: float = STOP_GRACE_S) -> None:
    """SIGTERM to the launcher's whole group, then SIGKILL after ``grace_s``; then every
    process it had started (a rank in a session of its own included) is killed and waited
    for, so none is left when this returns (a rank's parent-death signal alone is a race)."""
    import psutil

    try:
        children = psutil.Process(proc.pid).children(recursive=True)
    except psutil.Error:
        children = []
    _signal_group(proc, grace_s)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(children, timeout=grace_s)


def _signal_group(proc: subprocess.Popen[bytes], grace_s: float) -> None:
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        if wait_s is None:
            break
        try:
            proc.wait(timeout=wait_s)
            # the launcher is gone; its ranks may linger a moment: the group is killed anyway
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=grace_s)


def first_exit(log_text: str) -> tuple[int, str] | None:
    """The rank mlx.launch saw end first with an error, and how (``exited with code 7``,
    ``was killed``): the one that brought the group down, the others being stopped after it."""
    found = NODE_EXIT.search(ANSI.sub("", log_text))
    return (int(found.group(1)), found.group(2)) if found else None


def _said(log: Path) -> str:
    """The last line the ranks wrote besides mlx.launch's own warnings (an error's last line)."""
    try:
        lines = ANSI.sub("", log.read_text(errors="replace")).splitlines()
    except OSError:
        return ""
    kept = [ln.strip() for ln in lines[1:] if ln.strip() and not NODE_EXIT.search(ln)]
    return kept[-1][:300] if kept else ""


def _missing_line(
    missing: Sequence[int], timed_out: bool, timeout_s: float, code: int | None, log: Path
) -> str:
    names = ", ".join(str(r) for r in missing)
    who = f"rank {names}" if len(missing) == 1 else f"ranks {names}"
    with contextlib.suppress(OSError):
        culprit = None if timed_out else first_exit(log.read_text(errors="replace"))
        if culprit is not None:
            rank, how = culprit
            others = [r for r in missing if r != rank]
            stopped = (
                f"; then mlx.launch stopped rank {', '.join(map(str, others))}" if others else ""
            )
            said = _said(log)
            return f"rank {rank} died: it {how} before its result{stopped}" + (
                f"; log: {said}" if said else ""
            )
    if timed_out:
        how = f"hung: no result within {timeout_s:g} s (the group was killed)"
    elif code is not None and code < 0:
        how = f"died: mlx.launch killed by signal {-code}"
    else:
        how = f"died: no result (mlx.launch exited with code {code})"
    tail = ANSI.sub("", log_tail(log, LOG_LINES))
    return f"{who} {how}" + (f"; log: {tail}" if tail else "")


def launch(
    plan: LaunchPlan, job: RankJob, job_dir: Path, log_path: Path, timeout_s: float
) -> LaunchOutcome:
    """Run ``job`` on ``plan``'s ranks and wait (at most ``timeout_s``) for their results."""
    job_dir.mkdir(parents=True, exist_ok=True)
    (job_dir / "job.json").write_text(json.dumps(job.to_json()))
    log_path.parent.mkdir(parents=True, exist_ok=True)
    argv = plan.argv(job_dir)
    start = time.perf_counter()
    timed_out = False
    with log_path.open("ab") as log:
        log.write(f"$ {' '.join(argv)}\n".encode())
        log.flush()
        proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,  # held open, never written (see the module doc)
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # a group of its own: killed whole, ranks included
        )
        try:
            proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:  # the time limit, Ctrl-C, SIGTERM turned into an exception, any error
            _kill_group(proc)
            if proc.stdin is not None:
                proc.stdin.close()
    wall_s = time.perf_counter() - start
    results = tuple(read_rank(job_dir, r) for r in range(plan.world_size))
    missing = [r for r, found in enumerate(results) if found is None]
    problem = (
        _missing_line(missing, timed_out, timeout_s, proc.returncode, log_path) if missing else ""
    )
    return LaunchOutcome(results, proc.returncode, timed_out, wall_s, problem)


def main(argv: list[str] | None = None) -> int:
    """``python -m harness.backends.distributed_launch -- ARGV``: die with the parent (the
    worker), then become ``ARGV`` (the parent-death signal survives ``exec``)."""
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print("usage: python -m harness.backends.distributed_launch -- ARGV", file=sys.stderr)
        return 2
    _die_with_parent()
    os.execvp(args[0], args)
    return 1  # pragma: no cover - exec does not return


if __name__ == "__main__":
    raise SystemExit(main())
