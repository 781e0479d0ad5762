"""Argument values compared after normalisation, under a named string mode.

``StringMatch.STRICT`` (the default) folds case and collapses whitespace, nothing more:
``"Nashville, TN"`` and ``"Nashville TN"`` differ. ``StringMatch.BFCL`` is the Berkeley Function
Calling Leaderboard's ``standardize_string`` (bfcl-eval 2026.3.23,
``bfcl_eval/eval_checker/ast_eval/ast_checker.py``): drop spaces and the characters ``,./-_*^``,
lowercase, turn ``'`` into ``"``. It is kinder (``"April 1, 2024"`` == ``"April 1 2024"``) and
sometimes wrong (``"3x**2 + 2x - 1"`` == ``"3x**2 + 2x  1"``). In both modes numbers compare by
value (1 == 1.0), a boolean is never a number, lists compare item by item and objects key by key
(BFCL standardises one level deep; this does every level).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from enum import Enum
from typing import Any


class StringMatch(str, Enum):
    """How text values are compared; a score names the mode it was judged by."""

    STRICT = "strict"  # case folded, whitespace collapsed
    BFCL = "bfcl"  # BFCL's standardize_string: no spaces or ,./-_*^, lowercase, ' as "


BFCL_DROPPED = re.compile(r"[ \,\.\/\-\_\*\^]")  # verbatim from BFCL's standardize_string


def normalise_text(text: str, strings: StringMatch = StringMatch.STRICT) -> str:
    if strings is StringMatch.BFCL:
        return BFCL_DROPPED.sub("", text).lower().replace("'", '"')
    return " ".join(text.split()).casefold()


def normalise(value: Any, strings: StringMatch = StringMatch.STRICT) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return normalise_text(value, strings)
    if isinstance(value, list):
        return [normalise(v, strings) for v in value]
    if isinstance(value, dict):
        return {str(k): normalise(v, strings) for k, v in value.items()}
    return value


def _same_kind(a: Any, b: Any) -> bool:
    """Same JSON kinds all the way down (an int and a float are both numbers; a bool is not)."""
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if isinstance(a, numbers) or isinstance(b, numbers):
        return isinstance(a, numbers) and isinstance(b, numbers)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same_kind(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_kind(a[k], b[k]) for k in a)
    return type(a) is type(b)


def acceptable(
    value: Any, choices: Sequence[Any], strings: StringMatch = StringMatch.STRICT
) -> bool:
    """Whether ``value`` equals one of ``choices`` after normalisation (and has its kind)."""
    wanted = normalise(value, strings)
    return any(_same_kind(c, value) and normalise(c, strings) == wanted for c in choices)
