"""``mlx-harness scenarios``: every scenario and its parameters (type, default, unit, meaning).

``--markdown`` prints the parameter table; ``--update-readme docs/scenarios.md`` rewrites the parts
of that file between their markers (``make readme-params``), which a test keeps in step: the
metrics table (each built-in's folder's ``docs.md``), the contract table (each built-in's params
model, model needs and backend needs, which tests/scenarios/test_scenarios_base.py checks the
scenarios against) and the parameter tables (the params models).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from harness.cli.errors import CliError

COLUMNS = ("parameter", "type", "default", "unit", "description")


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    p: argparse.ArgumentParser = subparsers.add_parser(
        "scenarios", help="list the scenarios and their parameters"
    )
    p.add_argument("names", nargs="*", help="only these scenarios (default: all)")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--markdown", action="store_true", help="print the Markdown parameter table")
    out.add_argument(
        "--update-readme",
        metavar="PATH",
        default=None,
        help="rewrite the parameter table between the markers in PATH (docs/scenarios.md)",
    )
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    if args.update_readme:
        _update_readme(Path(args.update_readme))
        return 0
    if args.markdown:
        print(markdown_table(), end="")
        return 0
    print("\n".join(listing(args.names)))
    return 0


def _update_readme(path: Path) -> None:
    from harness.spec.errors import one_line

    try:
        text = with_generated(path.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise CliError(f"{one_line(str(path))}: {exc}; add them where the table goes") from None
    path.write_text(text, encoding="utf-8")
    print(f"wrote the generated tables into {path}")


def listing(names: list[str]) -> list[str]:
    """Plain lines: a heading per scenario, then its parameters in aligned columns."""
    from harness.report.escape import plain
    from harness.scenarios import SCENARIOS
    from harness.spec.scenario_params import param_docs, params_models

    models = params_models()
    unknown = [n for n in names if n not in models]
    if unknown:
        raise CliError(f"unknown scenario '{plain(unknown[0])}'; {SCENARIOS.hint(unknown[0])}")
    lines: list[str] = []
    for name in names or list(models):
        scenario = SCENARIOS.get(name)
        lines.append(f"{plain(name)} (version {scenario.version})")
        docs = param_docs(name, models[name])
        if not docs:
            lines.extend(["  no parameters", ""])
            continue
        cells_of = [COLUMNS, *((d.name, d.type, d.default, d.unit, d.description) for d in docs)]
        rows = [[plain(cell, 200) for cell in row] for row in cells_of]
        widths = [min(28, max(len(r[i]) for r in rows)) for i in range(len(COLUMNS) - 1)]
        for row in rows:
            cells = [plain(c, w).ljust(w) for c, w in zip(row, widths, strict=False)]
            lines.append("  " + "  ".join([*cells, row[-1]]).rstrip())
        lines.append("")
    return lines


README_BEGIN = "<!-- scenario-params:begin (generated: make readme-params) -->"
README_END = "<!-- scenario-params:end -->"
METRICS_BEGIN = "<!-- scenario-metrics:begin (generated from each folder's docs.md) -->"
METRICS_END = "<!-- scenario-metrics:end -->"
CONTRACTS_BEGIN = "<!-- scenario-contracts:begin (generated: make readme-params) -->"
CONTRACTS_END = "<!-- scenario-contracts:end -->"
EVERY_CASE = (
    "`memory.mlx_peak_bytes` (MLX peak, reset before the case), `memory.mlx_active_bytes`, "
    "`memory.process_peak_rss_bytes` (each labelled with its view)"
)
NONE = "none"


def _code(text: str) -> str:
    return "`" + text.replace("`", "'").replace("|", "\\|") + "`"


def markdown_table() -> str:
    """The parameter table of docs/scenarios.md: one small table per scenario."""
    from harness.report.escape import md_escape
    from harness.spec.scenario_params import param_docs, params_models

    out: list[str] = []
    for name, model in params_models().items():
        docs = param_docs(name, model)
        out.append(f"**{_code(name)}**\n")
        if not docs:
            out.extend(["no parameters", ""])
            continue
        out.append("| " + " | ".join(COLUMNS) + " |")
        out.append("|---|---|---|---|---|")
        for d in docs:
            cells = (
                _code(d.name),
                _code(d.type),
                _code(d.default),
                md_escape(d.unit),
                md_escape(d.description),
            )
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def metrics_table() -> str:
    """docs/scenarios.md's "Scenarios and metrics" table: a row per built-in scenario, its cell
    the folder's ``docs.md``; then what every case records."""
    from harness.scenarios import BUILT_IN
    from harness.scenarios.folders import docs_fragment

    rows = ["| scenario | metrics (units) |", "|---|---|"]
    for name, target in BUILT_IN.items():
        fragment = docs_fragment(target)
        if fragment is None:
            raise CliError(f"scenario {name!r} has no docs.md in its folder; write its row there")
        rows.append(f"| {_code(name)} | {fragment} |")
    rows.append(f"| every case | {EVERY_CASE} |")
    return "\n".join(rows) + "\n"


def contract_rows() -> list[tuple[str, str, str, str]]:
    """Each built-in's contract: (name, params model ``module.Class``, model needs, backend
    needs), the needs as sorted values (``none``: none)."""
    from harness.scenarios import BUILT_IN, SCENARIOS

    rows = []
    for name in BUILT_IN:
        scenario = SCENARIOS.get(name)
        model = scenario.params_model
        rows.append(
            (
                name,
                f"{model.__module__}.{model.__qualname__}",
                ", ".join(sorted(c.value for c in scenario.needs)) or NONE,
                ", ".join(sorted(c.value for c in scenario.backend_needs)) or NONE,
            )
        )
    return rows


def contracts_table() -> str:
    """docs/scenarios.md's contract table, which the scenario contract tests read."""
    out = ["| scenario | params model | model needs | backend needs |", "|---|---|---|---|"]
    out.extend("| " + " | ".join(_code(cell) for cell in row) + " |" for row in contract_rows())
    return "\n".join(out) + "\n"


def with_readme_table(
    readme: str, table: str, begin: str = README_BEGIN, end_marker: str = README_END
) -> str:
    """``readme`` with the text between the markers replaced by ``table``.

    Raises ``ValueError`` when the markers are missing or out of order.
    """
    start, end = readme.find(begin), readme.find(end_marker)
    if start < 0 or end < start:
        raise ValueError(f"no '{begin}' ... '{end_marker}' markers")
    head = readme[: start + len(begin)]
    return f"{head}\n\n{table}\n{readme[end:]}"


def with_generated(readme: str) -> str:
    """``readme`` (docs/scenarios.md) with its three generated parts rewritten; the parameter
    table is required, the metrics and contract tables where their markers are."""
    text = with_readme_table(readme, markdown_table())
    for begin, end, table in (
        (METRICS_BEGIN, METRICS_END, metrics_table),
        (CONTRACTS_BEGIN, CONTRACTS_END, contracts_table),
    ):
        if begin in text:
            text = with_readme_table(text, table(), begin, end)
    return text
