"""Characters that act instead of printing, and a check that a run's reports hold none raw.

An *acting* character moves a terminal's cursor, starts an ANSI/OSC sequence, rings a bell,
reorders what a reader sees (bidi overrides, embeddings, isolates, marks) or breaks a line
where no line break is: C0 and C1 controls, DEL, U+061C, U+200E/U+200F, U+2028/U+2029,
U+202A-U+202E, U+2066-U+2069, and unpaired surrogates. The set is written out here, apart
from ``harness.report.escape``, so the check does not trust the code it checks.

:func:`assert_no_acting_characters` renders a run (a :class:`~harness.core.types.RunRecord`, or a
run folder or ``run.jsonl``) as ``report.html``, ``report.md`` and the terminal summary and
fails naming each raw acting character found; a folder's written reports are checked too.
Line feeds and tabs only lay out the two report files and are allowed there, not in a
terminal line. Import it as ``from tests.report.acting_characters import ...`` from outside
``tests/report``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from harness.core.types import RunRecord
from harness.report import render_html, render_markdown, terminal_summary
from harness.results.store import load_run

ACTING = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)
LAYOUT = frozenset("\n\t")  # allowed in the report files, never in a terminal line
REPORT_FILES = ("report.html", "report.md")


def acting_in(text: str, allowed: Iterable[str] = ()) -> list[str]:
    """Each raw acting character of ``text`` (``allowed`` ones left out) with its context."""
    keep = frozenset(allowed)
    return [
        f"U+{ord(m.group()):04X} at {m.start()}: {text[max(m.start() - 30, 0) : m.end() + 30]!r}"
        for m in ACTING.finditer(text)
        if m.group() not in keep
    ]


def acting_in_outputs(run: RunRecord, run_dir: Path | None = None) -> dict[str, list[str]]:
    """Raw acting characters by output: the rendered reports, the terminal summary's lines and,
    when ``run_dir`` has them, the reports written there. Empty lists where none is found."""
    found = {
        "report.html": acting_in(render_html(run), LAYOUT),
        "report.md": acting_in(render_markdown(run), LAYOUT),
        "terminal summary": [hit for line in terminal_summary(run) for hit in acting_in(line)],
    }
    for name in REPORT_FILES:
        path = run_dir / name if run_dir is not None else None
        if path is not None and path.is_file():
            text = path.read_bytes().decode("utf-8", "surrogateescape")
            found[f"{name} as written"] = acting_in(text, LAYOUT)
    return found


def assert_no_acting_characters(run_or_dir: RunRecord | Path | str) -> None:
    """Fail unless no raw acting character is in ``report.html``, ``report.md`` and the terminal
    summary of ``run_or_dir`` (a RunRecord, a run folder or its ``run.jsonl``)."""
    if isinstance(run_or_dir, RunRecord):
        run, run_dir = run_or_dir, None
    else:
        path = Path(run_or_dir)
        run, run_dir = load_run(path), path if path.is_dir() else path.parent
    problems = {where: hits for where, hits in acting_in_outputs(run, run_dir).items() if hits}
    assert problems == {}, f"raw acting characters in the run's outputs: {problems}"
