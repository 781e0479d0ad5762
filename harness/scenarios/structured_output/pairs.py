"""``structured_output``'s side-by-side requests: one schema's prompt answered with the
constraint and without it, one after the other (the order alternating), and what the pair
says: the constrained answer's verdict, what the server did with ``response_format`` (over
HTTP), and the constraint's cost.

Speed, with throughput's definitions: time to first token (the call to the first token: the
constraint's compiling and first mask included), decode tok/s = (tokens - 1) / (last token -
first token); cost = the unconstrained decode tok/s / the constrained one (the time a
constrained token takes, in unconstrained tokens: 1 costs nothing, above 1 slows decoding).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from harness.core.visible_text import visible
from harness.scenarios.structured_output.cases import SchemaCase
from harness.scenarios.structured_output.verdicts import Honour, Judged, Verdict, honour, judge

EXCERPT_CHARS = 80


@dataclass(frozen=True)
class Answer:
    """One request's answer: its text, tokens, whether ``max_tokens`` cut it, and its timing
    (seconds since the call; NaN where it cannot be told). Over HTTP ``status`` is the answer's
    HTTP status and ``failure`` why it gave no answer (one line; None: it did)."""

    text: str
    tokens: int
    cut: bool
    ttft_s: float
    decode_tps: float
    status: int | None = None
    failure: str | None = None
    out_of_time: bool = False  # cut because the case's time limit came first

    @property
    def rejected(self) -> bool:
        return self.status is not None and 400 <= self.status < 500


@dataclass(frozen=True)
class Pair:
    """One schema's two requests. ``judged`` is None when the server rejected the constraint
    (there is no answer to judge); ``served`` says whether the answers came over HTTP (only
    there can the parameter be ignored or rejected)."""

    case: SchemaCase
    constrained: Answer
    unconstrained: Answer
    judged: Judged | None
    served: bool

    @property
    def honour(self) -> Honour | None:
        """What the server did with ``response_format`` (None: in process)."""
        if not self.served:
            return None
        verdict = self.judged or Judged(Verdict.NOT_JSON, None)
        return honour(
            self.constrained.status, self.constrained.text, self.unconstrained.text, verdict
        )

    @property
    def cost_x(self) -> float:
        constrained, free = self.constrained.decode_tps, self.unconstrained.decode_tps
        if not (constrained > 0 and free > 0):
            return math.nan
        return free / constrained

    def excerpt(self) -> str:
        """The constrained answer, escaped and cut (model output is untrusted)."""
        return f'"{visible(self.constrained.text, EXCERPT_CHARS)}"'

    def record(self) -> dict[str, object]:
        """The pair in the record: the verdicts and both texts (raw: escaped where shown)."""
        honoured = self.honour
        return {
            "schema": self.case.name,
            "verdict": self.judged.verdict.value if self.judged else None,
            "parsed": self.judged.verdict.parsed if self.judged else None,
            "conforms": self.judged.verdict.conforms if self.judged else None,
            "correct": self.judged.correct if self.judged else None,
            "why": self.judged.why if self.judged else self.constrained.failure,
            "honour": honoured.value if honoured else None,
            "text": self.constrained.text,
            "tokens": self.constrained.tokens,
            "unconstrained_text": self.unconstrained.text,
            "unconstrained_tokens": self.unconstrained.tokens,
        }


def pair(
    case: SchemaCase,
    constrained: Callable[[], Answer],
    unconstrained: Callable[[], Answer],
    *,
    constrained_first: bool,
    served: bool,
) -> Pair:
    """Both requests of ``case`` in the given order, the constrained answer judged."""
    if constrained_first:
        with_it = constrained()
        without = unconstrained()
    else:
        without = unconstrained()
        with_it = constrained()
    judged = None
    if not with_it.rejected and with_it.failure is None:
        judged = judge(with_it.text, case.json_schema, case.reference, with_it.cut)
    return Pair(case, with_it, without, judged, served)
