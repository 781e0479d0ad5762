"""Charts as inline SVG drawn by matplotlib, from numbers and the harness's own labels only.

No untrusted text reaches a chart: series are told apart by colour, and the HTML around the
chart (escaped by jinja2) names them. Text in the SVG stays ``<text>`` (``svg.fonttype:
none``, mathtext off); comments, the XML prolog and matplotlib's group ids are dropped, ids
that are referenced are salted per chart so several charts share a page, and the result is
checked against an allowlist of SVG elements (no script, no event attribute, no outside link)
before it is marked safe. Axis labels go through :func:`~harness.report.escape.visible` and the
HTML environment's ``finalize`` shows any acting character left in the SVG as an escape.
matplotlib is imported when a chart is drawn, not with the report.
"""

from __future__ import annotations

import io
import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from markupsafe import Markup

from harness.report.escape import visible

if TYPE_CHECKING:
    from matplotlib.axes import Axes as MplAxes
    from matplotlib.figure import Figure

# colour-blind friendly enough, and distinct on white; series beyond it go to the data table
PALETTE: tuple[str, ...] = (
    "#2563eb",
    "#dc2626",
    "#16a34a",
    "#d97706",
    "#7c3aed",
    "#0891b2",
    "#db2777",
    "#65a30d",
    "#475569",
    "#ea580c",
)
MAX_SERIES = len(PALETTE)
BASELINE_GREY = "#9ca3af"
SVG_NS = "{http://www.w3.org/2000/svg}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
ALLOWED = frozenset(
    {"svg", "defs", "style", "g", "path", "use", "clipPath", "rect", "text", "tspan", "polyline"}
)
RC: dict[str, object] = {
    "svg.fonttype": "none",  # text stays text: small, and nothing but our labels
    "text.parse_math": False,  # a "$" never starts mathtext
    "text.usetex": False,
    "font.size": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.color": "#e5e7eb",
    "axes.formatter.useoffset": False,
    "axes.formatter.use_mathtext": False,
}
MAX_TICKS = 12  # distinct x values up to this many are each a labelled tick


def _rc(overrides: dict[str, object]) -> Any:
    """matplotlib's settings for one chart (typed loosely: its stubs list every key)."""
    return {**RC, **overrides}


NO_METADATA = {"Date": None, "Creator": None, "Format": None, "Type": None}


class UnsafeChart(ValueError):
    """The SVG holds an element or attribute outside the allowlist (a bug, never shown)."""


@dataclass(frozen=True)
class Series:
    """One coloured line or set of dots; its name lives in the HTML legend, never here."""

    color: str
    xs: tuple[float, ...]
    ys: tuple[float, ...]
    line: bool = True
    dashed: bool = False


@dataclass(frozen=True)
class Guide:
    """A reference line from the harness itself: ``y = x``, ``y = 100``, an ideal curve."""

    xs: tuple[float, ...]
    ys: tuple[float, ...]


@dataclass(frozen=True)
class Axes:
    x_label: str  # the harness's own words, with the unit
    y_label: str
    log_x: bool = False
    y_from_zero: bool = True
    ticks_at_data: bool = False  # x is a swept parameter: one labelled tick per value
    wide_y_log: float = 30.0  # a log y axis once the largest y is this many times the smallest


def _finite(xs: Sequence[float], ys: Sequence[float]) -> tuple[list[float], list[float]]:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if math.isfinite(x) and math.isfinite(y)]
    return [x for x, _ in pairs], [y for _, y in pairs]


