"""What a ``select:`` entry expanded to, as lines for ``mlx-harness validate``."""

from __future__ import annotations

from harness.spec.loaded import Chosen, Selection
from harness.spec.sizes import format_size


def summary_line(selection: Selection) -> str:
    """``file:line:col: select chose 3 of 15: a, b, c``."""
    total = len(selection.chosen) + len(selection.left_out)
    names = ", ".join(c.name for c in selection.chosen)
    return f"{selection.where}: select chose {len(selection.chosen)} of {total}" + (
        f": {names}" if names else ""
    )


def detail_lines(selection: Selection) -> list[str]:
    """One line per candidate: ``+`` chosen (with what the probe found), ``-`` left out (why)."""
    width = max((len(n) for n in _names(selection)), default=0)
    lines = [f"{selection.where}: select chose {len(selection.chosen)} of {_total(selection)}"]
    lines.extend(
        f"  + {c.name:<{width}}  {c.source.value:<8}  {_facts(c)}" for c in selection.chosen
    )
    lines.extend(
        f"  - {o.name:<{width}}  {o.source.value:<8}  {o.reason}" for o in selection.left_out
    )
    return lines


def _names(selection: Selection) -> list[str]:
    return [c.name for c in selection.chosen] + [o.name for o in selection.left_out]


def _total(selection: Selection) -> int:
    return len(selection.chosen) + len(selection.left_out)


def _facts(chosen: Chosen) -> str:
    facts = chosen.facts
    bits = f"{facts.bits:g}-bit" if facts.bits is not None else "?-bit"
    size = format_size(facts.weights_bytes) if facts.weights_bytes is not None else "size ?"
    caps = ",".join(sorted(c.value for c in facts.capabilities)) or "-"
    return f"{facts.family or '?':<12}  {chosen.backend:<9}  {bits:>6}  {size:>8}  {caps}"
