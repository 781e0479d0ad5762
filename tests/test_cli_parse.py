"""The command line is parsed by the named command's parser alone (the other commands' modules
are not imported), with the same result as the whole parser, and every error comes from the
whole parser (its hints name every command's options)."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from harness.cli import COMMANDS, build_parser, parse


def _choices(parser: argparse.ArgumentParser) -> set[str]:
    (sub,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return set(sub.choices)


def test_every_command_is_in_the_table() -> None:
    assert set(COMMANDS) == _choices(build_parser())


@pytest.mark.parametrize(
    "line",
    [
        ["run", "s.suite.yaml", "--report-dir", "out", "-k", "tiny and not slow"],
        ["compare", "a", "b", "--out", "o"],
        ["models", "list"],
        ["matrix", "runs"],
        ["pin-compare", "runs"],
        ["import", "gguf", "m.gguf", "out"],
        ["validate", "a.suite.yaml", "b.suite.yaml"],
    ],
    ids=lambda line: line[0],
)
def test_one_command_parses_as_the_whole_parser(line: list[str]) -> None:
    assert vars(parse(line)) == vars(build_parser().parse_args(line))


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (["run", "s.suite.yaml", "--out", "x"], "'--out' is an option of"),
        (["comparre", "a", "b"], "did you mean 'compare'?"),
        (["run"], "the following arguments are required: paths"),
    ],
)
def test_errors_come_from_the_whole_parser(
    line: list[str], said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as stopped:
        parse(line)
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert said in err and err.startswith("usage: mlx-harness")


def test_a_command_line_imports_only_its_command() -> None:
    code = (
        "import sys; from harness.cli import parse; parse(['validate', 'x.suite.yaml']); "
        "print(sorted(m for m in sys.modules if m.startswith('harness.cli.')))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "harness.cli.validate" in shown
    assert not [m for m in ("run", "compare", "bisect", "site") if f"'harness.cli.{m}'" in shown]
