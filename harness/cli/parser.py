"""The argument parser every command's parser is made with: a mistyped command or option gets a
"did you mean" (argparse on Python 3.11 offers none), and each option's help shows its default
when it has one worth showing (not None, False or an empty list)."""

from __future__ import annotations

import argparse
import difflib
import re
from collections.abc import Iterator
from typing import Any, NoReturn

_CHOICE = re.compile(r"invalid choice: '([^']*)' \(choose from (.*)\)")
_UNKNOWN = re.compile(r"unrecognized arguments: (.*)")
_SAYS_DEFAULT = re.compile(r"\bdefault\b", re.IGNORECASE)


class DefaultsFormatter(argparse.HelpFormatter):
    """Help text with ``(default: X)`` after options whose default means something."""

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help
        default = action.default
        if (
            text
            and "%(default)" not in text
            and not _SAYS_DEFAULT.search(text)  # "(default 0.70)": the help says it already
            and action.option_strings
            and default not in (None, False, argparse.SUPPRESS)
            and default != []
            and not isinstance(action, argparse._VersionAction)
        ):
            text += " (default: %(default)s)"
        return text


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors suggest the closest command or option."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", DefaultsFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        super().error(message + suggestion(self, message))


def _option_strings(parser: argparse.ArgumentParser) -> Iterator[str]:
    for action in parser._actions:
        yield from action.option_strings
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _option_strings(sub)


def _owners(parser: argparse.ArgumentParser, option: str, prefix: str = "") -> Iterator[str]:
    """The commands (``models list``) that take ``option``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                command = f"{prefix}{name}"
                if any(option in a.option_strings for a in sub._actions):
                    yield command
                yield from _owners(sub, option, f"{command} ")


def suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """``; did you mean 'X'?`` for an invalid choice or an unknown option, or ""; an option
    another command takes says which (``'--out' is an option of compare, not of this
    command``)."""
    found = _CHOICE.search(message)
    if found:
        choices = re.findall(r"'([^']*)'", found.group(2))
        close = difflib.get_close_matches(found.group(1), choices, n=1, cutoff=0.5)
        return f"; did you mean '{close[0]}'?" if close else ""
    found = _UNKNOWN.search(message)
    if found:
        known = sorted(set(_option_strings(parser)))
        for word in found.group(1).split():
            if word.startswith("-"):
                option = word.split("=")[0]
                if option in known:
                    owners = sorted(set(_owners(parser, option)))
                    return f"; '{option}' is an option of {', '.join(owners)}, not of this command"
                close = difflib.get_close_matches(option, known, n=1, cutoff=0.6)
                if close:
                    return f"; did you mean '{close[0]}'?"
    return ""
