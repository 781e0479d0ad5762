"""The command-line driver: thin wrappers over the same functions the pytest plugin uses.

One module per command (``harness/cli/<command>.py``), each with the same two names:
``add_parser(subparsers)`` adds the command's parser (its ``func`` is the module's ``run``) and
``run(args)`` runs it, returning the exit status. A command's one-line user error is a
:class:`~harness.cli.errors.CliError`, printed by :func:`main` as ``mlx-harness: error: LINE``
with exit status 2. Helpers shared by commands live beside them under names that say what they
hold (``suite_paths``, ``pin_sets``, ``pin_turns``, ``family_matrix``); what the pytest plugin
shares with them lives in :mod:`harness.drive`."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import warnings
from collections.abc import Iterator, Sequence
from typing import NoReturn, TextIO

from harness.cli.errors import CliError

DESCRIPTION = (
    "Benchmark and check local inference on Apple's MLX stack: run suites of models and "
    "scenarios, then report, compare and gate on the results. `mlx-harness COMMAND --help` "
    "says more; `pytest SUITE.suite.yaml` runs suites too."
)


# Each command (and alias) -> its module under harness.cli, in the order --help lists them
COMMANDS: dict[str, str] = {
    "validate": "validate",
    "schema": "schema",
    "run": "run",
    "report": "report",
    "export": "export",
    "compare": "compare",
    "history": "history",
    "site": "site",
    "models": "models",
    "import": "import_",
    "toolcalls": "toolcalls",
    "probe": "probe",
    "scenarios": "scenarios",
    "merge": "merge",
    "pin-compare": "pin_matrix",
    "pin-matrix": "pin_matrix",
    "matrix": "pin_matrix",
    "bisect": "bisect",
}


class _NotThisWay(Exception):
    """A one-command parser could not parse the line: the whole parser parses it again (and
    says what is wrong with every command's options in view)."""


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole parser, or with ``only`` the one command's (a command imports what it needs:
    parsing one command's line need not import the other fifteen)."""
    import importlib

    from harness import __version__
    from harness.cli.parser import Parser

    class OneCommandParser(Parser):  # its subparsers are made of its class
        def error(self, message: str) -> NoReturn:
            raise _NotThisWay(message)

    kind = Parser if only is None else OneCommandParser
    parser = kind(prog="mlx-harness", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"mlx-harness {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    modules = [COMMANDS[only]] if only is not None else list(dict.fromkeys(COMMANDS.values()))
    for name in modules:
        importlib.import_module(f"harness.cli.{name}").add_parser(sub)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """``argv`` parsed by the named command's parser alone where that parses it, else by the
    whole parser (its help, its errors and their "did you mean" name every command)."""
    words = list(sys.argv[1:] if argv is None else argv)
    command = next((w for w in words if not w.startswith("-")), None)
    if command in COMMANDS and not (set(words[: words.index(command)]) & {"-h", "--help"}):
        parser = build_parser(only=command)
        try:
            return parser.parse_args(words)
        except _NotThisWay:
            pass
    return build_parser().parse_args(words)


def main(argv: Sequence[str] | None = None) -> int:
    from harness.core.registry import IncompletePluginError
    from harness.results.store import ReportDirError, RunFileError

    try:
        args = parse(argv)
        with _read_warnings_as_lines():
            return int(args.func(args))
    except BrokenPipeError:  # the reader went away (`| head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except (CliError, RunFileError, ReportDirError, IncompletePluginError) as exc:
        print(f"mlx-harness: error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # a file the command was told to write or read
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"mlx-harness: error: {where}{exc.strerror or exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # a bug of ours: one line here, the traceback in a file
        print(f"mlx-harness: internal error: {_internal_error(exc)}", file=sys.stderr)
        return 3


@contextlib.contextmanager
def _read_warnings_as_lines() -> Iterator[None]:
    """Run-record warnings (a cut last line skipped, a record skipped) as stderr lines."""
    from harness.results.store import RunReadWarning

    with warnings.catch_warnings():
        warnings.simplefilter("always", RunReadWarning)
        shown = warnings.showwarning

        def show(
            message: Warning | str,
            category: type[Warning],
            filename: str,
            lineno: int,
            file: TextIO | None = None,
            line: str | None = None,
        ) -> None:
            if issubclass(category, RunReadWarning):
                print(f"mlx-harness: warning: {message}", file=sys.stderr)
            else:
                shown(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        yield


def _internal_error(exc: BaseException) -> str:
    """One line for an unexpected exception; its traceback goes to a file named in the line."""
    import tempfile
    import traceback

    from harness.core.exception_line import exception_line

    line = exception_line(exc)
    try:
        with tempfile.NamedTemporaryFile(
            "w", prefix="mlx-harness-error-", suffix=".log", delete=False
        ) as fh:
            fh.write("".join(traceback.format_exception(exc)))
    except OSError:
        return line
    return f"{line} (traceback in {fh.name}; please report it)"
