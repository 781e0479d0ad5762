"""``mlx-harness export RUN --format parquet|jsonl | --csv PATH | --benchmark-json PATH |
--llama-bench-json PATH | --inference-perf PATH``: a run's raw samples for other tools."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.cli.errors import CliError

if TYPE_CHECKING:
    from harness.results.inference_perf import InferencePerfReport


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser("export", help="export a run's raw samples")
    p.add_argument("run", help="run directory or run.jsonl")
    p.add_argument(
        "--format",
        action="append",
        choices=("parquet", "jsonl"),
        help="write every sample with all its case's params as columns to samples.parquet "
        "(needs the parquet extra: pyarrow) or samples.jsonl; repeat for both",
    )
    p.add_argument(
        "--out-dir", default=None, help="where --format writes its files (default: the run's)"
    )
    p.add_argument("--csv", help="write every raw sample as CSV")
    p.add_argument("--benchmark-json", help="write timing metrics as pytest-benchmark JSON")
    p.add_argument(
        "--llama-bench-json",
        help="write throughput cases as llama-bench's JSON (pp/tg tests), for "
        "llama.cpp's scripts/compare-llama-bench.py",
    )
    p.add_argument(
        "--inference-perf",
        metavar="DIR",
        help="write serving cases as inference-perf's reports into DIR: "
        "stage_N_lifecycle_metrics.json per load point and summary_lifecycle_metrics.json "
        "(DIR/case-N/ each when the run has several serving cases)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.results.store import export_csv, load_run

    if (
        not (args.csv or args.benchmark_json or args.format or args.llama_bench_json)
        and not args.inference_perf
    ):
        raise CliError(
            "export needs --format parquet|jsonl, --csv PATH, --benchmark-json PATH, "
            "--llama-bench-json PATH and/or --inference-perf PATH"
        )
    path = Path(args.run)
    record = load_run(path)
    if args.format:
        from harness.results.sample_export import ExportFormat, ExportUnavailable, export_samples

        out_dir = Path(args.out_dir) if args.out_dir else (path if path.is_dir() else path.parent)
        out_dir.mkdir(parents=True, exist_ok=True)
        for fmt in dict.fromkeys(ExportFormat(f) for f in args.format):
            try:
                print(f"wrote {export_samples(record, fmt, out_dir / fmt.file_name)}")
            except ExportUnavailable as exc:
                raise CliError(str(exc)) from None
    if args.csv:
        print(f"wrote {export_csv(record, Path(args.csv))}")
    if args.benchmark_json:
        from harness.results.benchmark_json import pytest_benchmark_json

        Path(args.benchmark_json).write_text(json.dumps(pytest_benchmark_json(record), indent=2))
        print(f"wrote {args.benchmark_json}")
    if args.llama_bench_json:
        from harness.results.llama_bench import llama_bench_json

        entries = llama_bench_json(record)
        if not entries:
            raise CliError(
                f"{args.run}: no throughput case with prefill or decode samples; "
                "llama-bench's JSON holds those (run the throughput scenario)"
            )
        Path(args.llama_bench_json).write_text(json.dumps(entries, indent=2))
        print(f"wrote {args.llama_bench_json} ({len(entries)} llama-bench tests)")
    if args.inference_perf:
        from harness.results.inference_perf import inference_perf_report

        report = inference_perf_report(record)
        if not report.benchmarks:
            raise CliError(
                f"{args.run}: no serving case with load points; inference-perf's reports "
                "hold those (run the serving scenario)"
            )
        _write_inference_perf(report, Path(args.inference_perf))
    return 0


def _write_inference_perf(report: InferencePerfReport, root: Path) -> None:
    from harness.report.escape import plain
    from harness.results.report_dir import shown

    several = len(report.benchmarks) > 1
    for index, bench in enumerate(report.benchmarks, 1):
        folder = root / f"case-{index}" if several else root
        folder.mkdir(parents=True, exist_ok=True)
        for name, contents in bench.files.items():
            (folder / name).write_text(json.dumps(contents, indent=2))
        stages = len(bench.files) - 1
        print(f"wrote {shown(folder)}: {plain(bench.case_id, 160)} ({stages} stages)")
