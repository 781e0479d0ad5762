"""The cost of following 1 to 3 years of nights: ``history`` and ``site`` over generated nightly
records (100 cases a night, 3 metrics x 5 samples each, a planted 20% step at night 200 with an
mlx bump, 5 flagged nights), in seconds and peak resident memory (MB), each command in a fresh
process. Nights are written once under ROOT and reused.

    PYTHONPATH=. .venv/bin/python tests/benchmarks/history_scale.py /tmp/nights 365 1095
    # the same commands against another checkout (e.g. the code before), history only:
    PYTHONPATH=. .venv/bin/python tests/benchmarks/history_scale.py /tmp/nights 365 \\
        --harness /tmp/before --history-only
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "results"))

from history_nights import DECODE, Plan, write_night, write_nights

CASES = 100


def _plan(nights: int) -> Plan:
    return Plan(
        nights=nights,
        cases=CASES,
        models=("m0", "m1", "m2", "m3", "m4"),
        step_at=200,
        flagged=range(300, 305),
    )


def _measure(argv: list[str]) -> None:
    """In the child: run the command, print seconds and peak RSS (MB)."""
    from harness.cli import main

    start = time.perf_counter()
    with open(os.devnull, "w") as sink:
        stdout, sys.stdout = sys.stdout, sink
        try:
            code = main(argv)
        finally:
            sys.stdout = stdout
    took = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux
    print(f"{took:.2f} {peak:.0f} {code}")


def _child(harness: str, argv: list[str]) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": harness}
    done = subprocess.run(
        [sys.executable, __file__, "--measure", *argv],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    took, peak, _ = done.stdout.split()
    return float(took), float(peak)


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--measure":
        _measure(sys.argv[2:])
        return
    parser = argparse.ArgumentParser()
    parser.add_argument("root", type=Path)
    parser.add_argument("nights", type=int, nargs="+")
    parser.add_argument("--harness", default=str(Path(__file__).resolve().parents[2]))
    parser.add_argument("--history-only", action="store_true")
    args = parser.parse_args()
    for n in args.nights:
        root = args.root / f"{n}-nights"
        if not (root / "done").exists():
            write_nights(root / "reports", _plan(n))
            (root / "done").touch()
        reports = str(root / "reports")
        took, peak = _child(args.harness, ["history", reports, "--metric", DECODE])
        print(f"{n:>5} nights x {CASES} cases: history --metric  {took:7.2f} s {peak:7.0f} MB")
        if args.history_only:
            continue
        out = root / "site"
        for name in ("history-index.sqlite",):
            (out / name).unlink(missing_ok=True)
        took, peak = _child(args.harness, ["site", reports, "--out", str(out)])
        print(f"{n:>5} nights x {CASES} cases: site (first build) {took:7.2f} s {peak:7.0f} MB")
        extra = write_night(root / "reports", _plan(n + 1), n)
        took, peak = _child(args.harness, ["site", reports, "--out", str(out)])
        print(f"{n:>5} nights x {CASES} cases: site (+1 night)    {took:7.2f} s {peak:7.0f} MB")
        for file in extra.iterdir():  # the generated nights stay as they were
            file.unlink()
        extra.rmdir()


if __name__ == "__main__":
    main()
