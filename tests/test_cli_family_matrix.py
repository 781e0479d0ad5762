"""What the ``models *-matrix`` commands share: a row on one line (details where the command
shows them, names escaped), the summary by reason, ``--only`` names checked in one line."""

from __future__ import annotations

import argparse
from types import MappingProxyType

import pytest

from harness.cli.errors import CliError
from harness.cli.family_matrix import MatrixCommand, line, provenance, render_summary, run_matrix
from harness.families.matrix import FamilyMatrix, MatrixSpec
from harness.families.row import ArchRow, Cell, Outcome

COLUMNS = ("load", "cache")
COMMAND = MatrixCommand(
    "test-matrix",
    help="h",
    columns=COLUMNS,
    width=8,
    unknown="not a family of the installed test",
    hint=" (names are a/b)",
    details=MappingProxyType({"cache": " ("}),
)


class _Matrix(FamilyMatrix):
    spec = MatrixSpec("test-matrix", ("test",), 1, COLUMNS, "families", ("false",), 1.0)


OK_ROW = ArchRow(
    "fam",
    Cell(Outcome.OK, "made"),
    {"load": Cell(Outcome.OK, "x"), "cache": Cell(Outcome.OK, "KVCache (trimmable)")},
)
EVIL_ROW = ArchRow(
    "\x1b[31mevil",
    Cell(Outcome.OK, "made"),
    {"load": Cell(Outcome.FAILED, "ValueError: \x1b[0mboom")},
)
MATRIX = _Matrix({"test": "1.0", "mlx": "0.3"}, (OK_ROW, EVIL_ROW), 12.4, cached=True)


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        (OK_ROW, "fam      generated=ok  load=ok  cache=KVCache"),
        (EVIL_ROW, "\\x1b[31mevil generated=ok  load=FAIL  cache=."),
        (ArchRow("n", Cell(Outcome.NOT_GENERATED, "why")), "n        generated=-  load=-  cache=-"),
    ],
)
def test_line(row: ArchRow, expected: str) -> None:
    assert line(row, COMMAND) == expected


def test_summary_counts_reasons_and_tail() -> None:
    text = render_summary(MATRIX, COMMAND, f"2 families ({provenance(MATRIX)})", ["", "tail"])
    lines = text.splitlines()
    assert lines[:2] == ["", "2 families (test 1.0, mlx 0.3; cached)"]
    assert "  load       ok 1, failed 1" in lines
    assert "  cache      ok 1, not run 1" in lines
    assert "load failed: ValueError: \\x1b[0mboom  [\\x1b[31mevil]" in lines
    assert lines[-2:] == ["", "tail"]
    assert "\x1b" not in text


def _args(only: list[str] | None = None, *, json: bool = False) -> argparse.Namespace:
    return argparse.Namespace(only=only, json=json, force=False)


def test_unknown_names_are_one_line_before_anything_runs() -> None:
    def never(**_kwargs: object) -> _Matrix:
        raise AssertionError("ran")

    with pytest.raises(CliError) as raised:
        run_matrix(
            _args(["a/b", "zz", "yy"]),
            COMMAND,
            known=lambda: ["a/b"],
            matrix=never,
            summary=lambda m: "",
        )
    assert str(raised.value) == (
        "not a family of the installed test: yy, zz (names are a/b); "
        "run `mlx-harness models test-matrix` without --only to list them"
    )


def test_a_cached_matrix_prints_its_rows_then_the_summary(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code = run_matrix(
        _args(), COMMAND, known=list, matrix=lambda **kw: MATRIX, summary=lambda m: "SUMMARY"
    )
    assert code == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [line(OK_ROW, COMMAND), line(EVIL_ROW, COMMAND), "SUMMARY"]


@pytest.mark.parametrize("name", ["vision-matrix", "vlm-matrix"])
def test_the_vision_matrix_answers_to_its_old_name_too(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("mlx_vlm")
    from harness.cli import main

    assert main(["models", name, "--only", "no_such"]) != 0
    err = capsys.readouterr().err
    assert "not a model package of the installed mlx-vlm: no_such" in err
    assert "mlx-harness models vision-sweep` without --only" in err
