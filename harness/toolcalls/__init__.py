"""Tool-call accuracy, corpus layer: does the installed backend's own parser get the calls right?

A corpus case is raw model output with the calls a correct parser returns. Each case goes through
the same path the server takes (mlx-lm: text state machine + ToolCallFormatter; mlx-vlm:
process_tool_calls), or through the harness's reference parsers for formats mlx-lm lacks, and
the calls a client would receive are compared with the expected ones as structures.

The live and correctness layers (the ``tool_calls`` scenario) reuse the same pieces on a real
model's output: ``live``/``live_data`` (BFCL-style prompts), ``mlx_lm_stream`` (the streamed
replay), ``match`` (acceptable values under a ``values.StringMatch`` mode, parallel calls
paired in any order by ``assignment``) and ``live_score``. ``bfcl_import`` turns BFCL's data
into live prompt files; ``score_file`` scores outputs made elsewhere against them.
"""

from __future__ import annotations

from harness.toolcalls.classify import CallFailure, CallVerdict, classify
from harness.toolcalls.corpus import CorpusInvalid, load_corpus, parse_corpus
from harness.toolcalls.model import CorpusCase, Extraction, KnownBroken, ParserOwner, ToolCall
from harness.toolcalls.scorer import (
    CorpusScore,
    ImplementationScore,
    ScoredCase,
    score_case,
    score_corpus,
)

__all__ = [
    "CallFailure",
    "CallVerdict",
    "CorpusCase",
    "CorpusInvalid",
    "CorpusScore",
    "Extraction",
    "ImplementationScore",
    "KnownBroken",
    "ParserOwner",
    "ScoredCase",
    "ToolCall",
    "classify",
    "load_corpus",
    "parse_corpus",
    "score_case",
    "score_corpus",
]
