"""``structured_output``'s verdicts, on data: what one answer is against its schema and
reference (:func:`judge`), and what a server did with ``response_format`` (:func:`honour`).

One answer's :class:`Verdict`, from best to worst:

- ``correct``: JSON that conforms to the schema, and each reference field has the reference's
  value (strings compared without case or surrounding spaces, lists of scalars in any order);
- ``conforms``: conforms, but a reference value differs (or there is no reference);
- ``nonconforming``: JSON, but the schema refuses it (a missing ``required`` field, a value out
  of range, ...): an empty object ``{}`` is this whenever the schema requires a field;
- ``truncated``: not JSON, and generation stopped at ``max_tokens`` (cut, not broken);
- ``not_json``: not JSON, though generation ended on its own.

What a server did with the parameter (:class:`Honour`): ``rejected`` (it answered 4xx: its
message is kept), ``ignored`` (the constrained answer is the unconstrained one word for word
while it does not conform, or it does not conform though the server ended it itself), else
``honoured``. A conforming answer that happens to equal the unconstrained one is ``honoured``
(the model answered JSON unasked: nothing shows the constraint was dropped).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Verdict(str, Enum):
    CORRECT = "correct"
    CONFORMS = "conforms"
    NONCONFORMING = "nonconforming"
    TRUNCATED = "truncated"
    NOT_JSON = "not_json"

    @property
    def parsed(self) -> bool:
        return self in (Verdict.CORRECT, Verdict.CONFORMS, Verdict.NONCONFORMING)

    @property
    def conforms(self) -> bool:
        return self in (Verdict.CORRECT, Verdict.CONFORMS)


class Honour(str, Enum):
    HONOURED = "honoured"
    REJECTED = "rejected"
    IGNORED = "ignored"


@dataclass(frozen=True)
class Judged:
    """One answer judged: its verdict, whether its reference was checked (None: no
    reference, or the answer does not conform), and why it is not better (one line; empty for
    ``correct``)."""

    verdict: Verdict
    correct: bool | None
    why: str = ""


def _same(expected: Any, got: Any) -> bool:
    """Reference value against answer value: strings without case or surrounding spaces,
    numbers by value (never a bool for a number), lists of scalars in any order."""
    if isinstance(expected, bool) or isinstance(got, bool):
        return isinstance(expected, bool) and isinstance(got, bool) and expected == got
    if isinstance(expected, str):
        return isinstance(got, str) and expected.strip().casefold() == got.strip().casefold()
    if isinstance(expected, int | float):
        return isinstance(got, int | float) and math.isclose(expected, got)
    if isinstance(expected, Mapping):
        return isinstance(got, Mapping) and all(
            k in got and _same(v, got[k]) for k, v in expected.items()
        )
    if isinstance(expected, list):
        if not isinstance(got, list) or len(got) != len(expected):
            return False
        if all(isinstance(v, str | int | float) for v in expected + got):
            left = sorted(expected, key=_scalar_key)
            right = sorted(got, key=_scalar_key)
            return all(_same(a, b) for a, b in zip(left, right, strict=True))
        return all(_same(a, b) for a, b in zip(expected, got, strict=True))
    return bool(expected == got)


def _scalar_key(value: str | float) -> tuple[bool, str]:
    """Sorts strings (without case) after numbers (by value)."""
    if isinstance(value, str):
        return (True, value.strip().casefold())
    return (False, f"{float(value):024.9f}")


def wrong_fields(reference: Mapping[str, Any], answer: Any) -> list[str]:
    """The reference's fields the answer lacks or gives another value (an empty object
    lacks them all)."""
    if not isinstance(answer, Mapping):
        return list(reference)
    return [k for k, v in reference.items() if k not in answer or not _same(v, answer[k])]


def judge(
    text: str, schema: Mapping[str, Any], reference: Mapping[str, Any] | None, cut: bool
) -> Judged:
    """The verdict on ``text`` (``cut``: generation stopped at ``max_tokens``)."""
    from jsonschema import exceptions, validators

    try:
        answer = json.loads(text)
    except ValueError as exc:
        if cut:
            return Judged(Verdict.TRUNCATED, None, f"cut at max_tokens: {exc}")
        return Judged(Verdict.NOT_JSON, None, f"not JSON: {exc}")
    validator = validators.validator_for(schema)(schema)
    error = exceptions.best_match(validator.iter_errors(answer))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return Judged(Verdict.NONCONFORMING, None, f"at {where}: {error.message}")
    if reference is None:
        return Judged(Verdict.CONFORMS, None)
    wrong = wrong_fields(reference, answer)
    if wrong:
        return Judged(Verdict.CONFORMS, False, f"wrong: {', '.join(wrong)}")
    return Judged(Verdict.CORRECT, True)


def honour(
    status: int | None, constrained: str, unconstrained: str | None, judged: Judged
) -> Honour:
    """What the server did with ``response_format``: ``status`` and text of the constrained
    request, the text of the same request without it (None: not asked), and the constrained
    answer's verdict."""
    if status is not None and 400 <= status < 500:
        return Honour.REJECTED
    if judged.verdict.conforms or judged.verdict is Verdict.TRUNCATED:
        if judged.verdict is Verdict.TRUNCATED and constrained == unconstrained:
            return Honour.IGNORED  # cut where the unconstrained answer is cut: nothing changed
        return Honour.HONOURED
    return Honour.IGNORED
