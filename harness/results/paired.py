"""Per-item quality metrics compared item by item: pairs matched by id, Wilcoxon signed-rank.

WER per clip or perplexity per text chunk come from greedy decoding, which repeats identically,
so repeats say nothing about noise; what varies is the item. Two runs that scored the same items
pair them: each item is its own control, and the test asks whether the differences (current -
baseline) lean one way. The rule (:func:`decide_paired`):

- the item ids of the two runs differ (other clips, another text): ``not comparable``, naming them;
- every item scored the same: ``unchanged`` (a rerun of a greedy model), never inconclusive;
- the change is under the minimum effect: ``unchanged``;
- too few items differ for the test to reach alpha at all (fewer than 6 at 0.05): ``inconclusive``
  (more items would decide, not more repeats);
- otherwise ``regressed`` / ``improved`` when p < alpha, else ``inconclusive`` with the p.

The change is relative, of the mean over the items (the figure a corpus rate moves with); the
median of the differences is kept beside it in the metric's unit.
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.core.types import JSONValue, Verdict
from harness.results.significance import ALPHA, relative_change
from harness.results.stats import signed_rank_min_p, signed_rank_needed, wilcoxon_signed_rank

SHOWN_IDS = 3  # item ids named in a "not comparable" reason, a side


@dataclass(frozen=True)
class PairedSummary:
    """What the paired test saw: the items, how many differ, and by how much."""

    items: int  # pairs matched by item id
    differing: int  # pairs whose values differ (the ones the test ranks)
    median_difference: float  # median of current - baseline over the pairs, in the metric's unit
    mean_difference: float  # mean of current - baseline, in the metric's unit

    @property
    def text(self) -> str:
        """``8 items (8 differ), median difference +0.32``."""
        return (
            f"{self.items} items ({self.differing} differ), "
            f"median difference {self.median_difference:+.4g}"
        )


@dataclass(frozen=True)
class PairedDecision:
    verdict: Verdict  # REGRESSED, IMPROVED, UNCHANGED, INCONCLUSIVE or NOT_COMPARABLE
    change: float  # relative change of the mean over the items; nan when not paired
    p_value: float | None  # None when no test was run
    note: str  # why, for people
    summary: PairedSummary | None = None  # None when the items could not be paired


def item_ids(artifacts: Mapping[str, JSONValue], count: int) -> tuple[str, ...]:
    """Ids of a case's ``count`` items: the ``id`` of each row of its ``items`` artifact when
    there is one per sample (speech_to_text's clips), else their positions ``#1``.. (quality's
    text chunks, made from the same text in the same order)."""
    rows = artifacts.get("items")
    if isinstance(rows, list) and len(rows) == count:
        ids = [row.get("id") if isinstance(row, dict) else None for row in rows]
        if all(isinstance(i, str | int) for i in ids):
            return tuple(str(i) for i in ids)
    return tuple(f"#{i + 1}" for i in range(count))


def _differ_reason(base_ids: Sequence[str], cur_ids: Sequence[str]) -> str | None:
    for side, ids in (("baseline", base_ids), ("current", cur_ids)):
        repeated = sorted(i for i, n in Counter(ids).items() if n > 1)
        if repeated:
            return f"items not paired: the {side} names item {repeated[0]!r} twice"
    base_set, cur_set = set(base_ids), set(cur_ids)
    only_base = [i for i in base_ids if i not in cur_set]
    only_cur = [i for i in cur_ids if i not in base_set]
    if not only_base and not only_cur:
        return None

    def named(ids: list[str]) -> str:
        more = f" and {len(ids) - SHOWN_IDS} more" if len(ids) > SHOWN_IDS else ""
        return ", ".join(ids[:SHOWN_IDS]) + more

    parts = [
        f"{len(ids)} only in the {side} ({named(ids)})"
        for side, ids in (("baseline", only_base), ("current", only_cur))
        if ids
    ]
    return f"items differ ({len(base_ids)} -> {len(cur_ids)}): " + "; ".join(parts)


def pair(
    base_ids: Sequence[str],
    baseline: Sequence[float],
    cur_ids: Sequence[str],
    current: Sequence[float],
) -> list[tuple[float, float]] | str:
    """(baseline, current) value pairs in the baseline's item order, or why they do not pair."""
    reason = _differ_reason(base_ids, cur_ids)
    if reason is not None:
        return reason
    by_id = dict(zip(cur_ids, current, strict=True))
    return [(b, by_id[i]) for i, b in zip(base_ids, baseline, strict=True)]


def decide_paired(
    base_ids: Sequence[str],
    baseline: Sequence[float],
    cur_ids: Sequence[str],
    current: Sequence[float],
    *,
    higher_is_better: bool,
    effect: float,
    alpha: float = ALPHA,
) -> PairedDecision:
    """Judge the per-item change from ``baseline`` to ``current`` against ``effect`` (relative)."""
    pairs = pair(base_ids, baseline, cur_ids, current)
    if isinstance(pairs, str):
        return PairedDecision(Verdict.NOT_COMPARABLE, math.nan, None, pairs)
    if not pairs:
        return PairedDecision(Verdict.INCONCLUSIVE, math.nan, None, "no items to compare")
    if any(not math.isfinite(v) for p in pairs for v in p):
        return PairedDecision(
            Verdict.INCONCLUSIVE, math.nan, None, "an item is not a finite number"
        )
    differences = [c - b for b, c in pairs]
    differing = sum(1 for d in differences if d != 0)
    summary = PairedSummary(
        len(pairs), differing, statistics.median(differences), statistics.fmean(differences)
    )
    change = relative_change(
        statistics.fmean(b for b, _ in pairs), statistics.fmean(c for _, c in pairs)
    )
    if differing == 0:
        note = f"identical on all {len(pairs)} items"
        return PairedDecision(Verdict.UNCHANGED, change, None, note, summary)
    p_value = wilcoxon_signed_rank(differences)
    better = change > 0 if higher_is_better else change < 0
    moved = Verdict.IMPROVED if better else Verdict.REGRESSED
    tested = f"Wilcoxon p={p_value:.3g} over {summary.text}"
    if abs(change) < effect:
        note = f"{tested}; under the {effect:.0%} minimum effect"
        return PairedDecision(Verdict.UNCHANGED, change, p_value, note, summary)
    if signed_rank_min_p(differing) >= alpha:
        needed = signed_rank_needed(alpha)
        note = (
            f"{differing} of {len(pairs)} items differ; the paired test needs >= {needed} "
            f"differing items to decide at alpha {alpha:g} (more items, not more repeats)"
        )
        return PairedDecision(Verdict.INCONCLUSIVE, change, p_value, note, summary)
    if p_value < alpha:
        note = f"{tested}, minimum effect {effect:.0%}"
        return PairedDecision(moved, change, p_value, note, summary)
    note = f"{tested}; not significant at alpha {alpha:g}"
    return PairedDecision(Verdict.INCONCLUSIVE, change, p_value, note, summary)
