"""``mlx-harness models list|prepare|build-llama-server`` and ``mlx-harness import gguf``: the
embedded models, llama.cpp's server built into the cache, and converting model files to MLX."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli_errors import CliError


def _text_origins() -> dict[str, Any]:
    """The zoo's text families by embedded name: where each one's config comes from."""
    from harness.models.zoo.families_text import TEXT_FAMILIES

    return {f"zoo/{f.name}": f for f in TEXT_FAMILIES}


def cmd_models_list(args: argparse.Namespace) -> int:
    from importlib import metadata

    from harness.models.catalog import embedded_models

    models = embedded_models()
    origins = _text_origins()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "name": m.name,
                        "backend": m.backend,
                        "path": str(m.path),
                        "prepared": m.prepared,
                        "size_bytes": m.size_bytes,
                        "description": m.description,
                        **(
                            {
                                "config_origin": origins[m.name].config_origin.value,
                                "config_origin_reason": origins[m.name].origin_reason,
                            }
                            if m.name in origins
                            else {}
                        ),
                    }
                    for m in models
                ],
                indent=2,
            )
        )
        return 0
    width = max(len(m.name) for m in models)
    for m in models:
        state = "prepared" if m.prepared else "not prepared"
        size = f"{m.size_bytes / 2**20:8.1f} MiB" if m.prepared else " " * 12
        origin = origins[m.name].config_origin.value if m.name in origins else ""
        print(f"{m.name:<{width}}  {m.backend:<9} {state:<12} {size}  {origin:<9}  {m.path}")
    try:
        mlx_lm = f"mlx-lm {metadata.version('mlx-lm')}"
    except metadata.PackageNotFoundError:
        mlx_lm = "mlx-lm (not installed)"
    print(f"\nzoo text configs: derived = generated from {mlx_lm}'s ModelArgs + the family's keys")
    for name, family in origins.items():
        if family.origin_reason:
            print(f"  {name}: {family.config_origin.value}: {family.origin_reason}")
    return 0


def cmd_models_prepare(args: argparse.Namespace) -> int:
    from harness.models.catalog import embedded_models, prepare_embedded

    known = {m.name: m for m in embedded_models()}
    names = args.names or list(known)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise CliError(
            f"unknown embedded model(s): {', '.join(unknown)}; see `mlx-harness models list`"
        )
    from harness.models.zoo.family import DerivationError

    for name in names:
        try:
            path = prepare_embedded(name, force=args.force)
        except DerivationError as exc:
            raise CliError(str(exc)) from None
        print(f"{name}: {path}", flush=True)
    return 0


def cmd_models_build_llama_server(args: argparse.Namespace) -> int:
    from harness.models.llama_server import LlamaServerError, build, read_build_info

    try:
        path = build(force=args.force, on_step=lambda step: print(f"llama.cpp: {step}", flush=True))
    except LlamaServerError as exc:
        raise CliError(str(exc)) from None
    info = read_build_info()
    built = f" (built in {info.build_s:.0f} s; {info.version_output})" if info else ""
    print(f"llama-server: {path}{built}")
    return 0


def cmd_import_gguf(args: argparse.Namespace) -> int:
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


def add_parsers(sub: Any) -> None:
    """Add ``models`` and ``import`` to the main parser's subcommands."""
    models = sub.add_parser("models", help="embedded models").add_subparsers(
        dest="models_command", required=True
    )
    p = models.add_parser("list", help="embedded models and whether they are prepared")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_models_list)
    p = models.add_parser("prepare", help="build/convert embedded models into the cache")
    p.add_argument("names", nargs="*", help="embedded models to prepare (default: all)")
    p.add_argument("--force", action="store_true", help="build again even if prepared")
    p.set_defaults(func=cmd_models_prepare)
    p = models.add_parser(
        "build-llama-server", help="build llama.cpp's llama-server once into the cache"
    )
    p.add_argument("--force", action="store_true", help="rebuild even if a build is cached")
    p.set_defaults(func=cmd_models_build_llama_server)
    from harness.cli_arch_matrix import add_parser as add_arch_matrix
    from harness.cli_audio_matrix import add_parser as add_audio_matrix
    from harness.cli_vision_matrix import add_parser as add_vlm_matrix

    add_arch_matrix(models)
    add_vlm_matrix(models)
    add_audio_matrix(models)

    imports = sub.add_parser("import", help="convert model files to MLX").add_subparsers(
        dest="import_command", required=True
    )
    p = imports.add_parser("gguf", help="a llama-family or gemma3 GGUF -> an mlx-lm directory")
    p.add_argument("file", help="the .gguf file to convert")
    p.add_argument("out", help="directory to write the mlx-lm model into")
    p.add_argument(
        "--dtype",
        default="keep",
        choices=["keep", "float32", "float16", "bfloat16"],
        help="keep: MLX-native quant types stay quantized, K-quants dequantized",
    )
    p.set_defaults(func=cmd_import_gguf)
