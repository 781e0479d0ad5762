"""Speculative decoding through mlx-lm (:class:`harness.backends.base.DraftDecoding`): a draft
model loaded with ``mlx_lm.load`` beside the target, and ``speculative_generate_step``, which
yields each token with whether the draft proposed it (mixed into the mlx-lm model)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harness.backends.base import BackendError, DraftedToken
from harness.core.exception_line import exception_line


@dataclass(frozen=True)
class MlxLmDraft:
    """A draft model mlx-lm loaded (its module; the tokenizer was checked at load)."""

    path: Path
    model: Any = field(repr=False, compare=False)


def vocabulary_mismatch(ours: dict[str, int], theirs: dict[str, int]) -> str | None:
    """None when both vocabularies map every token to the same id, else what differs first."""
    if ours == theirs:
        return None
    if len(ours) != len(theirs):
        return f"{len(theirs)} tokens against the model's {len(ours)}"
    for token, index in sorted(ours.items(), key=lambda item: item[1]):
        if theirs.get(token) != index:
            return f"token id {index} is {token!r} in the model, not in the draft"
    return "the same size, other tokens"


class MlxLmDrafting:
    """Loads a draft beside the model and decodes with it; greedy, EOS ignored."""

    model: Any
    tokenizer: Any

    def load_draft(self, path: Path) -> MlxLmDraft:
        import mlx.core as mx
        from mlx_lm import load

        try:
            model, tokenizer = load(str(path))[:2]
        except Exception as exc:
            raise BackendError(
                f"draft {path.name}: mlx_lm.load failed: {exception_line(exc)}"
            ) from exc
        differs = vocabulary_mismatch(self.tokenizer.get_vocab(), tokenizer.get_vocab())
        if differs is not None:
            raise BackendError(
                f"draft {path.name} does not share the model's vocabulary ({differs}): "
                "a draft needs the same tokenizer"
            )
        mx.eval(model.parameters())
        return MlxLmDraft(path, model)

    def stream_drafted(
        self,
        prompt: Sequence[int],
        draft: object,
        *,
        max_tokens: int,
        num_draft_tokens: int,
    ) -> Iterator[DraftedToken]:
        import mlx.core as mx
        from mlx_lm.generate import generation_stream, speculative_generate_step, wired_limit

        if not isinstance(draft, MlxLmDraft):
            raise BackendError(f"{type(draft).__name__} is no draft mlx-lm loaded")
        steps = speculative_generate_step(
            mx.array(list(prompt)),
            self.model,
            draft.model,
            num_draft_tokens=num_draft_tokens,
            max_tokens=max_tokens,
        )
        with wired_limit(self.model, [generation_stream]):  # type: ignore[list-item]
            for token, _logprobs, from_draft in steps:
                yield DraftedToken(int(token), bool(from_draft))
