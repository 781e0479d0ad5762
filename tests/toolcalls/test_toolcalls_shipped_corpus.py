"""The shipped corpus: it loads, covers every installed parser, and scores as recorded."""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import pytest

from harness.toolcalls.corpus import load_corpus
from harness.toolcalls.formats import FORMATS, get_format, installed_mlx_lm_parsers
from harness.toolcalls.model import CorpusCase
from harness.toolcalls.scorer import CorpusScore, score_corpus

CORPUS = Path(__file__).resolve().parents[2] / "suites" / "data" / "toolcalls"

# The modules FIELD-NOTES lists for mlx-lm 0.32.2.
FIELD_NOTES_PARSERS = {
    "function_gemma", "gemma4", "glm47", "laguna", "json_tools", "qwen3_coder", "kimi_k2",
    "kimi_k3", "longcat", "minicpm5", "minimax_m2", "mistral", "muse_spark", "pythonic",
}  # fmt: skip


@pytest.fixture(scope="module")
def cases() -> tuple[CorpusCase, ...]:
    return load_corpus([CORPUS])


@pytest.fixture(scope="module")
def scored(cases: tuple[CorpusCase, ...]) -> tuple[CorpusScore, float]:
    started = time.perf_counter()
    score = score_corpus(cases)
    return score, time.perf_counter() - started


def test_field_notes_list_matches_the_installed_package() -> None:
    installed = set(installed_mlx_lm_parsers())
    assert not FIELD_NOTES_PARSERS - installed, "FIELD-NOTES names parsers that are not installed"
    unregistered = installed - {f.mlx_lm for f in FORMATS}
    assert not unregistered, f"add a Format and corpus cases for {sorted(unregistered)}"


def test_every_installed_mlx_lm_parser_has_ten_cases(cases: tuple[CorpusCase, ...]) -> None:
    per_parser = Counter(c.parser for c in cases)
    for module in installed_mlx_lm_parsers():
        fmt = next(f for f in FORMATS if f.mlx_lm == module)
        assert per_parser[fmt.name] >= 10, f"{fmt.name}: {per_parser[fmt.name]} cases"


def test_reference_formats_have_ten_cases(cases: tuple[CorpusCase, ...]) -> None:
    per_parser = Counter(c.parser for c in cases)
    assert per_parser["gemma3_tool_code"] >= 10
    assert per_parser["function_xml"] >= 10


def test_files_and_ids_follow_the_parser(cases: tuple[CorpusCase, ...]) -> None:
    for case in cases:
        assert case.id.startswith(f"{case.parser}/"), case.id
        assert Path(case.source.rsplit(":", 1)[0]).stem == case.parser, case.source
        assert get_format(case.parser) is not None


def test_whole_corpus_scores_in_seconds_without_unexpected_failures(
    scored: tuple[CorpusScore, float],
) -> None:
    score, seconds = scored
    assert seconds < 30, f"scoring took {seconds:.1f}s"
    assert not score.skipped
    unexpected = [
        f"{r.implementation} {r.case.id}: {r.failure.value} {r.verdict.detail}"
        for r in score.unexpected
    ]
    assert unexpected == []


def test_known_broken_cases_still_fail(scored: tuple[CorpusScore, float]) -> None:
    """A known-broken case that passes means the backend fixed the bug: update the corpus."""
    score, _ = scored
    fixed = [f"{r.implementation} {r.case.id}" for r in score.fixed]
    assert fixed == []


def test_known_broken_marks_name_a_reason_and_a_link(cases: tuple[CorpusCase, ...]) -> None:
    marked = [c for c in cases if c.known_broken]
    assert marked
    for case in marked:
        for entry in case.known_broken:
            assert len(entry.reason) > 20 and entry.link, case.id
