"""A model's chat template as its backend renders it, for the ``template_contracts`` scenario.

:class:`ChatTemplating` is the interface; :class:`TokenizerChatRendering` implements it over a
Hugging Face tokenizer (``self.tokenizer``, mlx-lm's wrapper included), mixed into a backend's
model; :class:`FolderChatRendering` over a model folder's own tokenizer files, loaded on first
use (no weights), for a served model (:class:`ServesChatTemplate`). Rendering errors (a template
that raises) come back as :class:`BackendError` with the template's own message on one line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
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


@runtime_checkable
class DecodesTokens(Protocol):
    """A renderer that also turns token ids back into text, special tokens kept (how the
    harness reads a model's own tokens when a server returns ids)."""

    def decode_tokens(self, ids: Sequence[int]) -> str: ...


def decode_with(tokenizer: Any, ids: Sequence[int]) -> str:
    """``ids`` as text by a Hugging Face ``tokenizer``, special tokens kept."""
    try:
        return str(tokenizer.decode(list(ids), skip_special_tokens=False))
    except Exception as exc:
        raise BackendError(f"decoding tokens: {exception_line(exc)}") from exc


def render_error(exc: BaseException) -> BackendError:
    return BackendError(f"chat template: {exception_line(exc)}")


@runtime_checkable
class ServesChatTemplate(Protocol):
    """A served model whose chat template is known here (the model folder's, or the one the
    server was told to use), so a chat request can be rendered as the server renders it."""

    @property
    def chat_renderer(self) -> ChatTemplating | None:
        """The renderer (None: no model folder here, or the server's template is not known)."""
        ...


def render_with(
    tokenizer: Any, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any
) -> str:
    """``messages`` rendered by a Hugging Face ``tokenizer``'s chat template, with the
    generation prompt."""
    if not getattr(tokenizer, "chat_template", None):
        raise BackendError("the model has no chat template")
    try:
        text = tokenizer.apply_chat_template(
            [dict(m) for m in messages],
            tokenize=False,
            add_generation_prompt=True,
            **template_kwargs,
        )
    except Exception as exc:
        raise render_error(exc) from exc
    return str(text)


class TokenizerChatRendering:
    """:class:`ChatTemplating` over ``self.tokenizer`` (a Hugging Face tokenizer)."""

    tokenizer: Any

    @property
    def bos_token_id(self) -> int | None:
        value = getattr(self.tokenizer, "bos_token_id", None)
        return value if isinstance(value, int) else None

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return render_with(self.tokenizer, messages, **template_kwargs)

    def decode_tokens(self, ids: Sequence[int]) -> str:
        return decode_with(self.tokenizer, ids)


class FolderChatRendering:
    """:class:`ChatTemplating` over a model folder's tokenizer files (``transformers``'
    ``AutoTokenizer``, as mlx-lm loads it), read on first use; ``template`` replaces the
    folder's chat template (a server started with ``--chat-template``)."""

    def __init__(self, folder: Path, template: str | None = None) -> None:
        self.folder = folder
        self.template = template
        self._tokenizer: Any = None

    def _loaded(self) -> Any:
        if self._tokenizer is None:
            from transformers import AutoTokenizer

            try:
                tokenizer = AutoTokenizer.from_pretrained(str(self.folder))
            except Exception as exc:
                raise BackendError(f"tokenizer of {self.folder}: {exception_line(exc)}") from exc
            if self.template is not None:
                tokenizer.chat_template = self.template
            self._tokenizer = tokenizer
        return self._tokenizer

    @property
    def bos_token_id(self) -> int | None:
        value = getattr(self._loaded(), "bos_token_id", None)
        return value if isinstance(value, int) else None

    def chat_template_text(self) -> str | None:
        value = getattr(self._loaded(), "chat_template", None)
        return value if isinstance(value, str) else None

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **template_kwargs: Any) -> str:
        return render_with(self._loaded(), messages, **template_kwargs)

    def decode_tokens(self, ids: Sequence[int]) -> str:
        return decode_with(self._loaded(), ids)
