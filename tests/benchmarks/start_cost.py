"""What the harness costs before and after a case: CPU seconds of the command's processes
(itself and its worker, as the OS counts them) for a run of two fake-model cases with and
without its report, the report alone and ``--help``, and of one worker process
(``python -m harness.runner.worker``, as the supervisor starts it) that only starts and exits,
or loads the fake model and runs the same two cases; the median of ``--rounds`` alternating
rounds. CPU time, not wall time: a busy machine slows both alike. Compile the checkouts'
bytecode first (``python -m compileall -q harness``) when PYTHONDONTWRITEBYTECODE is set, or
each process compiles the sources again.

    python tests/benchmarks/start_cost.py [--rounds 5] [--checkout PATH]

``--checkout`` runs another checkout's harness (a git worktree of an older commit) in the same
rounds, interleaved, for a before/after on one machine at one time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = """schema_version: 1
name: start-cost
models:
  - {name: m, path: models/m, backend: fake}
scenarios:
  - {id: load, scenario: load}
  - {id: tp, scenario: throughput, params: {prompt_tokens: 16, gen_tokens: 8}, repeats: 2}
"""


WORKER_CASES = [
    {"op": "run", "scenario": "load", "params": {}, "repeats": 1, "warmup": 0},
    {
        "op": "run",
        "scenario": "throughput",
        "params": {"prompt_tokens": 16, "gen_tokens": 8},
        "repeats": 2,
        "warmup": 0,
    },
]

Command = tuple[list[str], str | None]  # argv, and what it reads on stdin


def _cpu_of(command: Command, cwd: Path, checkout: Path) -> float:
    """CPU seconds (user + system) of ``command`` and every process it waited for."""
    argv, stdin = command
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(
        argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, check=False
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr[-400:]}")
    if stdin is not None:  # a worker: every answer must be a result
        ops = [json.loads(line)["op"] for line in done.stdout.splitlines()]
        if done.returncode != 0 or {"error", "crash"} & set(ops):
            raise SystemExit(f"{checkout}: worker answered {ops}, exit {done.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _worker_input(requests: list[dict[str, object]]) -> str:
    return "".join(json.dumps(r) + "\n" for r in [*requests, {"op": "exit"}])


def _commands(work: Path) -> dict[str, Command]:
    cli = [sys.executable, "-m", "harness.cli"]
    suite, reports = str(work / "s.suite.yaml"), str(work / "reports")
    worker = [sys.executable, "-m", "harness.runner.worker"]
    load = {"op": "load", "backend": "fake", "path": str(work / "models" / "m")}
    return {
        "run, 2 cases + report": ([*cli, "run", suite, "--report-dir", reports], None),
        "run, 2 cases, no report": (
            [*cli, "run", suite, "--report-dir", reports, "--no-report"],
            None,
        ),
        "report of the run": (
            [*cli, "report", str(work / "reports" / "latest" / "run.jsonl")],
            None,
        ),
        "--help": ([*cli, "--help"], None),
        "worker, start and exit": (worker, _worker_input([])),
        "worker, load + 2 cases": (worker, _worker_input([load, *WORKER_CASES])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkout", type=Path, help="another checkout, measured alongside")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[2]
    checkouts = {"this": here, **({"other": args.checkout.resolve()} if args.checkout else {})}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; "
                "from harness.backends.fake import write_fake_model; "
                "write_fake_model(Path(sys.argv[1]), per_token_s=0.0005)",
                str(work / "models" / "m"),
            ],
            check=True,
            env={**os.environ, "PYTHONPATH": str(here)},
        )
        (work / "s.suite.yaml").write_text(SUITE)
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for label, checkout in checkouts.items():
                for name, command in _commands(work).items():
                    seconds = _cpu_of(command, work, checkout)
                    samples.setdefault((name, label), []).append(seconds)
    print(f"CPU seconds per command, median of {args.rounds} rounds (user + system, children)")
    for name in _commands(Path(".")):
        row = "  ".join(
            f"{label}: {statistics.median(samples[(name, label)]):.2f} s" for label in checkouts
        )
        print(f"  {name:<26} {row}")


if __name__ == "__main__":
    main()
