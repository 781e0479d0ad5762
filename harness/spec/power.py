"""Whether a suite's ``repeats`` let a comparison decide: warnings at validate time.

With 3 samples a side the smallest two-sided Mann-Whitney p is 0.1, so no change in a timing can
be significant at alpha 0.05, and every comparison of such a suite (``compare``, ``--baseline``,
relative gates) ends "inconclusive". Only scenarios that declare clock-measured metrics (seconds,
tokens per second) sampled once per repeat are checked: counted metrics (bytes, counts, shares)
do not need repeats, and ``load`` takes its samples from ``reloads``.
"""

from __future__ import annotations

from harness.core.types import Unit
from harness.results.significance import ALPHA
from harness.results.stats import needed_n
from harness.scenarios import SCENARIOS
from harness.spec.errors import SuiteError
from harness.spec.loaded import LoadedSuite
from harness.spec.repeats import least

CLOCK_UNITS = frozenset({Unit.SECONDS, Unit.TOKENS_PER_SECOND})


def _timed(name: str) -> bool:
    """Whether scenario ``name`` takes a sample per repeat of a metric read from a clock.

    A scenario whose samples do not come from ``repeats`` declares ``repeats_apply = False``
    (``load``: its samples come from ``reloads``); unknown names: no.
    """

    if name not in SCENARIOS:
        return False
    scenario = SCENARIOS.get(name)
    if not scenario.repeats_apply:
        return False
    return any(spec.unit in CLOCK_UNITS for spec in scenario.metrics)


def repeat_warnings(loaded: LoadedSuite, *, alpha: float = ALPHA) -> tuple[SuiteError, ...]:
    """One warning per ``repeats`` (the defaults' or a scenario's own) that leaves the timings
    of the scenarios using it unable to show a significant change at ``alpha``."""
    needed = needed_n(alpha)
    suite, located, path = loaded.suite, loaded.located, str(loaded.path)
    fix = f"set repeats: {needed} or more so compare and relative gates can decide"
    found: dict[tuple[int, int], SuiteError] = {}
    for i, entry in enumerate(suite.scenarios):
        if not _timed(entry.scenario):
            continue
        repeats = least(entry.repeats or suite.defaults.repeats)  # auto: its min
        if repeats >= needed:
            continue
        if entry.repeats is not None:
            where: tuple[str | int, ...] = ("scenarios", i, "repeats")
            written = f"repeats: {repeats}"
        elif ("defaults", "repeats") in located.keys:
            where, written = ("defaults", "repeats"), f"repeats: {repeats}"
        else:
            where, written = ("defaults",), f"repeats: {repeats} (the default)"
        hint = fix if where != ("defaults",) else f"add 'defaults: {{repeats: {needed}}}'"
        line, column = located.position(where, prefer_key=True)
        found.setdefault(
            (line, column),
            SuiteError(
                path,
                line,
                column,
                f"{written} cannot show a significant change (needs >= {needed} a side)",
                hint,
            ),
        )
    return tuple(found.values())
