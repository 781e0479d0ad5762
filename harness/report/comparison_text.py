"""Terminal lines for a comparison with a baseline, and for the gates a run did not evaluate.

Plain text for the end of a run (pytest's terminal summary, ``mlx-harness run``, ``compare``):
the verdict counts, then the worst changes (newly failing, regressed, not comparable, then
inconclusive; the largest change first), at most ``shown`` lines of each kind with the metric, its
change and the reason, then one line saying how many more there are and where every one is
listed (a nightly of thousands of cases stays a screenful); the same for named checks whose
verdict got worse, undecided or fixed (``check newly_failing: CASE: concurrent: pass -> FAIL
(...)``); then every gate. Names and reasons are
untrusted: :func:`plain` folds line breaks and shows control and bidi characters as escapes.
"""

from __future__ import annotations

import math
from collections import Counter

from harness.core.types import RunRecord, Verdict
from harness.report.comparison import VERDICT_ORDER, more_samples
from harness.report.escape import plain
from harness.results.compare import CaseDelta, Comparison, Method, MetricDelta

SHOWN = (Verdict.NEWLY_FAILING, Verdict.REGRESSED, Verdict.NOT_COMPARABLE, Verdict.INCONCLUSIVE)
# the named checks a line each: those that got worse or can no longer be told, and the fixed
CHECKS_SHOWN = (Verdict.NEWLY_FAILING, Verdict.REGRESSED, Verdict.INCONCLUSIVE, Verdict.FIXED)
REASON_LIMIT = 200  # characters of a case's reason on its line
WORST_SHOWN = 10  # changed cases (and checks, and output changes) listed on the terminal
FULL_LIST = "compare BASELINE CURRENT --out DIR lists every one in DIR/changes.csv"


def counts_line(comparison: Comparison) -> str:
    """``vs baseline RUN: 1 regressed, 4 inconclusive, 2 unchanged``, then the named checks
    that changed: ``; checks changed: 1 newly_failing, 1 fixed``."""
    counts = comparison.counts()
    text = ", ".join(f"{counts[v]} {v.value}" for v in VERDICT_ORDER if counts[v])
    checks = comparison.check_counts()
    moved = ", ".join(f"{checks[v]} {v.value}" for v in VERDICT_ORDER if checks[v])
    also = f"; checks changed: {moved}" if moved else ""
    return f"vs baseline {plain(comparison.baseline_run)}: {text or 'no cases'}{also}"


def metric_text(delta: MetricDelta) -> str:
    """``throughput.decode_tps -53.0% inconclusive (needs n >= 4 a side)``."""
    change = "—" if math.isnan(delta.change) else f"{delta.change:+.1%}"
    return f"{plain(delta.metric)} {change} {plain(delta.label)}"


def _detail(case: CaseDelta) -> str:
    wanted = Verdict.INCONCLUSIVE if case.verdict is Verdict.INCONCLUSIVE else Verdict.REGRESSED
    metrics = [metric_text(d) for d in case.metrics if d.verdict is wanted]
    changed = [r for r in case.reasons if r.startswith("model files changed")]
    if metrics:
        return "; ".join([plain(r, REASON_LIMIT) for r in changed] + metrics)
    return plain("; ".join(case.reasons), REASON_LIMIT) or case.verdict.value


def worst_first(case: CaseDelta) -> tuple[int, float]:
    """Sort key of the terminal's changed cases: by verdict (``SHOWN``'s order), then the
    largest change of a metric of the case's verdict first."""
    changes = [abs(d.change) for d in case.metrics if d.verdict is case.verdict]
    largest = max((c for c in changes if math.isfinite(c)), default=0.0)
    return SHOWN.index(case.verdict), -largest


def _capped(lines: list[str], shown: int | None, what: str, full_list: str) -> list[str]:
    """The first ``shown`` of ``lines``, then ``  ... and 3 more changed cases (where)``."""
    if shown is None or len(lines) <= shown:
        return lines
    return [*lines[:shown], f"  ... and {len(lines) - shown} more {what} ({full_list})"]


