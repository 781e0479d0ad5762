"""JSON-Schema-constrained decoding on mlx-lm (:class:`harness.backends.base.ConstrainedDecoding`),
mixed into the mlx-lm model: llguidance compiles the schema and, before each token, says which
tokens the schema still allows (a bitmask over the vocabulary); a logits processor of
``generate_step`` sets every other logit to -inf, so greedy decoding picks the best allowed one.

llguidance's own ``llguidance.mlx`` applies the mask with a Metal kernel (macOS only); here the
packed mask is unpacked with numpy and applied with ``mx.where``, which runs on every MLX backend
(the CPU one included). llguidance and mlx are imported inside the functions (optional extra
``structured``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import metadata
from typing import Any

from harness.backends.base import BackendError
from harness.core.exception_line import exception_line

LIBRARY = "llguidance"
INSTALL_HINT = "install it with `pip install 'mlx-harness[structured]'`"


def library_version() -> str:
    """``llguidance 1.9.1``; BackendError (one line, with the fix) when it is not installed."""
    try:
        import llguidance  # noqa: F401
    except ImportError:
        raise BackendError(f"{LIBRARY} is not installed: {INSTALL_HINT}") from None
    return f"{LIBRARY} {metadata.version(LIBRARY)}"


def compile_schema(schema: Mapping[str, Any]) -> str:
    """llguidance's grammar for ``schema``: compact JSON (no free whitespace, so the model
    cannot pad the answer with spaces until ``max_tokens``)."""
    from llguidance import LLMatcher

    grammar = LLMatcher.grammar_from_json_schema(
        json.dumps(dict(schema)), defaults={"whitespace_flexible": False}
    )
    return str(grammar)


class MaskedLogits:
    """A ``generate_step`` logits processor over one llguidance matcher: it feeds the matcher
    the token sampled before (not on its first call: the prompt's last token is no answer), and
    keeps the logits of the tokens the grammar allows next."""

    def __init__(self, matcher: Any, words: int, eos: frozenset[int]) -> None:
        self.matcher = matcher
        self.words = words  # 32-bit words of the mask
        self.eos = sorted(eos)
        self.started = False

    def __call__(self, tokens: Any, logits: Any) -> Any:
        import llguidance.numpy as llg_numpy
        import mlx.core as mx
        import numpy as np

        if self.started:
            self.matcher.consume_token(int(tokens[-1]))
        self.started = True
        if self.matcher.is_error():
            raise BackendError(f"{LIBRARY}: {self.matcher.get_error()}")
        mask = llg_numpy.allocate_token_bitmask(1, self.words * 32)
        llg_numpy.fill_next_token_bitmask(self.matcher, mask, 0)
        width = int(logits.shape[-1])
        bits = np.unpackbits(mask.view(np.uint8), bitorder="little").astype(bool)
        allowed = np.zeros(width, dtype=bool)
        allowed[: min(width, bits.size)] = bits[:width]
        if not allowed.any():  # the grammar is done and allows nothing: end the answer
            allowed[[t for t in self.eos if t < width]] = True
        return mx.where(mx.array(allowed), logits, mx.array(-float("inf"), dtype=logits.dtype))


class MlxLmConstrained:
    """Constrained decoding through llguidance on mlx-lm's ``generate_step``; greedy."""

    model: Any
    tokenizer: Any
    _llg_tokenizer: Any = None

    def constraint_library(self) -> str:
        return library_version()

    def _eos(self) -> frozenset[int]:
        return frozenset(int(t) for t in self.tokenizer.eos_token_ids)

    def _guidance_tokenizer(self) -> Any:
        """llguidance's view of the tokenizer (built once: it walks the whole vocabulary)."""
        if self._llg_tokenizer is None:
            import llguidance.hf

            hf = getattr(self.tokenizer, "_tokenizer", self.tokenizer)
            try:
                self._llg_tokenizer = llguidance.hf.from_tokenizer(
                    hf, eos_token=sorted(self._eos())
                )
            except Exception as exc:
                raise BackendError(
                    f"{LIBRARY} cannot read the tokenizer: {exception_line(exc)}"
                ) from exc
        return self._llg_tokenizer

    def _matcher(self, schema: Mapping[str, Any]) -> tuple[Any, int]:
        from llguidance import LLMatcher

        library_version()
        tokenizer = self._guidance_tokenizer()
        try:
            grammar = compile_schema(schema)
        except Exception as exc:
            raise BackendError(
                f"{LIBRARY} cannot compile the schema: {exception_line(exc)}"
            ) from exc
        matcher = LLMatcher(tokenizer, grammar)
        if matcher.is_error():
            raise BackendError(f"{LIBRARY} cannot compile the schema: {matcher.get_error()}")
        return matcher, (int(tokenizer.vocab_size) + 31) // 32

    def stream_constrained(
        self, prompt: Sequence[int], schema: Mapping[str, Any], *, max_tokens: int
    ) -> Iterator[int]:
        import mlx.core as mx
        from mlx_lm.generate import generate_step, generation_stream, wired_limit

        matcher, words = self._matcher(schema)
        processors: list[Callable[[Any, Any], Any]] = [MaskedLogits(matcher, words, self._eos())]
        steps = generate_step(
            mx.array(list(prompt)), self.model, max_tokens=max_tokens, logits_processors=processors
        )
        eos = self._eos()
        with wired_limit(self.model, [generation_stream]):  # type: ignore[list-item]
            for token, _logprobs in steps:
                token_id = int(token)
                if token_id in eos:
                    return
                yield token_id