def xy_svg(
    series: Sequence[Series], axes: Axes, *, salt: str, guides: Sequence[Guide] = ()
) -> Markup:
    """Lines (or dots) of ``series`` over shared axes; ``guides`` dashed grey."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_rc({"svg.hashsalt": salt})):
        figure = Figure(figsize=(6.4, 3.4))
        ax = figure.add_subplot()
        for guide in guides:
            ax.plot(guide.xs, guide.ys, color=BASELINE_GREY, linestyle=":", linewidth=1.2)
        for s in series[:MAX_SERIES]:
            xs, ys = _finite(s.xs, s.ys)
            ax.plot(
                xs,
                ys,
                color=s.color,
                marker="o",
                markersize=4,
                linestyle=("--" if s.dashed else "-") if s.line else "none",
                linewidth=1.6,
            )
        if axes.log_x:
            ax.set_xscale("log", base=2)
        ys = [y for s in series[:MAX_SERIES] for y in s.ys if math.isfinite(y) and y > 0]
        if ys and max(ys) / min(ys) >= axes.wide_y_log:
            ax.set_yscale("log")  # 5 tok/s beside 1000 tok/s: both readable
            ax.yaxis.set_major_formatter(_plain_formatter())
            ax.yaxis.set_minor_formatter(_plain_formatter(minor=True))
        elif axes.y_from_zero:
            ax.set_ylim(bottom=0)
        if axes.ticks_at_data:
            _x_ticks(ax, sorted({x for s in series for x in s.xs if math.isfinite(x)}))
        elif axes.log_x:
            ax.xaxis.set_major_formatter(_plain_formatter())
        ax.set_xlabel(visible(axes.x_label))  # the harness's words; shown inert all the same
        ax.set_ylabel(visible(axes.y_label))
        figure.subplots_adjust(left=0.12, right=0.98, top=0.96, bottom=0.16)  # no tight_layout:
        # it draws the figure once more, and the labels here are short numbers
        return _svg(figure)


def _plain_formatter(*, minor: bool = False) -> Any:
    """Tick labels as plain numbers (``200``, ``0.5``), never mathtext powers of ten; a log
    axis's minor ticks labelled only at 2 and 5 times a power of ten."""
    from matplotlib.ticker import FuncFormatter

    def label(value: float, _position: object) -> str:
        if value <= 0 or not math.isfinite(value):
            return ""
        if minor and f"{value:.0e}"[0] not in "25":
            return ""
        return f"{value:g}"

    return FuncFormatter(label)


def _x_ticks(ax: MplAxes, xs: list[float]) -> None:
    """Ticks at the measured x values (plain numbers, never mathtext) when they are few."""
    from matplotlib.ticker import NullFormatter, NullLocator

    if not xs or len(xs) > MAX_TICKS:
        return
    labels = [str(int(x)) if float(x).is_integer() else f"{x:.2f}" for x in xs]
    ax.set_xticks(xs, labels)
    ax.xaxis.set_minor_locator(NullLocator())
    ax.xaxis.set_minor_formatter(NullFormatter())


def strip_svg(
    baseline: Sequence[float], current: Sequence[float], x_label: str, *, salt: str
) -> Markup:
    """Raw samples on two rows: baseline (grey, top) and current (blue), medians as bars."""
    from matplotlib import rc_context
    from matplotlib.figure import Figure

    with rc_context(_rc({"svg.hashsalt": salt, "axes.grid": False})):
        figure = Figure(figsize=(6.4, 1.5))  # the width of an xy chart: text the same size
        ax = figure.add_subplot()
        for row, values, color in ((1, baseline, BASELINE_GREY), (0, current, PALETTE[0])):
            xs, _ = _finite(values, values)
            ax.scatter(xs, [row] * len(xs), s=16, color=color, alpha=0.8, linewidths=0)
            if xs:
                middle = sorted(xs)[len(xs) // 2]
                ax.plot([middle, middle], [row - 0.3, row + 0.3], color=color, linewidth=2)
        ax.set_yticks([0, 1], ["current", "baseline"])
        ax.set_ylim(-0.6, 1.6)
        ax.spines["left"].set_visible(False)
        ax.set_xlabel(visible(x_label))
        figure.subplots_adjust(left=0.14, right=0.98, top=0.94, bottom=0.34)
        return _svg(figure)


GROUP_ID = re.compile(r'(<g) id="[^"]*"')
PROLOG = re.compile(r"\A.*?(?=<svg)", re.DOTALL)
COMMENT = re.compile(r"<!--.*?-->\s*", re.DOTALL)
SIZE = re.compile(r'(<svg[^>]*?) width="[^"]*" height="[^"]*"')


def _svg(figure: Figure) -> Markup:
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata=NO_METADATA)
    text = COMMENT.sub("", PROLOG.sub("", buffer.getvalue(), count=1))
    text = GROUP_ID.sub(r"\1", text)
    text = SIZE.sub(r'\1 class="chart-svg"', text, count=1)
    check_svg(text)
    return Markup(text.strip())  # checked against the allowlist just above


def check_svg(text: str) -> None:
    """Raise :class:`UnsafeChart` unless every element is allowed, no attribute is an event
    handler and every link points inside the document."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        raise UnsafeChart(f"chart SVG does not parse: {exc}") from exc
    for element in root.iter():
        tag = element.tag.removeprefix(SVG_NS)
        if tag not in ALLOWED:
            raise UnsafeChart(f"chart SVG holds a <{tag}> element")
        for name, value in element.attrib.items():
            local = name.rsplit("}", 1)[-1].lower()
            if local.startswith("on"):
                raise UnsafeChart(f"chart SVG holds an event attribute {local}")
            if local == "href" and not value.startswith("#"):
                raise UnsafeChart("chart SVG links outside itself")
            if "url(" in value and not re.fullmatch(r"url\(#[\w-]+\)", value.strip()):
                raise UnsafeChart("chart SVG refers to an outside URL")
