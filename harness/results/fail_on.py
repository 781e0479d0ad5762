"""What makes a run's exit status non-zero, the exit rules: one set for ``run``, ``compare`` and
the pytest plugin, so CI fails closed.

A case that failed, errored, crashed or timed out always fails the run. Beyond that, each
:class:`FailOn` kind is a reason the harness could not say "all good" even though no case
failed; the default (:data:`DEFAULT`) fails on each of them except a regression and a single
unjudged gate, and ``--fail-on`` replaces it (``--fail-on none`` accepts everything but failed
cases; ``--fail-on-regression`` adds ``regression``; a suite's ``fail_on:`` is its own
default, recorded with the run, so re-judging a record judges it the same way):

- ``nothing-ran``: cases were planned and every one was skipped: nothing was measured.
- ``input-skip``: a case skipped because of the user's input (an unknown ``hub:`` id, a corrupt
  or empty model folder, missing weights: :class:`~harness.core.types.SkipCause`), even when
  other cases ran; an ``expect:`` skip or a capability the model lacks is no finding.
- ``unjudged-gates``: the run has gates and not one of them could be judged (a relative gate
  of a run without a baseline is not counted: it waits for one, and :func:`notes` says so).
- ``inconclusive-gate``: any gate not judged (not in the default: a noisy machine straddles).
- ``not-comparable``: with a baseline, a case that cannot be compared with it (its model files
  changed, another machine, ...), named with its reason.
- ``new-failure``: with a baseline, a case that worked there and fails (or xfails) now, or a
  named check of a case (``api_contracts``' ``concurrent``, ...) that fails now and did not
  there, whatever the case's status (:mod:`harness.results.check_changes`).
- ``regression``: with a baseline, a metric that regressed significantly.
- ``output-change``: with a baseline, recorded greedy outputs that differ from its (not in the
  default: a variant on purpose answers differently); the gate for "outputs stay identical".

:func:`findings` gives one line per reason found; the drivers print them and exit 1 when there
is one. Pure: it reads a record and a comparison, never the terminal or the environment.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum

from harness.core.types import (
    CaseResult,
    GateResult,
    RunRecord,
    SkipCause,
    Status,
    SuiteInfo,
    Verdict,
)
from harness.results.compare import Comparison


class FailOn(str, Enum):
    NOTHING_RAN = "nothing-ran"
    INPUT_SKIP = "input-skip"
    UNJUDGED_GATES = "unjudged-gates"
    INCONCLUSIVE_GATE = "inconclusive-gate"
    NOT_COMPARABLE = "not-comparable"
    NEW_FAILURE = "new-failure"
    REGRESSION = "regression"
    OUTPUT_CHANGE = "output-change"


DEFAULT = frozenset(
    {
        FailOn.NOTHING_RAN,
        FailOn.INPUT_SKIP,
        FailOn.UNJUDGED_GATES,
        FailOn.NOT_COMPARABLE,
        FailOn.NEW_FAILURE,
    }
)
NONE = "none"
SHOWN = 3  # cases named per finding line; the rest counted


class FailOnError(ValueError):
    """A ``--fail-on`` value that is not a list of kinds: one line with the fix."""


def parse_fail_on(text: str | None, *, regression: bool = False) -> frozenset[FailOn]:
    """``--fail-on`` (comma-separated kinds, ``none``, or None for the default), with
    ``regression`` added by ``--fail-on-regression``."""
    chosen: set[FailOn] = set(DEFAULT)
    if text is not None:
        words = [w.strip() for w in text.split(",") if w.strip()]
        if not words:
            raise FailOnError(f"--fail-on: empty; give kinds ({kinds()}) or {NONE}")
        chosen = set()
        for word in words:
            if word == NONE:
                continue
            try:
                chosen.add(FailOn(word))
            except ValueError:
                raise FailOnError(
                    f"--fail-on: {word!r} is not a kind; use {kinds()} or {NONE}"
                ) from None
    if regression:
        chosen.add(FailOn.REGRESSION)
    return frozenset(chosen)


def chosen_kinds(
    command_line: str | None, suites: Sequence[SuiteInfo], *, regression: bool = False
) -> frozenset[FailOn]:
    """What fails the run: ``--fail-on`` when given; else the suites' own ``fail_on:`` (all of
    them together, when several say); else :data:`DEFAULT`. ``--fail-on-regression`` adds
    ``regression`` to whichever applies."""
    if command_line is not None:
        return parse_fail_on(command_line, regression=regression)
    said = [s.fail_on for s in suites if s.fail_on is not None]
    if not said:
        return parse_fail_on(None, regression=regression)
    words = [w for kinds_said in said for w in kinds_said]
    return parse_fail_on(",".join(words) or NONE, regression=regression)


def kinds() -> str:
    return ", ".join(k.value for k in FailOn)


@dataclass(frozen=True)
class Finding:
    """One reason the exit rules fail the run, for people: ``nothing-ran: all 8 cases skipped``."""

    kind: FailOn
    line: str


def _named(case_ids: Sequence[str]) -> str:
    shown = ", ".join(case_ids[:SHOWN])
    more = len(case_ids) - SHOWN
    return shown + (f", +{more} more" if more > 0 else "")


def findings(
    run: RunRecord,
    comparison: Comparison | None,
    fail_on: Iterable[FailOn],
    *,
    shard: bool = False,
) -> list[Finding]:
    """Every reason under ``fail_on`` to fail ``run`` (none when its cases alone decide).
    ``shard``: the run is one shard of a plan, where having no case is normal."""
    wanted = frozenset(fail_on)
    found: list[Finding] = []
    results = run.results
    if FailOn.NOTHING_RAN in wanted and results and not shard:
        skipped = [r for r in results if r.status is Status.SKIPPED]
        if len(skipped) == len(results):
            first = skipped[0].reason or "no reason recorded"
            found.append(
                Finding(
                    FailOn.NOTHING_RAN,
                    f"nothing-ran: all {len(results)} cases were skipped, nothing was measured "
                    f"(first: {first})",
                )
            )
    if FailOn.INPUT_SKIP in wanted:
        found += _input_skips(results)
    gates = [(r.case_id, g) for r in results for g in r.gates if _judgeable(g, comparison)]
    unjudged = [case_id for case_id, g in gates if g.passed is None]
    if FailOn.UNJUDGED_GATES in wanted and gates and len(unjudged) == len(gates):
        found.append(
            Finding(
                FailOn.UNJUDGED_GATES,
                f"unjudged-gates: none of the {len(gates)} gates could be judged "
                f"({_named(list(dict.fromkeys(unjudged)))}); the lines above say why",
            )
        )
    elif FailOn.INCONCLUSIVE_GATE in wanted and unjudged:
        found.append(
            Finding(
                FailOn.INCONCLUSIVE_GATE,
                f"inconclusive-gate: {len(unjudged)} of {len(gates)} gates not judged "
                f"({_named(list(dict.fromkeys(unjudged)))})",
            )
        )
    if comparison is not None:
        found += _comparison_findings(comparison, wanted)
        changed = comparison.output_changes
        if FailOn.OUTPUT_CHANGE in wanted and changed:
            case = changed[0]
            found.append(
                Finding(
                    FailOn.OUTPUT_CHANGE,
                    f"output-change: {len(changed)} cases answer differently from the baseline "
                    f"(first: {case.case_id}: {case.output_change})",
                )
            )
    return found


def _input_skips(results: Sequence[CaseResult]) -> list[Finding]:
    """``input-skip: 2 cases skipped for their input (first: CASE: REASON)``."""
    skipped = [r for r in results if r.skip_cause is SkipCause.INPUT]
    if not skipped:
        return []
    first = skipped[0]
    line = (
        f"{FailOn.INPUT_SKIP.value}: {len(skipped)} cases skipped because of the suite's input "
        f"(first: {first.case_id}: {first.reason or 'no reason recorded'}); fix the model, or "
        "say so with an expect: skip entry"
    )
    return [Finding(FailOn.INPUT_SKIP, line)]


def _judgeable(gate: GateResult, comparison: Comparison | None) -> bool:
    """A relative gate (``"-5%"``) of a run without a baseline waits for one: it is no
    finding (the first run makes the baseline), :func:`notes` says so."""
    return comparison is not None or not gate.gate.relative


def notes(run: RunRecord, comparison: Comparison | None) -> list[str]:
    """Lines that explain the verdict without changing it: relative gates waiting for a
    baseline."""
    if comparison is not None:
        return []
    waiting = [r.case_id for r in run.results for g in r.gates if g.gate.relative]
    if not waiting:
        return []
    return [
        f"note: {len(waiting)} relative gates not judged "
        f"({_named(list(dict.fromkeys(waiting)))}): they apply once a baseline is given "
        "(--baseline RUN, or the suite's baseline:); this run can be that baseline"
    ]


def _comparison_findings(comparison: Comparison, wanted: frozenset[FailOn]) -> list[Finding]:
    by_verdict: dict[Verdict, list[str]] = {}
    reasons: dict[str, str] = {}
    for case in comparison.cases:
        by_verdict.setdefault(case.verdict, []).append(case.case_id)
        if case.reasons:
            reasons.setdefault(case.case_id, case.reasons[0])
    found = []
    rules = (
        (FailOn.NOT_COMPARABLE, Verdict.NOT_COMPARABLE, "not comparable with the baseline"),
        (FailOn.NEW_FAILURE, Verdict.NEWLY_FAILING, "newly failing"),
        (FailOn.REGRESSION, Verdict.REGRESSED, "regressed"),
    )
    for kind, verdict, what in rules:
        cases = by_verdict.get(verdict, [])
        if kind not in wanted:
            continue
        if cases:
            first = cases[0]
            why = f" (first: {first}: {reasons[first]})" if first in reasons else ""
            found.append(Finding(kind, f"{kind.value}: {len(cases)} cases {what}{why}"))
        if kind is FailOn.NEW_FAILURE:
            found += _check_findings(comparison)
    return found


def _check_findings(comparison: Comparison) -> list[Finding]:
    """``new-failure: 1 checks newly failing (first: CASE: concurrent: pass -> FAIL (...))``:
    named checks that fail now and did not in the baseline, whatever their case's status."""
    checks = comparison.changed_checks(Verdict.NEWLY_FAILING)
    if not checks:
        return []
    case, change = checks[0]
    line = (
        f"{FailOn.NEW_FAILURE.value}: {len(checks)} checks newly failing "
        f"(first: {case.case_id}: {change.line})"
    )
    return [Finding(FailOn.NEW_FAILURE, line)]
