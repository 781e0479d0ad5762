"""Tokenizer files: a text model without them is blocked before load, naming the files."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from model_copies import EMBEDDED, EMBEDDED_IDS, doctored_copy, embedded, prepared

from harness.models.catalog import EmbeddedModel
from harness.probe.installed import Stack
from harness.probe.machine import MemoryBudget
from harness.probe.policy import Action, decide
from harness.probe.probe import probe_model
from harness.probe.tokenizer_files import tokenizer_findings
from harness.probe.types import Capability, Library, ReasonCode

PLENTY = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)
TEXT = frozenset({Capability.TEXT})
NONE_MESSAGE = (
    "no tokenizer files (none of tokenizer.json, tokenizer.model, vocab.json + merges.txt, "
    "vocab.txt or *.tiktoken): transformers cannot build the tokenizer; copy them from the "
    "model's source repository"
)
VOCAB_MESSAGE = (
    "vocab.json without merges.txt and no tokenizer.json: transformers cannot build the "
    "tokenizer; copy merges.txt (or tokenizer.json) from the model's source repository"
)
BASE = {"config.json", "model.safetensors", "tokenizer_config.json"}


@pytest.mark.parametrize("model", EMBEDDED, ids=EMBEDDED_IDS)
def test_silent_on_every_embedded_model(model: EmbeddedModel, stack: Stack) -> None:
    probe = probe_model(prepared(model), stack=stack)
    assert not [p for p in probe.problems if "tokenizer" in p.message]


@pytest.mark.parametrize(
    ("files", "tokenizer_config", "caps", "backend", "expected"),
    [
        ({"tokenizer.json"}, {}, TEXT, Library.MLX_LM, None),
        ({"tokenizer.model"}, {}, TEXT, Library.MLX_LM, None),  # SentencePiece (Llama 2, Gemma)
        ({"spiece.model"}, {}, TEXT, Library.MLX_LM, None),
        ({"sentencepiece.bpe.model"}, {}, TEXT, Library.MLX_VLM, None),
        ({"vocab.json", "merges.txt"}, {}, TEXT, Library.MLX_LM, None),  # byte-level BPE
        ({"vocab.txt"}, {}, frozenset({Capability.EMBEDDINGS}), Library.MLX_VLM, None),
        ({"qwen.tiktoken"}, {}, TEXT, Library.MLX_LM, None),
        ({"tekken.json"}, {}, TEXT, Library.MLX_LM, None),
        ({"tokenization_x.py"}, {"auto_map": {"AutoTokenizer": ["x.Tok", None]}}, TEXT,
         Library.MLX_LM, None),  # custom code names its own files
        (set(), {}, frozenset({Capability.AUDIO_IN}), Library.MLX_AUDIO, None),  # not a text model
        (set(), {}, frozenset(), Library.NONE, None),
        (set(), {}, TEXT, Library.MLX_LM, NONE_MESSAGE),
        ({"merges.txt"}, {}, TEXT, Library.MLX_LM, NONE_MESSAGE),
        ({"vocab.json"}, {}, TEXT, Library.MLX_LM, VOCAB_MESSAGE),
        ({"special_tokens_map.json", "added_tokens.json"}, {"auto_map": {"AutoConfig": "x.C"}},
         frozenset({Capability.TEXT, Capability.VISION}), Library.MLX_VLM, NONE_MESSAGE),
    ],
)  # fmt: skip
def test_rule_table(
    files: set[str],
    tokenizer_config: Mapping[str, Any],
    caps: frozenset[Capability],
    backend: Library,
    expected: str | None,
) -> None:
    found = tokenizer_findings(BASE | files, tokenizer_config, caps, backend)
    assert [f.message for f in found] == ([expected] if expected else [])
    assert all(f.code is ReasonCode.CORRUPT_MODEL for f in found)


@pytest.mark.parametrize(
    ("name", "drop"),
    [
        ("smollm2-135m-instruct", ("tokenizer.json",)),
        ("smollm2-135m-instruct-f32", ("tokenizer.json", "tokenizer_config.json")),
        ("gemma3-270m", ("tokenizer.json",)),
        ("zoo/qwen2_vl", ("tokenizer.json",)),  # a vision model's processor needs it too
    ],
)
def test_dropped_tokenizer_blocks_before_load(
    name: str, drop: tuple[str, ...], tmp_path: Path, stack: Stack
) -> None:
    copy = doctored_copy(embedded(name), tmp_path / "copy", drop=drop)
    decision = decide(probe_model(copy, stack=stack), scenario_needs=TEXT, memory=PLENTY)
    assert (decision.action, decision.code, decision.message) == (
        Action.BLOCK,
        ReasonCode.CORRUPT_MODEL,
        NONE_MESSAGE,
    )


def test_whisper_without_tokenizer_is_left_to_its_backend(tmp_path: Path, stack: Stack) -> None:
    """The rule is about text models; mlx-audio's own loader judges Whisper's files."""
    copy = doctored_copy(embedded("zoo/whisper"), tmp_path / "copy", drop=("tokenizer.json",))
    assert not [p for p in probe_model(copy, stack=stack).problems if "tokenizer" in p.message]
