"""``mlx-harness probe PATH... [--json] [--context N] [--needs CAP,...]``.

Prints one row per model (or one JSON object per model with ``--json``): capabilities, backend,
decision and reason code, tool parser, parameters, weight bytes and the memory estimate. Paths
that cannot be probed get a one-line error each on stderr (``mlx-harness probe: error: ...``);
a bad ``--needs`` or ``--threshold`` is a :class:`~harness.cli.errors.CliError`. Exit status: 2
when a path could not be probed, else 1 when a model is blocked, else 0.

Everything printed in human form that came from a model's files or the command line (paths,
model types, parser names, messages) goes through :func:`~harness.report.escape.visible`: control
characters, ANSI escapes and bidi controls are shown, never obeyed. JSON output escapes them
itself (``\\u001b``).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from harness.cli.errors import CliError
from harness.probe.installed import detect_stack
from harness.probe.machine import DEFAULT_THRESHOLD, available_memory
from harness.probe.policy import Action, Decision, decide
from harness.probe.probe import ProbeError, probe_model
from harness.probe.serialize import decision_dict, estimate_dict, probe_dict
from harness.probe.types import Capability, Probe
from harness.report.escape import visible

COLUMNS = (
    "model",
    "type",
    "capabilities",
    "backend",
    "decision",
    "parser",
    "params",
    "weights",
    "memory",
)


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Add the ``probe`` subcommand to an ``add_subparsers()`` object; returns its parser."""
    p: argparse.ArgumentParser = subparsers.add_parser(
        "probe", help="inspect model directories without loading them"
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="model directories or .gguf files")
    p.add_argument("--json", action="store_true", help="one JSON object per model")
    p.add_argument(
        "--context",
        type=_positive,
        default=None,
        metavar="N",
        help="context tokens for the memory estimate (default: min(model, 4096))",
    )
    p.add_argument(
        "--needs",
        default="",
        metavar="CAP,...",
        help=f"capabilities a scenario needs ({', '.join(c.value for c in Capability)})",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help="share of machine memory a model may use (default 0.70)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    try:
        needs = _needs(args.needs)
        budget = available_memory(args.threshold)
    except ValueError as exc:
        raise CliError(visible(str(exc))) from None
    stack = detect_stack()
    rows: list[tuple[Probe, Decision]] = []
    failed = False
    for raw in args.paths:
        try:
            probe = probe_model(raw, stack=stack)
            decision = decide(
                probe, scenario_needs=needs, memory=budget, context_tokens=args.context
            )
            rows.append((probe, decision))
        except ProbeError as exc:
            failed = True
            print(f"mlx-harness probe: error: {visible(str(exc))}", file=sys.stderr)
        except Exception as exc:  # one line per path, never a traceback
            failed = True
            why = visible(f"{raw}: {type(exc).__name__}: {exc}")
            print(f"mlx-harness probe: error: {why}", file=sys.stderr)
    if args.json:
        for probe, decision in rows:
            print(json.dumps(_record(probe, decision), sort_keys=True))
    elif rows:
        print(render_table([_cells(p, d) for p, d in rows]))
        for probe, decision in rows:
            for finding in decision.findings:
                where, what = visible(probe.path), visible(finding.message)
                print(f"{where}: {finding.action.value}: {finding.code.value}: {what}")
    if failed:
        return 2
    return 1 if any(d.action is Action.BLOCK for _, d in rows) else 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _needs(text: str) -> frozenset[Capability]:
    names = [n.strip() for n in text.split(",") if n.strip()]
    try:
        return frozenset(Capability(n) for n in names)
    except ValueError:
        known = ", ".join(c.value for c in Capability)
        raise ValueError(f"--needs: unknown capability in {text!r} (known: {known})") from None


def _record(probe: Probe, decision: Decision) -> dict[str, Any]:
    record = probe_dict(probe)
    record["decision"] = decision_dict(decision)
    record["memory"] = estimate_dict(decision.memory) if decision.memory else None
    return record


def _cells(probe: Probe, decision: Decision) -> tuple[str, ...]:
    """One table row, every cell terminal-safe."""
    support = probe.backend_support()
    backend = probe.backend.value
    if support is not None and support.version:
        backend += f" {support.version}" + ("" if support.module else " (unknown type)")
    cells = (
        probe.path,
        probe.model_type or "-",
        ",".join(sorted(c.value for c in probe.capabilities)) or "-",
        backend,
        f"{decision.action.value}: {decision.code.value}",
        probe.tool_parser or "-",
        human(probe.parameters, ""),
        human(probe.weights_bytes, "B"),
        human(decision.memory.total_bytes, "B") if decision.memory else "-",
    )
    return tuple(visible(c) for c in cells)


def human(value: int | None, unit: str) -> str:
    if value is None:
        return "-"
    size = float(value)
    for prefix in ("", "K", "M", "G", "T"):
        if abs(size) < 1000 or prefix == "T":
            return f"{size:.0f}{unit}" if not prefix else f"{size:.1f}{prefix}{unit}"
        size /= 1000
    return f"{value}{unit}"


def render_table(rows: list[tuple[str, ...]]) -> str:
    """Plain aligned columns with a header row."""
    table = [COLUMNS, *rows]
    widths = [max(len(r[i]) for r in table) for i in range(len(COLUMNS))]
    return "\n".join(
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in table
    )
