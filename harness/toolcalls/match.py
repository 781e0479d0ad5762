"""Score a parsed reply against BFCL-style expected calls, as structures, with classify's taxonomy.

Each argument has a list of acceptable values. A value matches one after normalisation: text
compares with case folded and whitespace collapsed, numbers by value (1 == 1.0; a boolean is
never a number), lists item by item and objects key by key. Types are not normalised away: a
``"5"`` where the schema says integer stays a ``wrong_type``. Parallel calls match in any order.
The expected calls are made concrete for the reply (the matching acceptable value, else the
first one) and handed to :func:`harness.toolcalls.classify.classify`, which names the failure.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from harness.toolcalls.classify import CallFailure, CallVerdict, classify
from harness.toolcalls.live import ExpectedCall
from harness.toolcalls.model import Extraction, ToolCall
from harness.toolcalls.schema import Tools

MAX_PERMUTED = 6  # calls; beyond this only the order given is tried


def normalise(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        return " ".join(value.split()).casefold()
    if isinstance(value, list):
        return [normalise(v) for v in value]
    if isinstance(value, dict):
        return {str(k): normalise(v) for k, v in value.items()}
    return value


def _same_kind(a: Any, b: Any) -> bool:
    numbers = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool)
    if isinstance(a, numbers) or isinstance(b, numbers):
        return isinstance(a, numbers) and isinstance(b, numbers)
    return type(a) is type(b)


def acceptable(value: Any, choices: Sequence[Any]) -> bool:
    """Whether ``value`` equals one of ``choices`` after normalisation (and has its kind)."""
    wanted = normalise(value)
    return any(_same_kind(c, value) and normalise(c) == wanted for c in choices)


def concrete(expected: ExpectedCall, got: ToolCall | None) -> ToolCall:
    """The expected call written out for ``got``: each argument takes ``got``'s value when it
    is acceptable (so classify sees no difference), else the first acceptable value."""
    given = got.arguments if got is not None and isinstance(got.arguments, dict) else {}
    arguments: dict[str, Any] = {}
    for key, choices in expected.arguments.items():
        have = given.get(key)
        arguments[key] = have if key in given and acceptable(have, choices) else choices[0]
    for key, choices in expected.optional.items():
        if key in given:
            arguments[key] = given[key] if acceptable(given[key], choices) else choices[0]
    return ToolCall(expected.name, arguments)


def _pair_ok(expected: ExpectedCall, got: ToolCall, tools: Tools) -> bool:
    one = Extraction((got,), "")
    return classify([concrete(expected, got)], one, (), tools).failure is CallFailure.OK


def score(
    expected: Sequence[ExpectedCall],
    got: Extraction,
    markup: Sequence[str] = (),
    tools: Tools = None,
) -> CallVerdict:
    """One verdict for a reply: ``ok``, or the failure class with a one-line detail. Parallel
    calls are paired in the order that gets the most of them right."""
    calls = got.calls
    if len(calls) != len(expected) or not expected:
        written = [concrete(e, None) for e in expected]
        return classify(written, got, markup, tools)
    order = tuple(range(len(calls)))
    if 1 < len(calls) <= MAX_PERMUTED:
        right = {
            (i, j): _pair_ok(e, c, tools)
            for i, e in enumerate(expected)
            for j, c in enumerate(calls)
        }
        order = max(
            itertools.permutations(range(len(calls))),
            key=lambda o: sum(right[i, j] for i, j in enumerate(o)),
        )
    ordered = tuple(calls[j] for j in order)
    written = [concrete(e, c) for e, c in zip(expected, ordered, strict=True)]
    return classify(written, replace(got, calls=ordered), markup, tools)
