"""How far a case has gone inside its worker: one small message after each run of it.

A scenario runs its own loop of ``warmup + repeats`` runs; after each one it calls
``ctx.run_done(tokens)`` (:class:`harness.scenarios.base.ScenarioContext`) with the tokens that
run generated when it knows them. :class:`RepeatCounter` numbers those calls (warm-ups first,
then the measured runs, counted on over the batches of ``repeats: auto``) and hands each as a
:class:`RepeatProgress` to ``emit``; the worker writes it as one JSON line,
``{"op": "progress", "repeat": 3, "of": 5, "warmup": false, "auto": false, "tokens": 32}``,
before the case's result. A scenario that reports nothing gets one message per batch, after it,
with the batch's ``generated_tokens`` artifact as its tokens when it has one.

The supervisor reads those lines while it waits for the result
(:meth:`harness.runner.client.WorkerClient.request`); :meth:`RepeatProgress.from_wire` refuses
anything else, and the client drops what it refuses.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

OP = "progress"  # the "op" of a progress line


@dataclass(frozen=True)
class RepeatProgress:
    """One run of a case has ended (the worker's ``progress`` reply,
    :mod:`harness.runner.messages`)."""

    OP: ClassVar[str] = OP
    repeat: int  # 1-based: among the warm-ups when ``warmup``, else among the measured runs
    of: int  # the warm-ups planned, or the measured runs planned (the most, when ``auto``)
    warmup: bool = False
    auto: bool = False  # ``repeats: auto``: ``of`` is a maximum
    tokens: int | None = None  # tokens this run (or batch) generated, when the scenario says

    def to_wire(self) -> dict[str, Any]:
        return {
            "op": OP,
            "repeat": self.repeat,
            "of": self.of,
            "warmup": self.warmup,
            "auto": self.auto,
            "tokens": self.tokens,
        }

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> RepeatProgress:
        """The message of a progress line; ValueError when it is not one."""
        warmup, auto = raw.get("warmup", False), raw.get("auto", False)
        if not (isinstance(warmup, bool) and isinstance(auto, bool)):
            raise ValueError(f"progress 'warmup' and 'auto' are not booleans: {warmup!r}, {auto!r}")
        tokens = None if raw.get("tokens") is None else _count(raw, "tokens", 0)
        return cls(_count(raw, "repeat", 1), _count(raw, "of", 1), warmup, auto, tokens)


def _is_count(value: object, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _count(raw: Mapping[str, Any], key: str, least: int) -> int:
    value = raw.get(key)
    if isinstance(value, int) and _is_count(value, least):
        return value
    raise ValueError(f"progress {key!r} is not a count >= {least}: {value!r}")


def batch_tokens(artifacts: Mapping[str, Any]) -> int | None:
    """The tokens a batch generated, from its ``generated_tokens`` artifact (one count per
    measured run), or None when it has none."""
    counts = artifacts.get("generated_tokens")
    if isinstance(counts, list) and counts and all(_is_count(c, 0) for c in counts):
        return sum(counts)
    return None


class RepeatCounter:
    """Numbers the runs of one case and emits a :class:`RepeatProgress` for each.

    ``of`` is the measured runs planned (``auto``: the most it may take). The repeat loop calls
    :meth:`begin` before each batch and :meth:`end` after it; the scenario calls
    :meth:`run_done` after each run in between.
    """

    def __init__(
        self, emit: Callable[[RepeatProgress], None], of: int, *, auto: bool = False
    ) -> None:
        self.emit, self.of, self.auto = emit, max(of, 1), auto
        self.measured = 0  # measured runs reported so far, over every batch
        self._warmups = 0  # warm-ups planned in the current batch
        self._warm_done = 0
        self._reported = 0  # measured runs the scenario reported in the current batch

    def begin(self, warmup: int, repeats: int) -> None:
        self._warmups, self._warm_done, self._reported = max(warmup, 0), 0, 0

    def run_done(self, tokens: int | None = None) -> None:
        """A run (warm-ups first, then the measured ones) ended, having generated ``tokens``."""
        tokens = tokens if tokens is None or tokens >= 0 else None
        if self._warm_done < self._warmups:
            self._warm_done += 1
            self.emit(RepeatProgress(self._warm_done, self._warmups, True, self.auto, tokens))
            return
        self._reported += 1
        self.measured += 1
        self.emit(RepeatProgress(self.measured, self.of, False, self.auto, tokens))

    def end(self, repeats: int, artifacts: Mapping[str, Any]) -> None:
        """The batch of ``repeats`` measured runs returned; if its scenario reported none of
        them, one message for the whole batch."""
        if self._reported or repeats <= 0:
            return
        self.measured += repeats
        self.emit(RepeatProgress(self.measured, self.of, False, self.auto, batch_tokens(artifacts)))
