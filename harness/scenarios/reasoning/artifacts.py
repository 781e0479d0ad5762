"""What a ``reasoning`` case records beside its metrics that the report reads, typed."""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts


@dataclass(frozen=True)
class ReasoningArtifacts(ScenarioArtifacts):
    surface: str | None = None  # how it was asked: in process, over HTTP (which engine)
    thinks: bool | None = None  # whether the model thinks
    thinks_because: str | None = None  # why it is taken to think (or not)
    split: tuple[str, ...] = ()  # how reasoning was told apart from the answer, each way seen
    reasoning_field: str | None = None  # the reply field reasoning came in, when one did

    def split_line(self) -> str | None:
        """``markup, field (reasoning_content)``; None when nothing was split."""
        if not self.split:
            return None
        words = ", ".join(self.split)
        return f"{words} ({self.reasoning_field})" if self.reasoning_field else words
