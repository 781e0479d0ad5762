"""The cost of comparing two runs at the size of a nightly suite, end to end as ``compare --out``
does it: generated records of N cases (throughput-like, 2 metrics x 5 samples each, the current
run 0-20% slower at random) written as run.jsonl files and read back by the real loader
(``load_run``), compared (``compare_runs``), then what ``compare --out`` makes of it: the
terminal lines, compare.md, compare.html and changes.csv (their sizes too), all with the cyclic
collector paused as ``compare`` pauses it (:mod:`harness.core.gc_pause`). Prints seconds in all
and milliseconds a case for load, compare, render and the three together, for each N given.

    .venv/bin/python tests/benchmarks/compare_scale.py 1000 3000 10000
    .venv/bin/python tests/benchmarks/compare_scale.py --ab 10000   # and the bootstrap as it was
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path
from unittest import mock

from harness.core.gc_pause import collector_paused
from harness.core.types import CaseResult, Machine, Metric, ModelIdentity, RunRecord, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.change_list import changes_csv
from harness.report.comparison import section
from harness.report.comparison_text import comparison_lines
from harness.results import compare, stats
from harness.results.compare import compare_runs
from harness.results.store import load_run, write_record

MACHINE = Machine("Linux", "6", "x86_64", "cpu", 2, 24 * 2**30, "3.11")


def _run(run_id: str, cases: int, rng: random.Random, slower: bool) -> RunRecord:
    results = []
    for i in range(cases):
        factor = 1 - rng.uniform(0, 0.2) if slower else 1.0

        def samples(center: float, factor: float = factor) -> tuple[float, ...]:
            return tuple(center * factor * rng.lognormvariate(0, 0.05) for _ in range(5))

        results.append(
            CaseResult(
                f"s::m{i % 50}::throughput[pp{i}]",
                "s",
                f"m{i % 50}",
                "throughput",
                Status.PASSED,
                params={"prompt_tokens": i},
                point={"prompt_tokens": i},
                metrics=(
                    Metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, samples(200.0)),
                    Metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, samples(14.0)),
                ),
            )
        )
    models = {f"m{j}": ModelIdentity(f"m{j}", f"/m{j}", "mlx_lm") for j in range(50)}
    return RunRecord(
        1, run_id, "2026-11-26", MACHINE, {}, None, models=models, results=tuple(results)
    )


def _per_case(label: str, took: tuple[float, float], n: int) -> str:
    """``render    4.10 s,   0.41 ms a case (cpu 3.20 s)``: wall clock, then this process's
    CPU time (on a shared machine the wall clock includes the others' turns)."""
    wall, cpu = took
    return f"{label} {wall:7.2f} s, {wall / n * 1000:6.2f} ms a case (cpu {cpu:5.2f} s)"


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _clock()
    return wall - start[0], cpu - start[1]


def main(sizes: list[int], ab: bool = False) -> None:
    rng = random.Random(0)
    for n in sizes:
        with collector_paused():
            _measure(n, rng, ab)


def _measure(n: int, rng: random.Random, ab: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for run_id, slower in (("base", False), ("cur", True)):
            write_record(_run(run_id, n, rng, slower), Path(tmp) / run_id)
        start = _clock()
        base, cur = load_run(Path(tmp) / "base"), load_run(Path(tmp) / "cur")
        loaded = _since(start)
    print(f"{n:>6} cases: {_per_case('load   ', loaded, n)} (two records)", flush=True)
    start = _clock()
    comparison = compare_runs(base, cur)
    compared = _since(start)
    counts = ", ".join(f"{k} {v.value}" for v, k in comparison.counts().most_common())
    print(f"{'':>13}{_per_case('compare', compared, n)} ({counts})", flush=True)
    if ab:  # the bootstrap as it was: each metric's drawn on its own, by a fresh generator
        with (
            mock.patch.object(compare, "_intervals", lambda *_: {}),
            mock.patch.object(stats, "_drawn_pair", stats._drawn_pair.__wrapped__),
        ):
            start = _clock()
            fresh = compare_runs(base, cur)
            took = _since(start)
        same = "the same" if fresh == comparison else "DIFFERENT"
        print(f"{'':>13}{_per_case('drawn afresh', took, n)} ({same} verdicts and intervals)")
    start = _clock()
    lines = comparison_lines(comparison, 10, "every one in DIR/changes.csv")
    sections = [section(comparison, "changes.csv (beside this file)")]
    markdown = render_markdown(cur, sections, whole_in="compare.html")
    html = render_html(cur, sections)
    table = changes_csv(comparison)
    rendered = _since(start)
    print(
        f"{'':>13}{_per_case('render ', rendered, n)}: terminal {len(lines)} lines, "
        f"compare.md {len(markdown) / 1024:.0f} KiB, compare.html {len(html) / 1024:.0f} "
        f"KiB, changes.csv {len(table) / 1024:.0f} KiB",
        flush=True,
    )
    total = (
        loaded[0] + compared[0] + rendered[0],
        loaded[1] + compared[1] + rendered[1],
    )
    print(f"{'':>13}{_per_case('total  ', total, n)}", flush=True)


if __name__ == "__main__":
    args = sys.argv[1:]
    main([int(a) for a in args if a != "--ab"] or [1000], ab="--ab" in args)
