"""``mlx-harness models list|prepare|build-llama-server|arch-sweep|vision-sweep|audio-sweep``:
the embedded models, llama.cpp's server built into the cache, and the family sweeps (each in a
module of its own: :mod:`harness.cli.arch_matrix`, :mod:`harness.cli.vision_matrix`,
:mod:`harness.cli.audio_matrix`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError


def _text_origins() -> dict[str, Any]:
    """The zoo's text families by embedded name: where each one's config comes from."""
    from harness.models.zoo.families_text import TEXT_FAMILIES

    return {f"zoo/{f.name}": f for f in TEXT_FAMILIES}


def _list(args: argparse.Namespace) -> int:
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
    header = f"{'model':<{width}}  {'backend':<9} {'state':<12} {'size':>12}  {'config':<9}  path"
    print(header)
    print("-" * len(header))
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


def _prepare(args: argparse.Namespace) -> int:
    from harness.models.catalog import embedded_models, prepare_embedded

    known = {m.name: m for m in embedded_models()}
    names = list(args.names)
    for suite in args.suite or ():
        names.extend(n for n in _suite_embedded(Path(suite)) if n not in names)
    if not names and not args.suite:
        names = list(known)
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


def _suite_embedded(path: Path) -> list[str]:
    """The embedded models ``path`` names (its includes too), in the order it names them;
    a suite that does not load is one line per error and bad input."""
    from harness.spec.errors import SuiteInvalid
    from harness.spec.loader import load_suite

    try:
        loaded = load_suite(path, require_prepared=False)
    except SuiteInvalid as exc:
        raise CliError("\n".join(str(e) for e in exc.errors)) from None
    names = [m.entry.embedded for m in loaded.models if m.entry.embedded]
    return list(dict.fromkeys(names))


def _build_llama_server(args: argparse.Namespace) -> int:
    from harness.models.llama_server import LlamaServerError, build, read_build_info

    try:
        path = build(force=args.force, on_step=lambda step: print(f"llama.cpp: {step}", flush=True))
    except LlamaServerError as exc:
        raise CliError(str(exc)) from None
    info = read_build_info()
    built = f" (built in {info.build_s:.0f} s; {info.version_output})" if info else ""
    print(f"llama-server: {path}{built}")
    return 0


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``models`` and its subcommands to the main parser's subcommands."""
    from harness.cli import arch_matrix, audio_matrix, vision_matrix

    parser: argparse.ArgumentParser = subparsers.add_parser("models", help="embedded models")
    models = parser.add_subparsers(dest="models_command", required=True)
    p = models.add_parser("list", help="embedded models and whether they are prepared")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=run)
    p = models.add_parser("prepare", help="build/convert embedded models into the cache")
    p.add_argument(
        "names", nargs="*", help="embedded models to prepare (default: all, or --suite's)"
    )
    p.add_argument(
        "--suite",
        action="append",
        metavar="PATH",
        help="prepare the embedded models this suite names (repeatable; with names: both)",
    )
    p.add_argument("--force", action="store_true", help="build again even if prepared")
    p.set_defaults(func=run)
    p = models.add_parser(
        "build-llama-server", help="build llama.cpp's llama-server once into the cache"
    )
    p.add_argument("--force", action="store_true", help="rebuild even if a build is cached")
    p.set_defaults(func=run)
    arch_matrix.add_parser(models)
    vision_matrix.add_parser(models)
    audio_matrix.add_parser(models)
    return parser


SUBCOMMANDS = {"list": _list, "prepare": _prepare, "build-llama-server": _build_llama_server}


def run(args: argparse.Namespace) -> int:
    """The ``models`` subcommand named on the command line (the family sweeps run their own)."""
    return SUBCOMMANDS[args.models_command](args)
