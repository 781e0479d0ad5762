"""``mlx-harness import gguf FILE OUT [--dtype ...]``: convert model files to MLX (a module name
with a trailing underscore: ``import`` is a keyword)."""

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
    return parser


def run(args: argparse.Namespace) -> int:
    from harness.models.gguf import GGUFImportError, import_gguf

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
