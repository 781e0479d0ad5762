"""Terminal lines for a comparison with a baseline, and for the gates a run did not evaluate.

Plain text for the end of a run (pytest's terminal summary, ``mlx-harness run``, ``compare``):
the verdict counts, then one line per regressed, newly failing or inconclusive case with the
metric, its change and the reason. Names and reasons are untrusted: :func:`plain` strips
control characters and line breaks.
"""

from __future__ import annotations

import math
from collections import Counter

from harness.report.comparison import VERDICT_ORDER
from harness.report.escape import plain
from harness.results.compare import CaseDelta, Comparison, Method, MetricDelta
from harness.types import RunRecord, Verdict

SHOWN = (Verdict.NEWLY_FAILING, Verdict.REGRESSED, Verdict.INCONCLUSIVE)
REASON_LIMIT = 200  # characters of a case's reason on its line


def counts_line(comparison: Comparison) -> str:
    """``vs baseline RUN: 1 regressed, 4 inconclusive, 2 unchanged``."""
    counts = comparison.counts()
    text = ", ".join(f"{counts[v]} {v.value}" for v in VERDICT_ORDER if counts[v])
    return f"vs baseline {plain(comparison.baseline_run)}: {text or 'no cases'}"


def metric_text(delta: MetricDelta) -> str:
    """``throughput.decode_tps -53.0% inconclusive (needs n >= 4 a side)``."""
    change = "—" if math.isnan(delta.change) else f"{delta.change:+.1%}"
    return f"{plain(delta.metric)} {change} {plain(delta.label)}"


def _detail(case: CaseDelta) -> str:
    wanted = Verdict.INCONCLUSIVE if case.verdict is Verdict.INCONCLUSIVE else Verdict.REGRESSED
    metrics = [metric_text(d) for d in case.metrics if d.verdict is wanted]
    if metrics:
        return "; ".join(metrics)
    return plain("; ".join(case.reasons), REASON_LIMIT) or case.verdict.value


def comparison_lines(comparison: Comparison) -> list[str]:
    """The counts line, then one line per regressed, newly failing or inconclusive case."""
    cases = sorted(
        (c for c in comparison.cases if c.verdict in SHOWN), key=lambda c: SHOWN.index(c.verdict)
    )
    lines = [counts_line(comparison)]
    lines += [f"  {c.verdict.value}: {plain(c.case_id)}: {_detail(c)}" for c in cases]
    lines += paired_lines(comparison)
    needed = [d.needed_n for c in cases for d in c.metrics if d.needed_n is not None]
    if needed:
        lines.append(
            f"  inconclusive: too few samples to decide; raise repeats to {max(needed)} or more"
        )
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


def gate_lines(run: RunRecord) -> list[str]:
    """``gates not evaluated: N`` and one line per gate (no baseline, too few samples, ...)."""
    found = [(r.case_id, g.message) for r in run.results for g in r.gates if g.passed is None]
    if not found:
        return []
    lines = [f"gates not evaluated: {len(found)}"]
    lines += [f"  {plain(case_id)}: {plain(message, REASON_LIMIT)}" for case_id, message in found]
    return lines
