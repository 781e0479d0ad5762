"""``mlx-harness site REPORTS... --out DIR``: a static history site over nightly reports (open
regressions first, a chart per case and metric, steps attributed, runs linked); a rebuild reads
only records it has not read before (their index lives in DIR)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError
from harness.cli.history import add_fit_options


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "site", help="a static history site: regressions first, charts, steps attributed"
    )
    p.add_argument("paths", nargs="+", help="directories holding run records")
    p.add_argument("--out", required=True, help="folder to write the site into")
    add_fit_options(p)
    p.add_argument(
        "--no-incremental",
        dest="incremental",
        action="store_false",
        help="read every record again (by default, only records not read before are read)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    from harness.drive.exit_rules import allow_dirty_machine
    from harness.report.site import build_site

    built = build_site(
        [Path(p) for p in args.paths],
        Path(args.out),
        min_effect=args.min_effect,
        incremental=args.incremental,
        fit_dirty=allow_dirty_machine(args.allow_dirty_machine),
    )
    if built.runs == 0:
        raise CliError(f"no readable run under {', '.join(args.paths)}; check the paths")
    print(
        f"site: {built.out / 'index.html'} ({built.pages} pages, {built.machines} machine(s), "
        f"{built.runs} runs: {len(built.counts.read)} read, {built.counts.reused} from the index)"
    )
    return 0
