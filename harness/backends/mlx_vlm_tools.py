"""Tool calling for :class:`harness.backends.mlx_vlm.MlxVlmModel` (mixed into it), with
mlx-vlm's own tool parsers (``mlx_vlm.tools``: the parser inferred from the chat template as
``mlx_vlm.server`` infers it, and ``process_tool_calls`` replayed on the generated text by
:mod:`harness.toolcalls.mlx_vlm_server`).

Streaming: mlx-vlm's server streams tool-call deltas through its own state machine
(``ToolCallStreamState``); this replay does not reproduce it, so the "streamed" extraction is
the non-streamed one and stream/non-stream parity says nothing on this backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Self

from harness.backends.base import BackendError

if TYPE_CHECKING:
    from harness.toolcalls.model import Extraction


class MlxVlmToolCalling:
    """:class:`harness.backends.base.ToolCalling` through mlx-vlm's parsers."""

    model: Any
    processor: Any

    @property
    def tokenizer(self) -> Any:
        return getattr(self.processor, "tokenizer", self.processor)

    def tool_parser_name(self) -> str | None:
        from mlx_vlm.tools import _infer_tool_parser_from_processor

        name = _infer_tool_parser_from_processor(self.processor)
        return str(name) if name else None

    def tool_markers(self) -> tuple[str, ...]:
        from mlx_vlm.tools import load_tool_module

        name = self.tool_parser_name()
        if name is None:
            return ()
        module = load_tool_module(name)
        marks = (getattr(module, "tool_call_start", ""), getattr(module, "tool_call_end", ""))
        return tuple(str(m) for m in marks if m)

    def chat_template_text(self) -> str | None:
        template = getattr(self.tokenizer, "chat_template", None)
        if not isinstance(template, str):
            template = getattr(self.processor, "chat_template", None)
        return template if isinstance(template, str) else None

    def with_chat_template(self, template: str) -> Self:
        """The same weights with ``template`` set on a copy of the processor's tokenizer
        (as ``mlx_vlm.server`` takes a chat template override)."""
        import copy

        processor = copy.copy(self.processor)
        tokenizer = copy.copy(self.tokenizer)
        tokenizer.chat_template = template
        if processor is not self.processor and hasattr(processor, "tokenizer"):
            processor.tokenizer = tokenizer
            processor.chat_template = template
        else:
            processor = tokenizer
        return type(self)(self.model, processor, getattr(self, "path", None))  # type: ignore[call-arg]

    def replay_server(
        self,
        prompt: Sequence[int],
        generated: Sequence[int],
        tools: Sequence[Mapping[str, Any]] | None,
        finish_reason: Literal["stop", "length"],
    ) -> tuple[Extraction, Extraction]:
        from harness.toolcalls import mlx_vlm_server

        name = self.tool_parser_name()
        if name is None:
            raise BackendError("no tool parser was inferred for this model")
        text = str(self.tokenizer.decode(list(generated)))
        whole = mlx_vlm_server.extract(name, text, tools)
        return whole, whole
