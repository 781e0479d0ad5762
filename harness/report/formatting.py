"""Numbers, statuses and parameter points as short strings for people.

Precision rules: tokens per second with one decimal (k tok/s from 10,000 up); seconds in ms
below one second, and in a column that also holds values under 0.1 s;
bytes in MiB (one decimal) or GiB (two decimals). A value that is missing or not finite is
shown as an em dash.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

from harness.core.types import Status, Unit

MISSING = "—"
KIB = 1024
MIB = 1024**2
GIB = 1024**3

# worst first: the matrix shows the worst status of a cell
SEVERITY: tuple[Status, ...] = (
    Status.CRASHED,
    Status.INTERRUPTED,
    Status.TIMED_OUT,
    Status.ERRORED,
    Status.FAILED,
    Status.XPASSED,
    Status.XFAILED,
    Status.SKIPPED,
    Status.PASSED,
)

STATUS_SYMBOLS: Mapping[Status, str] = MappingProxyType(
    {
        Status.PASSED: "✅",
        Status.FAILED: "❌",
        Status.SKIPPED: "⏭",
        Status.XFAILED: "⚠",
        Status.XPASSED: "❗",
        Status.ERRORED: "⛔",
        Status.CRASHED: "💥",
        Status.TIMED_OUT: "⏱",
        Status.INTERRUPTED: "✋",
    }
)

# parameters that llama-bench abbreviates: prompt processing and text generation sizes
PARAM_ABBREVIATIONS: tuple[tuple[str, str], ...] = (("prompt_tokens", "pp"), ("gen_tokens", "tg"))


def status_label(status: Status) -> str:
    """Symbol and word, e.g. ``"❌ failed"``."""
    return f"{STATUS_SYMBOLS[status]} {status.value}"


def status_css(status: Status) -> str:
    return f"st-{status.value.replace('_', '-')}"


def worst_status(statuses: Iterable[Status]) -> Status:
    present = set(statuses)
    return next((s for s in SEVERITY if s in present), Status.PASSED)


def status_order(status: Status) -> int:
    """Position in the order reports list statuses in (passed first, crashed last)."""
    return len(SEVERITY) - 1 - SEVERITY.index(status)


@dataclass(frozen=True)
class Scale:
    """How one column (or one value) of a unit is shown: divide, round, name the unit."""

    divisor: float
    decimals: int | None  # None: chosen per value (more decimals for small numbers)
    label: str  # unit as shown: "tok/s", "ms", "MiB", ...
    suffix_space: bool = True  # "12.5 ms" but "2.35x"

    def number(self, value: float) -> str:
        scaled = value / self.divisor
        decimals = self.decimals if self.decimals is not None else _auto_decimals(scaled)
        return f"{scaled:.{decimals}f}"

    def spread(self, value: float, like: float) -> str:
        """``value`` (a stddev) with the decimals of ``like`` (its median), or up to two more
        when that would round a non-zero spread to zero."""
        scaled, reference = value / self.divisor, like / self.divisor
        decimals = self.decimals if self.decimals is not None else _auto_decimals(reference)
        for extra in range(3):
            if scaled == 0 or round(scaled, decimals + extra) != 0:
                return f"{scaled:.{decimals + extra}f}"
        return f"{scaled:.{decimals + 2}f}"

    def with_unit(self, text: str) -> str:
        return f"{text}{' ' if self.suffix_space else ''}{self.label}"


def _auto_decimals(value: float) -> int:
    magnitude = abs(value)
    if magnitude == 0 or magnitude >= 100:
        return 0
    if magnitude >= 10:
        return 1
    return 2


NO_CLEAN_RUN = "no clean run"  # every run of a series was measured on a dirty machine


def figure(value: float | None, missing: str = MISSING) -> str:
    """``value`` to 4 significant digits, or ``missing`` where there is no number (never
    ``nan``: a history whose every run was flagged has no level)."""
    if value is None or not math.isfinite(value):
        return missing
    return f"{value:.4g}"


def finite(values: Iterable[float | None]) -> list[float]:
    return [float(v) for v in values if v is not None and math.isfinite(v)]


def choose_scale(unit: Unit, values: Iterable[float | None]) -> Scale:
    """The scale for ``values`` of ``unit`` shown together (one column shares one unit)."""
    magnitudes = [abs(v) for v in finite(values)]
    largest = max(magnitudes, default=0.0)
    smallest = min((v for v in magnitudes if v > 0), default=0.0)
    if unit is Unit.TOKENS_PER_SECOND:
        if smallest >= 10_000:
            return Scale(1e3, 1, "k tok/s")
        return Scale(1.0, 1, "tok/s")
    if unit is Unit.REQUESTS_PER_SECOND:
        return Scale(1.0, 2, "req/s")
    if unit is Unit.SECONDS:
        # seconds only when every value reads in them: 1 ms beside 1.4 s is "1.00" and "1390"
        # in ms, never "0.00" in s
        if largest < 1.0 or smallest < 0.1:
            return Scale(1e-3, None, "ms")
        return Scale(1.0, 2 if largest < 100 else 1, "s")
    if unit is Unit.BYTES:
        if largest >= GIB:
            return Scale(GIB, 2, "GiB")
        if largest >= MIB or largest == 0:
            return Scale(MIB, 1, "MiB")
        if largest >= KIB:
            return Scale(KIB, 1, "KiB")
        return Scale(1.0, 0, "B")
    if unit is Unit.RATIO:
        return Scale(1.0, 2, "x", suffix_space=False)
    if unit is Unit.TOKENS:
        return Scale(1.0, 0 if all(v.is_integer() for v in magnitudes) else 1, "tokens")
    decimals = 0 if all(v.is_integer() for v in magnitudes) else None
    return Scale(1.0, decimals, "")


def format_value(value: float | None, unit: Unit) -> str:
    """One value with its unit: ``412.3 tok/s``, ``12.5 ms``, ``1.50 GiB``, ``—`` if missing."""
    if value is None or not math.isfinite(value):
        return MISSING
    scale = choose_scale(unit, [value])
    text = scale.number(value)
    return scale.with_unit(text) if scale.label else text


def format_stat(median: float, stddev: float, n: int, scale: Scale) -> str:
    """``median ± stddev`` in ``scale`` (no unit); the spread is left out for one sample."""
    if n == 0 or not math.isfinite(median):
        return MISSING
    text = scale.number(median)
    if n > 1 and math.isfinite(stddev):
        text += f" ± {scale.spread(stddev, median)}"
    return text


def gib(value: int | float) -> str:
    """Bytes as GiB with one decimal, e.g. RAM size ``64.0 GiB``."""
    return f"{value / GIB:.1f} GiB" if value else MISSING


def params_label(point: Mapping[str, object], params: Mapping[str, object]) -> str:
    """llama-bench style label: ``pp128 tg32`` for token sizes, ``k=v`` for other swept values.

    Token sizes are taken from ``params`` too (they matter even when not swept); any other
    parameter shows only when it is part of the swept point.
    """
    parts: list[str] = []
    abbreviated = {key for key, _ in PARAM_ABBREVIATIONS}
    for key, short in PARAM_ABBREVIATIONS:
        value = point.get(key, params.get(key))
        if value is not None:
            parts.append(f"{short}{value}")
    parts.extend(f"{key}={value}" for key, value in point.items() if key not in abbreviated)
    return " ".join(parts) or MISSING
