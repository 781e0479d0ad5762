"""Every argument of every ``mlx-harness`` command says what it is for (``--help``)."""

from __future__ import annotations

import argparse
from collections.abc import Iterator

import pytest

from harness.cli import build_parser


def _actions(
    parser: argparse.ArgumentParser, path: str
) -> Iterator[tuple[str, argparse.Action | str]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helped = {a.dest for a in action._choices_actions if a.help}
            seen: set[int] = set()
            for name, sub in action.choices.items():
                if id(sub) in seen:  # an alias (matrix for pin-matrix): walked under its name
                    continue
                seen.add(id(sub))
                if name not in helped:
                    yield f"{path} {name}", "subcommand"
                yield from _actions(sub, f"{path} {name}")
        else:
            yield path, action


def _undocumented(parser: argparse.ArgumentParser) -> list[str]:
    missing = []
    for path, action in _actions(parser, parser.prog):
        if isinstance(action, str):
            missing.append(f"{path} (no help for the {action})")
        elif not action.help:  # argparse.SUPPRESS hides an internal flag on purpose
            missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")
    return missing


def test_every_argument_of_every_command_has_help() -> None:
    assert _undocumented(build_parser()) == []


def test_the_walk_finds_a_missing_help() -> None:
    parser = argparse.ArgumentParser(prog="p")
    sub = parser.add_subparsers()
    child = sub.add_parser("child", help="a command")
    child.add_argument("--flag")
    sub.add_parser("bare")
    assert _undocumented(parser) == ["p child --flag", "p bare (no help for the subcommand)"]


def test_an_alias_is_the_same_command() -> None:
    """``matrix`` is kept as an alias of ``pin-matrix``, so older scripts keep working."""
    parser = build_parser()
    old, new = (parser.parse_args([c, "runs/a"]) for c in ("matrix", "pin-matrix"))
    assert old.func is new.func and old.runs == new.runs == ["runs/a"]


@pytest.mark.parametrize("command", [[], ["run"], ["export"], ["scenarios"], ["models", "list"]])
def test_help_prints(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        build_parser().parse_args([*command, "--help"])
    assert exc.value.code == 0
    assert "usage: mlx-harness" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["rn"], "did you mean 'run'?"),
        (["compar", "a", "b"], "did you mean 'compare'?"),
        (["run", "suites", "--no-reprot"], "did you mean '--no-report'?"),
        (["toolcalls", "scor"], "did you mean 'score'?"),
        (["models", "lst"], "did you mean 'list'?"),
        # another command's option: named as such, never "did you mean" the option itself
        (["run", "suites", "--out", "x"], ", not of this command"),
    ],
)
def test_a_mistyped_command_or_option_gets_a_suggestion(
    argv: list[str], hint: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.cli import main

    with pytest.raises(SystemExit) as stopped:
        main(argv)
    assert stopped.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].endswith(hint)


def test_another_commands_option_names_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    with pytest.raises(SystemExit):
        main(["run", "suites", "--out", "x"])
    err = capsys.readouterr().err
    assert "'--out' is an option of compare, " in err and "did you mean" not in err


def test_nothing_close_gets_no_suggestion(capsys: pytest.CaptureFixture[str]) -> None:
    from harness.cli import main

    with pytest.raises(SystemExit):
        main(["zzzzzz"])
    assert "did you mean" not in capsys.readouterr().err


def test_options_show_their_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["compare", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "(default: 0.05)" in text and "(default: 0.03)" in text  # --alpha, --min-effect
    assert "(default: None)" not in text and "(default: False)" not in text


def _defaults_said(parser: argparse.ArgumentParser) -> list[tuple[str, int]]:
    """How often each option's help, as ``--help`` prints it, names its default."""
    import re

    from harness.cli.parser import DefaultsFormatter

    formatter = DefaultsFormatter("p")
    counts = []
    for path, action in _actions(parser, parser.prog):
        if isinstance(action, str) or not action.help or not action.option_strings:
            continue
        text = formatter._expand_help(action)
        said = len(re.findall(r"\bdefault\b", text, re.IGNORECASE))
        counts.append((f"{path} {'/'.join(action.option_strings)}", said))
    return counts


def test_help_names_each_default_once() -> None:
    twice = [(name, n) for name, n in _defaults_said(build_parser()) if n > 1]
    assert twice == []
    said = dict(_defaults_said(build_parser()))
    assert said["mlx-harness run --report-dir"] == 1  # the formatter adds what the help lacks


def test_the_count_finds_a_default_said_twice() -> None:
    parser = argparse.ArgumentParser(prog="p")
    parser.add_argument("--x", default=0.7, help="a share (default 0.70); default: 0.7 here")
    assert dict(_defaults_said(parser))["p --x"] == 2
