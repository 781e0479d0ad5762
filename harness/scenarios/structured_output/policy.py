"""``structured_output``'s failures: what fails the case and what skips it.

In process, constrained output that is not conforming JSON (and not cut by ``max_tokens``) is
a broken constraint: it fails the case. Over HTTP, ``require`` decides: ``honoured`` fails on
an ignored or a rejected ``response_format``, ``not_ignored`` on an ignored one (a server that
rejects every request is a ``capability_missing`` skip with its message), ``nothing`` never.
Each failure is one line naming the engine, with an escaped excerpt of the first answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum

from harness.probe.types import ReasonCode
from harness.scenarios.structured_output.pairs import Pair
from harness.scenarios.structured_output.verdicts import Honour, Verdict


class Require(str, Enum):
    """What a server must do with ``response_format`` for the case to pass."""

    HONOURED = "honoured"  # ignoring or rejecting it fails the case
    NOT_IGNORED = "not_ignored"  # rejecting every request skips the case; ignoring fails it
    NOTHING = "nothing"  # verdicts recorded; none fails the case


def failures_and_skip(
    engine: str, served: bool, require: Require, pairs: Sequence[Pair]
) -> tuple[tuple[str, ...], str | None]:
    """(failures, skip reason) of the case's pairs, warm-ups included."""
    if not served:
        broken = [p for p in pairs if p.judged and p.judged.verdict in _BROKEN]
        if not broken:
            return (), None
        first = broken[0]
        assert first.judged is not None
        return (
            f"{engine}: constrained decoding gave {first.judged.verdict.value} "
            f"output in {len(broken)} of {len(pairs)} requests; first {first.case.name}: "
            f"{first.judged.why}: {first.excerpt()}",
        ), None
    if require is Require.NOTHING:
        return (), None
    failures: list[str] = []
    ignored = [p for p in pairs if p.honour is Honour.IGNORED]
    rejected = [p for p in pairs if p.honour is Honour.REJECTED]
    if ignored:
        first = ignored[0]
        why = first.judged.why if first.judged else ""
        failures.append(
            f"{engine} ignored response_format (json_schema) in {len(ignored)} of "
            f"{len(pairs)} requests; first {first.case.name}: {why}: {first.excerpt()}"
        )
    message = rejected[0].constrained.failure if rejected else None
    if rejected and require is Require.HONOURED:
        failures.append(
            f"{engine} rejected response_format (json_schema) in {len(rejected)} of "
            f"{len(pairs)} requests: {message}"
        )
    skip = None
    if rejected and len(rejected) == len(pairs):
        skip = (
            f"{ReasonCode.CAPABILITY_MISSING.value}: {engine} rejects "
            f"response_format (json_schema): {message}"
        )
    return tuple(failures), skip


_BROKEN = (Verdict.NONCONFORMING, Verdict.NOT_JSON)
