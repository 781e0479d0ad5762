"""The command line's one error type: a line for the user, printed without a traceback."""

from __future__ import annotations


class CliError(Exception):
    """A one-line error for the user; printed without a traceback, exit status 2."""
