"""``mlx-harness scenarios``: every scenario and its parameters (type, default, unit, meaning).

``--markdown`` prints the parameter table; ``--update-readme docs/scenarios.md`` rewrites the part
of that file between its markers (``make readme-params``), which a test keeps in step.
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
        _update_readme(Path(args.update_readme), markdown_table())
        return 0
    if args.markdown:
        print(markdown_table(), end="")
        return 0
    print("\n".join(listing(args.names)))
    return 0


def _update_readme(path: Path, table: str) -> None:
    from harness.spec.errors import one_line

    try:
        text = with_readme_table(path.read_text(encoding="utf-8"), table)
    except ValueError as exc:
        raise CliError(f"{one_line(str(path))}: {exc}; add them where the table goes") from None
    path.write_text(text, encoding="utf-8")
    print(f"wrote the parameter table into {path}")


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


def with_readme_table(readme: str, table: str) -> str:
    """``readme`` with the text between the markers replaced by ``table``.

    Raises ``ValueError`` when the markers are missing or out of order.
    """
    start, end = readme.find(README_BEGIN), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"no '{README_BEGIN}' ... '{README_END}' markers")
    head = readme[: start + len(README_BEGIN)]
    return f"{head}\n\n{table}\n{readme[end:]}"