def comparison_lines(
    comparison: Comparison, shown: int | None = WORST_SHOWN, full_list: str = FULL_LIST
) -> list[str]:
    """The counts line, then the worst ``shown`` newly failing, regressed, not comparable or
    inconclusive cases, with why (all of them when ``shown`` is None); ``full_list`` says
    where the rest are."""
    cases = sorted((c for c in comparison.cases if c.verdict in SHOWN), key=worst_first)
    lines = [counts_line(comparison)]
    lines += [f"  {plain(change, REASON_LIMIT)}" for change in comparison.model_changes]
    lines += _capped(
        [f"  {c.verdict.value}: {plain(c.case_id)}: {_detail(c)}" for c in cases],
        shown,
        "changed or undecided cases",
        full_list,
    )
    lines += _capped(
        [
            f"  output changed: {plain(c.case_id)}: {plain(c.output_change or '', REASON_LIMIT)}"
            for c in comparison.output_changes
        ],
        shown,
        "output changes",
        full_list,
    )
    checks = sorted(
        comparison.changed_checks(*CHECKS_SHOWN),
        key=lambda pair: CHECKS_SHOWN.index(pair[1].verdict),
    )
    lines += _capped(
        [
            f"  check {change.verdict.value}: {plain(case.case_id)}: "
            f"{plain(change.line, REASON_LIMIT)}"
            for case, change in checks
        ],
        shown,
        "check changes",
        full_list,
    )
    lines += paired_lines(comparison)
    short = [(c.scenario, d.needed_n) for c in cases for d in c.metrics if d.needed_n is not None]
    if short:
        needed = max(n for _, n in short)
        hint = more_samples((s for s, _ in short), needed)
        lines.append(f"  inconclusive: too few samples to decide; {hint}")
    return lines


def paired_lines(comparison: Comparison) -> list[str]:
    """``paired over items (Wilcoxon signed-rank): 2 metrics: 1 regressed, 1 unchanged``."""
    paired = Counter(
        d.verdict for c in comparison.cases for d in c.metrics if d.method is Method.PAIRED_ITEMS
    )
    if not paired:
        return []
    text = ", ".join(f"{paired[v]} {v.value}" for v in VERDICT_ORDER if paired[v])
    total = sum(paired.values())
    noun = "metric" if total == 1 else "metrics"
    return [f"  paired over items (Wilcoxon signed-rank): {total} {noun}: {text}"]


GATE_WORDS = {False: "FAILED", None: "not evaluated", True: "passed"}
PASSED_GATES_SHOWN = 20  # passed gates listed on the terminal; the report lists all


def gate_lines(run: RunRecord) -> list[str]:
    """``gates: 5 (1 FAILED, 1 not evaluated, 3 passed)`` and one line per gate with what it
    measured: failed, then not evaluated, then passed (the first 20 of those)."""
    found = [(r.case_id, g) for r in run.results for g in r.gates]
    if not found:
        return []
    order = (False, None, True)
    counts = Counter(g.passed for _, g in found)
    text = ", ".join(f"{counts[k]} {GATE_WORDS[k]}" for k in order if counts[k])
    lines = [f"gates: {len(found)} ({text})"]
    shown_passed = 0
    for kind in order:
        for case_id, gate in found:
            if gate.passed is not kind:
                continue
            if kind is True:
                shown_passed += 1
                if shown_passed > PASSED_GATES_SHOWN:
                    continue
            lines.append(f"  {plain(case_id)}: {plain(gate.message, REASON_LIMIT)}")
    if shown_passed > PASSED_GATES_SHOWN:
        lines.append(
            f"  +{shown_passed - PASSED_GATES_SHOWN} passed gates more (the report lists all)"
        )
    return lines
