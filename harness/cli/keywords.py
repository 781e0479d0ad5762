"""``mlx-harness run -k EXPR``: pytest's keyword expression (``tiny and not 128``,
``throughput or load``), matched against the names a pytest item of the case has: its suite
file, its model, its own name (``throughput[prompt_tokens=128]``) and its marks (scenario,
backend, tags), case-insensitively and by substring, as ``pytest -k`` does; the whole case id
is a name too, so ``-k "::a::"`` or ``-k model::scenario`` choose as they always did. One word
that is no expression (``tiny-llama@mlx_lm.server::api_contracts``: pytest's names have no
``@``) is a plain substring of the case id."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from _pytest.mark.expression import Expression  # pytest's own -k language, not a copy

from harness.cli.errors import CliError
from harness.core.types import Case


def keyword_names(case: Case) -> tuple[str, ...]:
    """The names ``pytest -k`` matches for the case's item (node id parts and marks), and the
    case id."""
    return (
        case.case_id,
        Path(case.suite_path).name,
        case.model.key,
        case.case_id.rsplit("::", 1)[-1],
        *case.marks,
    )


def chosen(cases: Sequence[Case], expression: str) -> list[Case]:
    """The cases ``-k expression`` chooses; a malformed expression is a CliError (one line)."""
    try:
        compiled = Expression.compile(expression)
    except SyntaxError as exc:
        if expression.strip() and not any(c.isspace() or c in "()" for c in expression):
            return [c for c in cases if expression in c.case_id]  # one word: as before
        raise CliError(f"-k {expression!r}: {exc.msg}; write e.g. -k 'tiny and not 128'") from None
    kept = []
    for case in cases:
        names = [n.lower() for n in keyword_names(case)]

        def matches(subname: str, /, **_kwargs: str | int | bool | None) -> bool:
            return any(subname.lower() in name for name in names)  # noqa: B023

        if compiled.evaluate(matches):
            kept.append(case)
    return kept
