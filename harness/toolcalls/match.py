"""Score a parsed reply against BFCL-style expected calls, as structures, with classify's taxonomy.

Each argument has a list of acceptable values. A value matches one after normalisation
(:mod:`harness.toolcalls.values`, under a named :class:`StringMatch` mode): numbers by value
(1 == 1.0; a boolean is never a number), lists item by item and objects key by key. Types are
judged by the tool's schema as Python would (:mod:`harness.toolcalls.schema`): a ``"5"`` or a
``5.0`` where the schema says integer is a ``wrong_type``, and a parameter the schema requires
and the call lacks is ``missing_required``.

Parallel calls match in any order, for any number of calls: expected and returned calls are
paired as an assignment (:mod:`harness.toolcalls.assignment`) that gets the most calls right,
then pairs the rest by name and fewest differences, so a miss names the call and the argument
it is about. The expected calls are made concrete for the reply (the matching acceptable value,
else the first one) and handed to :func:`harness.toolcalls.classify.classify`, which names the
failure.

A tool text the parser could not read is a ``parse_error`` whatever the category: an
irrelevance prompt answered with a cut or malformed call did not abstain.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from harness.toolcalls.assignment import cheapest_assignment
from harness.toolcalls.classify import CallFailure, CallVerdict, classify, differences
from harness.toolcalls.live import ExpectedCall
from harness.toolcalls.model import Extraction, ToolCall
from harness.toolcalls.schema import Tools
from harness.toolcalls.values import StringMatch, acceptable


def concrete(
    expected: ExpectedCall, got: ToolCall | None, strings: StringMatch = StringMatch.STRICT
) -> ToolCall:
    """The expected call written out for ``got``: each argument takes ``got``'s value when it
    is acceptable (so classify sees no difference), else the first acceptable value."""
    given = got.arguments if got is not None and isinstance(got.arguments, dict) else {}
    arguments: dict[str, Any] = {}
    for key, choices in expected.arguments.items():
        have = given.get(key)
        arguments[key] = have if key in given and acceptable(have, choices, strings) else choices[0]
    for key, choices in expected.optional.items():
        if key in given:
            right = acceptable(given[key], choices, strings)
            arguments[key] = given[key] if right else choices[0]
    return ToolCall(expected.name, arguments)


@dataclass(frozen=True)
class _Fit:
    """How well one returned call fits one expected call, criteria in rank order."""

    wrong: int  # 1 when the pair has any difference
    wrong_name: int
    differences: int


def _fit(expected: ExpectedCall, got: ToolCall, tools: Tools, strings: StringMatch) -> _Fit:
    found = differences(concrete(expected, got, strings), got, tools, schema_required=True)
    wrong_name = any(v.failure is CallFailure.WRONG_NAME for v in found)
    return _Fit(int(bool(found)), int(wrong_name), len(found))


def pairing(
    expected: Sequence[ExpectedCall],
    calls: Sequence[ToolCall],
    tools: Tools = None,
    strings: StringMatch = StringMatch.STRICT,
) -> tuple[int, ...]:
    """For each expected call, the index of the returned call it is judged against (as many
    of each). The pairing gets the most calls right; then the fewest pairs with different
    names; then the fewest differences; then keeps the order given wherever that costs nothing.
    """
    n = len(expected)
    if len(calls) != n:
        raise ValueError(f"{n} expected calls, {len(calls)} returned: nothing to pair")
    fits = [[_fit(e, c, tools, strings) for c in calls] for e in expected]
    # One integer per pair, criteria as digits of a mixed radix: each base exceeds the largest
    # sum of the criterion below over n pairs, so the summed cost ranks assignments by the
    # first criterion, then the next, exactly.
    most = max((f.differences for row in fits for f in row), default=0)
    displaced_base = n + 1
    differences_base = n * most + 1
    name_base = n + 1

    def cost(i: int, j: int) -> int:
        f = fits[i][j]
        ranked = (f.wrong * name_base + f.wrong_name) * differences_base + f.differences
        return ranked * displaced_base + int(i != j)

    return cheapest_assignment([[cost(i, j) for j in range(n)] for i in range(n)])


def _unparsed(expected: Sequence[ExpectedCall], got: Extraction) -> CallVerdict:
    failed = len(got.errors)
    return CallVerdict(
        CallFailure.PARSE_ERROR,
        f"{failed} tool text{'s' if failed > 1 else ''} failed to parse; "
        f"{len(got.calls)}/{len(expected)} calls ({got.errors[0]})",
    )


def score(
    expected: Sequence[ExpectedCall],
    got: Extraction,
    markup: Sequence[str] = (),
    tools: Tools = None,
    strings: StringMatch = StringMatch.STRICT,
) -> CallVerdict:
    """One verdict for a reply: ``ok``, or the failure class with a one-line detail. Parallel
    calls are paired by :func:`pairing`; a tool text that failed to parse fails the reply."""
    if got.errors and not got.crash:
        return _unparsed(expected, got)
    calls = got.calls
    if len(calls) != len(expected) or not expected:
        written = [concrete(e, None, strings) for e in expected]
        return classify(written, got, markup, tools, schema_required=True)
    order = pairing(expected, calls, tools, strings)
    ordered = tuple(calls[j] for j in order)
    written = [concrete(e, c, strings) for e, c in zip(expected, ordered, strict=True)]
    return classify(written, replace(got, calls=ordered), markup, tools, schema_required=True)
