"""The one invalid-value error every layer may raise from a pydantic validator (suite fields,
scenario params): its one line and its fix, which the suite checks print as
``FILE:LINE:COL: <message>; <hint>`` (``harness.spec.errors.describe_value``)."""

from __future__ import annotations

from pydantic_core import PydanticCustomError

SUITE_VALUE = "suite_value"


def value_error(message: str, hint: str) -> PydanticCustomError:
    """A validation error whose one line is ``message`` and whose fix is ``hint``."""
    return PydanticCustomError(SUITE_VALUE, "{message}", {"message": message, "hint": hint})
