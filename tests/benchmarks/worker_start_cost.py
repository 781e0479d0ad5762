"""What one worker process costs (``python -m harness.runner.worker``, as the supervisor starts
it): CPU seconds (user + system, as the OS counts them) of a worker that only starts and exits,
and of one that loads a fake model and runs a ``load`` and a small ``throughput`` case; the
median of ``--rounds`` alternating rounds. CPU time, not wall time: a busy machine slows both
alike. Compile the checkouts' bytecode first (``python -m compileall -q harness``) when
PYTHONDONTWRITEBYTECODE is set, or each worker compiles the sources again.

    python tests/benchmarks/worker_start_cost.py [--rounds 5] [--checkout PATH]

``--checkout`` runs another checkout's worker (a copy of an older commit's ``harness/``) in the
same rounds, interleaved, for a before/after on one machine at one time.
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

CASES = [
    {"op": "run", "scenario": "load", "params": {}, "repeats": 1, "warmup": 0},
    {
        "op": "run",
        "scenario": "throughput",
        "params": {"prompt_tokens": 16, "gen_tokens": 8},
        "repeats": 2,
        "warmup": 0,
    },
]


def _cpu_of(checkout: Path, requests: list[dict[str, object]]) -> float:
    """CPU seconds (user + system) of one worker of ``checkout`` answering ``requests``."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "HF_HUB_OFFLINE": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, "-m", "harness.runner.worker"],
        input="".join(json.dumps(r) + "\n" for r in [*requests, {"op": "exit"}]),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    ops = [json.loads(line)["op"] for line in done.stdout.splitlines()]
    if done.returncode != 0 or {"error", "crash"} & set(ops):
        raise SystemExit(f"{checkout}: worker answered {ops}, exit {done.returncode}")
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--checkout", type=Path, help="another checkout, measured alongside")
    args = parser.parse_args()
    here = Path(__file__).resolve().parents[2]
    checkouts = {"this": here, **({"other": args.checkout.resolve()} if args.checkout else {})}
    with tempfile.TemporaryDirectory() as tmp:
        model = Path(tmp) / "m"
        subprocess.run(
            [
                sys.executable,
                "-c",
                "import sys; from pathlib import Path; "
                "from harness.backends.fake import write_fake_model; "
                "write_fake_model(Path(sys.argv[1]), per_token_s=0.0005)",
                str(model),
            ],
            check=True,
            env={**os.environ, "PYTHONPATH": str(here)},
        )
        load = {"op": "load", "backend": "fake", "path": str(model)}
        runs: dict[str, list[dict[str, object]]] = {
            "start and exit": [],
            "load + 2 cases": [load, *CASES],
        }
        samples: dict[tuple[str, str], list[float]] = {}
        for _ in range(args.rounds):
            for label, checkout in checkouts.items():
                for name, requests in runs.items():
                    samples.setdefault((label, name), []).append(_cpu_of(checkout, requests))
    for (label, name), values in samples.items():
        print(
            f"{label:6} {name:15} median {statistics.median(values):.3f} CPU-s"
            f"  (min {min(values):.3f}, max {max(values):.3f}, n={len(values)})"
        )


if __name__ == "__main__":
    main()
