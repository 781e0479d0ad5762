"""The frozen values of the live and correctness layers: BFCL-style prompts for a real model.

A prompt asks a question with some tools; ``expected`` lists the calls a correct answer makes,
each argument with the values that count as right (compared after normalisation, see
``harness.toolcalls.match``). Pydantic stays in ``live_data.py``, at the file edge.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any


class Category(str, Enum):
    """BFCL's categories for single-turn calls."""

    SIMPLE = "simple"  # one tool, one call
    MULTIPLE = "multiple"  # several tools, one call to the right one
    PARALLEL = "parallel"  # several calls in one reply (order does not matter)
    PARALLEL_MULTIPLE = "parallel_multiple"  # several tools, several calls (any order)
    IRRELEVANCE = "irrelevance"  # no tool fits: the right answer is no call


@dataclass(frozen=True)
class ExpectedCall:
    """One call of a correct answer. ``arguments`` must be present, each with one of its
    acceptable values; ``optional`` ones may be left out, and when given must be acceptable;
    any other argument is unexpected."""

    name: str
    arguments: Mapping[str, tuple[Any, ...]]
    optional: Mapping[str, tuple[Any, ...]]


@dataclass(frozen=True)
class Prompt:
    id: str  # "<category>/<slug>"
    category: Category
    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]  # OpenAI tools: {"type": "function", "function": ...}
    expected: tuple[ExpectedCall, ...]  # () for irrelevance
    source: str  # "file:line", for messages


@dataclass(frozen=True)
class FewShot:
    """Example turns put before every prompt when few-shot is on, and the tools they call
    (added to each prompt's tools, so the examples never call a tool the prompt lacks)."""

    messages: tuple[Mapping[str, Any], ...]
    tools: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class LiveSet:
    prompts: tuple[Prompt, ...]
    fewshot: FewShot
