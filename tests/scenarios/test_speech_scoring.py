"""WER and CER through jiwer with the standard normalisation, pooled over items."""

from __future__ import annotations

import math

import pytest

from harness.scenarios.speech_scoring import Errors, char_errors, word_errors

WORD_CASES = [
    # reference, hypothesis, (substitutions, deletions, insertions, reference words)
    ("The birch canoe slid.", "the birch canoe slid", (0, 0, 0, 4)),
    ("It's easy, to tell.", "It is easy to tell!", (0, 0, 0, 5)),  # contraction expanded
    ("a b c d", "a x c", (1, 1, 0, 4)),
    ("a b", "a b c d", (0, 0, 2, 2)),
    ("a b", "", (0, 2, 0, 2)),
    ("THE   Juice", "the juice", (0, 0, 0, 2)),
]


@pytest.mark.parametrize(("reference", "hypothesis", "counts"), WORD_CASES)
def test_word_errors(reference: str, hypothesis: str, counts: tuple[int, ...]) -> None:
    assert word_errors([reference], [hypothesis]) == Errors(*counts)


@pytest.mark.parametrize(
    ("reference", "hypothesis", "rate"),
    [("hello world", "Helo world!", 1 / 11), ("ab", "ab", 0.0), ("ab", "xy", 1.0)],
)
def test_char_error_rate(reference: str, hypothesis: str, rate: float) -> None:
    assert char_errors([reference], [hypothesis]).rate == pytest.approx(rate)


def test_corpus_rate_pools_errors_not_rates() -> None:
    pooled = word_errors(["a b c d", "a b"], ["a x c", "a b"])
    assert pooled.rate == pytest.approx(2 / 6)  # a mean of the rates would be 0.25


@pytest.mark.parametrize(
    ("errors", "rate"),
    [(Errors(0, 0, 0, 0), 0.0), (Errors(0, 0, 1, 0), math.inf), (Errors(1, 1, 1, 2), 1.5)],
)
def test_rate_edges(errors: Errors, rate: float) -> None:
    assert errors.rate == rate


def test_no_items_is_no_errors() -> None:
    assert word_errors([], []) == char_errors([], []) == Errors(0, 0, 0, 0)
