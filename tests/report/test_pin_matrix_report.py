"""matrix.md and matrix.html: the pin sets with their denominators, the transitions, and one
row per case; hostile model text stays text in both files."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from harness.report.pin_matrix import build_view, render_pin_matrix
from harness.results.pin_matrix import build_pin_matrix
from tests.results.test_pin_matrix import _runs, _took_turns

HOSTILE = "<script>alert(1)</script>|[x](javascript:1)"


def _hostile_runs() -> list:
    runs = _runs()
    return [
        dataclasses.replace(
            run,
            results=tuple(
                dataclasses.replace(r, model=HOSTILE) if r.model == "breaks" else r
                for r in run.results
            ),
        )
        for run in runs
    ]


def test_view_has_a_column_pair_per_pin_set_and_step() -> None:
    view = build_view(build_pin_matrix(_runs()))
    labels = [c.label for c in view.matrix.columns]
    assert labels == [
        "model", "scenario", "point",
        "lm-0.31.3", "→ lm-0.32.0", "lm-0.32.0", "→ lm-0.32.2", "lm-0.32.2",
    ]  # fmt: skip
    assert view.summary[1] == (
        "lm-0.32.0 → lm-0.32.2: 1 newly failing, 4 unchanged (of 5 cases); "
        "measured one after another"
    )
    assert "drift" in view.timing_note
    slows = next(row for row in view.matrix.rows if row[0].text == "slows")
    assert slows[4].text == "🟥 regressed" and "decode_tps -20.0%" in (slows[4].note or "")
    assert "decode 80.0 tok/s" in (slows[5].note or "")


def test_runs_that_took_turns_say_their_timings_were_side_by_side(tmp_path: Path) -> None:
    names = ("lm-0.31.3", "lm-0.32.0", "lm-0.32.2")
    matrix = build_pin_matrix(_took_turns(_runs(), names))
    view = build_view(matrix)
    assert not any("one after another" in line for line in view.summary)
    assert "side by side" in view.timing_note and "drift" in view.timing_note
    measured = [c.label for c in view.transitions.columns].index("measured")
    assert {row[measured].text for row in view.transitions.rows} == {"side by side (took turns)"}
    md = render_pin_matrix(matrix, tmp_path / "m").md.read_text()
    assert "took turns, a round of each timing case at a time" in md
    assert "minutes apart" not in md


def test_both_files_are_written_and_escape_model_text(tmp_path: Path) -> None:
    paths = render_pin_matrix(build_pin_matrix(_hostile_runs()), tmp_path / "m")
    html, md = paths.html.read_text(), paths.md.read_text()
    assert "<script>alert" not in html and "&lt;script&gt;" in html
    assert "lm-0.31.3" in html and "Transitions" in html and "newly failing" in html
    row = next(line for line in md.splitlines() if "alert(1)" in line)
    assert "\\|" in row and "\\[x\\]" in row  # the pipe cannot split the row, no live link
    assert md.count("| lm-0.31.3 |") == 1  # the pin-set table names each once


# (environment seconds, built now, installer, the pin-set table's environment cell)
ENVIRONMENTS = [
    (34.3, True, "uv", "34.3 s built by uv"),
    (0.0, False, "uv", "0.0 s cached"),
    (39.4, True, None, "39.4 s built"),  # older records name no installer
]


@pytest.mark.parametrize(("seconds", "cold", "installer", "text"), ENVIRONMENTS)
def test_the_pin_set_table_says_how_each_environment_was_made(
    seconds: float, cold: bool, installer: str | None, text: str
) -> None:
    runs = [
        dataclasses.replace(
            run,
            pin_set=dataclasses.replace(
                run.pin_set, environment_s=seconds, environment_cold=cold, installer=installer
            ),
        )
        for run in _runs()
    ]
    table = build_view(build_pin_matrix(runs)).columns
    where = [c.label for c in table.columns].index("environment")
    assert {row[where].text for row in table.rows} == {text}
