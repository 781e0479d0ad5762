"""``mlx-harness import gguf FILE OUT [--dtype ...]``: convert model files to MLX;
``mlx-harness import llama-bench FILE... [--report-dir DIR] [--machine RUN]``: llama-bench's JSON
as run records (a module name with a trailing underscore: ``import`` is a keyword)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "import", help="convert model files to MLX"
    )
    imports = parser.add_subparsers(dest="import_command", required=True)
    p = imports.add_parser("gguf", help="a llama-family or gemma3 GGUF -> an mlx-lm directory")
    p.add_argument("file", help="the .gguf file to convert")
    p.add_argument("out", help="directory to write the mlx-lm model into")
    p.add_argument(
        "--dtype",
        default="keep",
        choices=["keep", "float32", "float16", "bfloat16"],
        help="keep: MLX-native quant types stay quantized, K-quants dequantized",
    )
    p.set_defaults(func=run)
    lb = imports.add_parser(
        "llama-bench",
        help="llama-bench -o json/jsonl output -> run records (report, compare, history, site)",
    )
    lb.add_argument("files", nargs="+", metavar="FILE", help="what llama-bench -o json wrote")
    lb.add_argument(
        "--report-dir", default="reports", help="where the runs go, one folder each (reports)"
    )
    lb.add_argument(
        "--machine",
        metavar="RUN",
        help="take the machine from this run of ours (the same box), so the site shows both "
        "on one machine's page; without it the machine is llama-bench's CPU and GPU names",
    )
    lb.set_defaults(func=run_llama_bench)
    return parser


def run(args: argparse.Namespace) -> int:
    from harness.models.gguf.convert import import_gguf
    from harness.models.gguf.errors import GGUFImportError

    try:
        summary = import_gguf(Path(args.file), Path(args.out), dtype=args.dtype)
    except GGUFImportError as exc:
        raise CliError(str(exc)) from None
    print(
        f"{summary.architecture} ({summary.model_type}) -> {summary.output}: "
        f"{summary.output_bytes / 2**20:.1f} MiB in {summary.seconds:.1f} s "
        f"({summary.kept_quantized} tensors kept quantized, {summary.dequantized} dequantized)"
    )
    return 0


def run_llama_bench(args: argparse.Namespace) -> int:
    from harness.report.escape import plain
    from harness.results.llama_bench_import import (
        LlamaBenchImportError,
        read_tests,
        records_from,
    )
    from harness.results.report_dir import shown
    from harness.results.store import load_run, write_record

    machine = load_run(Path(args.machine)).machine if args.machine else None
    root = Path(args.report_dir)
    planned = []
    for name in args.files:
        path = Path(name)
        try:
            planned.append((path, records_from(path, read_tests(path), machine)))
        except LlamaBenchImportError as exc:
            raise CliError(str(exc)) from None
    for path, records in planned:
        for record in records:
            if (root / record.run_id).exists():
                raise CliError(
                    f"{shown(path)}: already imported as {shown(root / record.run_id)}; "
                    "delete that folder to import it again"
                )
    for path, records in planned:
        for record in records:
            write_record(record, root / record.run_id)
            models = ", ".join(plain(m, 60) for m in record.models)
            print(
                f"{shown(path)} -> {shown(root / record.run_id)}: {len(record.results)} tests, "
                f"llama.cpp {plain(record.packages['llama.cpp'] or '', 60)}, {models}"
            )
    return 0
