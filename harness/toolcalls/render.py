"""Text and JSON views of a CorpusScore."""

from __future__ import annotations

import json
from typing import Any

from harness.toolcalls.classify import CallFailure
from harness.toolcalls.scorer import CorpusScore, ScoredCase

SHORT = {
    CallFailure.NOT_DETECTED: "not_det",
    CallFailure.PARSE_ERROR: "parse_err",
    CallFailure.WRONG_NAME: "name",
    CallFailure.MISSING_REQUIRED: "required",
    CallFailure.MISSING_ARGUMENT: "missing",
    CallFailure.EXTRA_ARGUMENT: "extra_arg",
    CallFailure.WRONG_TYPE: "type",
    CallFailure.WRONG_VALUE: "value",
    CallFailure.LEAKED_MARKUP: "leaked",
    CallFailure.DROPPED_CALL: "dropped",
    CallFailure.EXTRA_CALL: "extra_call",
}


def _clip(text: str, limit: int = 100) -> str:
    text = repr(text)
    return text if len(text) <= limit else text[: limit - 4] + "...'"


def returned(result: ScoredCase) -> str:
    extraction = result.extraction
    if extraction.crash:
        return f"request fails ({extraction.crash})"
    calls = json.dumps([c.as_json() for c in extraction.calls], ensure_ascii=False)
    return f"{calls} content={_clip(extraction.content)}"


def table(score: CorpusScore) -> list[str]:
    rows = score.per_implementation()
    width = max([len("parser"), *(len(r.implementation) for r in rows)])
    classes = [f for f in CallFailure if f is not CallFailure.OK]
    head = f"{'parser':<{width}}  cases    ok  accuracy  known  " + " ".join(
        f"{SHORT[f]:>{len(SHORT[f])}}" for f in classes
    )
    lines = [head, "-" * len(head)]
    for row in rows:
        counts = " ".join(f"{row.count(f):>{len(SHORT[f])}}" for f in classes)
        lines.append(
            f"{row.implementation:<{width}}  {row.cases:>5} {row.ok:>5}  {row.accuracy:>7.1%}  "
            f"{row.known_broken:>5}  {counts}"
        )
    return lines


def _lines(result: ScoredCase) -> list[str]:
    known = result.known_broken
    if result.passed:
        reason = known.reason if known else ""
        head = f"FIXED? {result.implementation} {result.case.id}: passes; recorded as: {reason}"
        return [head, f"         at {result.case.source}"]
    tag = "KNOWN " if known else "FAIL  "
    lines = [
        f"{tag} {result.implementation} {result.case.id}: "
        f"{result.failure.value}: {result.verdict.detail}",
        f"         returned: {returned(result)}",
    ]
    if known:
        lines.append(f"         known broken: {known.reason} ({known.link})")
    return [*lines, f"         at {result.case.source}"]


def failures(score: CorpusScore) -> list[str]:
    """Known-broken failures, then known-broken passes, then unexpected failures (last, so a
    terminal shows them next to the summary)."""
    known = [r for r in score.results if not r.passed and not r.unexpected]
    ordered = [*known, *score.fixed, *score.unexpected]
    return [line for result in ordered for line in _lines(result)]


def summary(score: CorpusScore) -> str:
    total = len(score.results)
    unexpected = len(score.unexpected)
    known = sum(1 for r in score.results if not r.passed and r.known_broken)
    ok = sum(1 for r in score.results if r.passed)
    text = f"{total} scored: {ok} ok, {known} known broken, {unexpected} unexpected failures"
    if score.fixed:
        text += f", {len(score.fixed)} known broken now passing"
    if score.skipped:
        text += f"; {len(score.skipped)} cases skipped (parser not installed)"
    return text


def as_json(score: CorpusScore) -> dict[str, Any]:
    return {
        "passed": score.passed,
        "summary": [
            {
                "parser": row.implementation,
                "cases": row.cases,
                "ok": row.ok,
                "accuracy": round(row.accuracy, 4),
                "known_broken": row.known_broken,
                "failures": {f.value: n for f, n in row.counts},
            }
            for row in score.per_implementation()
        ],
        "results": [
            {
                "case": r.case.id,
                "source": r.case.source,
                "parser": r.implementation,
                "outcome": r.failure.value,
                "detail": r.verdict.detail,
                "unexpected": r.unexpected,
                "known_broken": (
                    {"reason": r.known_broken.reason, "link": r.known_broken.link}
                    if r.known_broken
                    else None
                ),
                "returned": [c.as_json() for c in r.extraction.calls],
                "content": r.extraction.content,
                "errors": list(r.extraction.errors),
                "crash": r.extraction.crash or None,
            }
            for r in score.results
        ],
        "skipped": list(score.skipped),
    }
