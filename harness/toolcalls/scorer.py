"""Score a corpus: each case through each installed implementation of its parser."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from harness.toolcalls import mlx_lm_server, mlx_vlm_server, reference
from harness.toolcalls.classify import CallFailure, CallVerdict, classify
from harness.toolcalls.formats import Implementation, get_format, implementations, resolve
from harness.toolcalls.model import CorpusCase, Extraction, KnownBroken, ParserOwner


@dataclass(frozen=True)
class ScoredCase:
    case: CorpusCase
    implementation: str  # "mlx_lm.json_tools", "mlx_vlm.atem", "harness.ref_function_xml"
    backend: ParserOwner
    verdict: CallVerdict
    extraction: Extraction
    known_broken: KnownBroken | None = None

    @property
    def failure(self) -> CallFailure:
        return self.verdict.failure

    @property
    def passed(self) -> bool:
        return self.failure is CallFailure.OK

    @property
    def unexpected(self) -> bool:
        """A failure not recorded as a known parser bug: this fails the run."""
        return not self.passed and self.known_broken is None

    @property
    def fixed(self) -> bool:
        """Recorded as known broken, yet passes: the bug may be fixed in this version."""
        return self.passed and self.known_broken is not None


@dataclass(frozen=True)
class ImplementationScore:
    implementation: str
    cases: int
    ok: int
    known_broken: int  # failures recorded as known parser bugs
    counts: tuple[tuple[CallFailure, int], ...]  # every non-ok class, zero included

    @property
    def accuracy(self) -> float:
        return self.ok / self.cases if self.cases else 0.0

    def count(self, failure: CallFailure) -> int:
        return dict(self.counts).get(failure, 0)


@dataclass(frozen=True)
class CorpusScore:
    results: tuple[ScoredCase, ...]
    skipped: tuple[str, ...] = ()  # case ids whose parser has no installed implementation

    @property
    def unexpected(self) -> tuple[ScoredCase, ...]:
        return tuple(r for r in self.results if r.unexpected)

    @property
    def fixed(self) -> tuple[ScoredCase, ...]:
        return tuple(r for r in self.results if r.fixed)

    @property
    def passed(self) -> bool:
        return not self.unexpected

    def per_implementation(self) -> tuple[ImplementationScore, ...]:
        order: list[str] = []
        for result in self.results:
            if result.implementation not in order:
                order.append(result.implementation)
        scores = []
        for name in sorted(order):
            mine = [r for r in self.results if r.implementation == name]
            counted = Counter(r.failure for r in mine)
            scores.append(
                ImplementationScore(
                    implementation=name,
                    cases=len(mine),
                    ok=counted[CallFailure.OK],
                    known_broken=sum(1 for r in mine if not r.passed and r.known_broken),
                    counts=tuple((f, counted[f]) for f in CallFailure if f is not CallFailure.OK),
                )
            )
        return tuple(scores)


def _extract(case: CorpusCase, impl: Implementation) -> Extraction:
    dialect = impl.format.dialect
    if impl.backend is ParserOwner.MLX_LM:
        return mlx_lm_server.extract(
            impl.module,
            dialect,
            case.text,
            case.tools,
            case.finish_reason,
            case.starts_in_reasoning,
        )
    if impl.backend is ParserOwner.MLX_VLM:
        return mlx_vlm_server.extract(impl.module, case.text, case.tools, case.starts_in_reasoning)
    return reference.extract(
        impl.module, dialect, case.text, case.tools, case.finish_reason, case.starts_in_reasoning
    )


def extract_case(case: CorpusCase, impl: Implementation) -> Extraction:
    """The calls a client of ``impl``'s server would receive for ``case.text``."""
    return _extract(case, impl)


def score_case(case: CorpusCase, impl: Implementation) -> ScoredCase:
    extraction = _extract(case, impl)
    markup: tuple[str, ...] = ()
    if not case.markup_in_content_ok:
        own = get_format(case.parser)
        markup = tuple(dict.fromkeys((*impl.format.markup, *(own.markup if own else ()))))
    verdict = classify(case.expected, extraction, markup, case.tools)
    own_parser = impl.format.name == case.parser
    known = case.known_broken_for(impl.backend) if own_parser else None
    return ScoredCase(case, impl.id, impl.backend, verdict, extraction, known)


def score_corpus(cases: Iterable[CorpusCase], parser: str | None = None) -> CorpusScore:
    """Score each case with every installed implementation of its own parser, or of ``parser``.

    ``parser`` (None or "auto": each case's own) may name a format (``qwen3_coder``: all its
    implementations) or one implementation (``mlx_vlm.qwen3_coder``). Raises ValueError for a
    name that matches nothing installed.
    """
    forced: tuple[Implementation, ...] | None = None
    if parser not in (None, "auto"):
        forced = resolve(str(parser))
        if not forced:
            raise ValueError(f"unknown or uninstalled parser {parser!r}")
    results: list[ScoredCase] = []
    skipped: list[str] = []
    for case in cases:
        fmt = get_format(case.parser)
        chosen = forced if forced is not None else implementations(fmt) if fmt else ()
        if not chosen:
            skipped.append(case.id)
        results.extend(score_case(case, impl) for impl in chosen)
    return CorpusScore(tuple(results), tuple(skipped))
