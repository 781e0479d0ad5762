"""A model's chat template as its backend renders it, for the ``template_contracts`` scenario.

:class:`ChatTemplating` is the interface; :class:`TokenizerChatRendering` implements it over a
Hugging Face tokenizer (``self.tokenizer``, mlx-lm's wrapper included), mixed into a backend's
model. Rendering errors (a template that raises) come back as :class:`BackendError` with the
template's own message on one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from harness.backends.base import BackendError
from harness.core.exception_line import exception_line


@runtime_checkable
class ChatTemplating(Protocol):
    @property
    def bos_token_id(self) -> int | None:
        """The tokenizer's BOS id (None: it has none)."""
        ...

    def chat_template_text(self) -> str | None: ...

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        """The prompt text for ``messages`` with the generation prompt, as the backend renders
        it; ``template_kwargs`` go to the template (``tools=``, ``enable_thinking=``)."""
        ...


def render_error(exc: BaseException) -> BackendError:
    return BackendError(f"chat template: {exception_line(exc)}")


class TokenizerChatRendering:
    """:class:`ChatTemplating` over ``self.tokenizer`` (a Hugging Face tokenizer)."""

    tokenizer: Any

    @property
    def bos_token_id(self) -> int | None:
        value = getattr(self.tokenizer, "bos_token_id", None)
        return value if isinstance(value, int) else None

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        if not getattr(self.tokenizer, "chat_template", None):
            raise BackendError("the model has no chat template")
        try:
            text = self.tokenizer.apply_chat_template(
                [dict(m) for m in messages],
                tokenize=False,
                add_generation_prompt=True,
                **template_kwargs,
            )
        except Exception as exc:
            raise render_error(exc) from exc
        return str(text)
