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
from typing import TextIO

from harness.cli.errors import CliError

DESCRIPTION = (
    "Benchmark and check local inference on Apple's MLX stack: run suites of models and "
    "scenarios, then report, compare and gate on the results. `mlx-harness COMMAND --help` "
    "says more; `pytest SUITE.suite.yaml` runs suites too."
)


def build_parser() -> argparse.ArgumentParser:
    from harness import __version__
    from harness.cli import (
        bisect,
        compare,
        export,
        history,
        import_,
        merge,
        models,
        pin_matrix,
        probe,
        report,
        run,
        scenarios,
        schema,
        site,
        toolcalls,
        validate,
    )
    from harness.cli.parser import Parser

    parser = Parser(prog="mlx-harness", description=DESCRIPTION)
    parser.add_argument("--version", action="version", version=f"mlx-harness {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    commands = (validate, schema, run, report, export, compare, history, site, models, import_)
    for command in (*commands, toolcalls, probe, scenarios, merge, pin_matrix, bisect):
        command.add_parser(sub)  # in the order --help lists them
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from harness.core.registry import IncompletePluginError
    from harness.results.store import ReportDirError, RunFileError

    try:
        args = build_parser().parse_args(argv)
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
