"""Word and character error rates of transcripts, with jiwer's standard normalisation.

Both texts go through jiwer's standard steps (lower case, common English contractions
expanded, Kaldi non-words and punctuation removed, whitespace collapsed; ``wer_standardize``
without its order slip that leaves punctuation on words) before alignment; CER uses the same
steps ending in characters. Rates are errors / reference units, so they can
exceed 1 (insertions); a corpus rate pools the errors of all items (not a mean of rates).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Errors:
    """Edit operations of an alignment, against ``reference`` units (words or characters)."""

    substitutions: int
    deletions: int
    insertions: int
    reference: int

    @property
    def rate(self) -> float:
        edits = self.substitutions + self.deletions + self.insertions
        if self.reference == 0:
            return 0.0 if edits == 0 else float("inf")
        return edits / self.reference


def _transform(unit: str) -> Any:
    import jiwer

    reduce = (
        jiwer.ReduceToListOfListOfWords() if unit == "words" else jiwer.ReduceToListOfListOfChars()
    )
    return jiwer.Compose(
        [
            jiwer.ToLowerCase(),
            jiwer.ExpandCommonEnglishContractions(),
            jiwer.RemoveKaldiNonWords(),
            jiwer.RemovePunctuation(),
            jiwer.RemoveMultipleSpaces(),
            jiwer.Strip(),
            reduce,
        ]
    )


def _errors(output: Any) -> Errors:
    return Errors(
        int(output.substitutions),
        int(output.deletions),
        int(output.insertions),
        int(output.hits + output.substitutions + output.deletions),
    )


def _safe(texts: Sequence[str]) -> list[str]:
    # jiwer refuses an empty string; a space normalises to no units at all
    return [t if t.strip() else " " for t in texts]


def word_errors(references: Sequence[str], hypotheses: Sequence[str]) -> Errors:
    """Word edits of ``hypotheses`` against ``references``, pooled over the pairs."""
    import jiwer

    if not references:
        return Errors(0, 0, 0, 0)
    transform = _transform("words")
    output = jiwer.process_words(
        _safe(references),
        _safe(hypotheses),
        reference_transform=transform,
        hypothesis_transform=transform,
    )
    return _errors(output)


def char_errors(references: Sequence[str], hypotheses: Sequence[str]) -> Errors:
    """Character edits (spaces count, normalised), pooled over the pairs."""
    import jiwer

    if not references:
        return Errors(0, 0, 0, 0)
    transform = _transform("chars")
    output = jiwer.process_characters(
        _safe(references),
        _safe(hypotheses),
        reference_transform=transform,
        hypothesis_transform=transform,
    )
    return _errors(output)
