"""Rule: a text model ships the files its tokenizer is built from.

mlx-lm (and mlx-vlm's processors) build the tokenizer with transformers'
``AutoTokenizer.from_pretrained(model_dir)``, which needs a ``tokenizers`` serialization
(tokenizer.json) or the files of a slow tokenizer to convert: a SentencePiece model
(tokenizer.model, spiece.model, sentencepiece.bpe.model, spm.model), a byte-level BPE's
vocab.json *and* merges.txt, a WordPiece vocab.txt, or a tiktoken file. With none of them (or a
vocab.json without its merges.txt) it fails with "Couldn't instantiate the backend tokenizer"
after the weights are loaded; this rule says so before. A tokenizer_config.json that maps
``AutoTokenizer`` to custom code names its own files, so the rule stays silent then.
"""

from __future__ import annotations

from collections.abc import Mapping, Set
from typing import Any

from harness.probe.types import Capability, Finding, Library, ReasonCode

SERIALIZED = "tokenizer.json"
SENTENCEPIECE = ("tokenizer.model", "spiece.model", "sentencepiece.bpe.model", "spm.model")
WORDPIECE = "vocab.txt"
BPE = ("vocab.json", "merges.txt")
OTHER = ("tekken.json",)  # Mistral's tokenizer (mistral-common), read by transformers 5
NEEDS_TOKENIZER = frozenset({Capability.TEXT, Capability.EMBEDDINGS})
LOADERS = frozenset({Library.MLX_LM, Library.MLX_VLM})
LISTED = "tokenizer.json, tokenizer.model, vocab.json + merges.txt, vocab.txt or *.tiktoken"


def tokenizer_findings(
    names: Set[str],
    tokenizer_config: Mapping[str, Any],
    capabilities: Set[Capability],
    backend: Library,
) -> tuple[Finding, ...]:
    """A CORRUPT_MODEL finding when a text model's folder (top-level file ``names``) has no
    tokenizer files; none for other models or when one is there."""
    if backend not in LOADERS or not capabilities & NEEDS_TOKENIZER:
        return ()
    if has_tokenizer(names) or _custom_code(tokenizer_config):
        return ()
    if BPE[0] in names:
        message = (
            f"{BPE[0]} without {BPE[1]} and no {SERIALIZED}: transformers cannot build the "
            f"tokenizer; copy {BPE[1]} (or {SERIALIZED}) from the model's source repository"
        )
    else:
        message = (
            f"no tokenizer files (none of {LISTED}): transformers cannot build the tokenizer; "
            "copy them from the model's source repository"
        )
    return (Finding(ReasonCode.CORRUPT_MODEL, message),)


def has_tokenizer(names: Set[str]) -> bool:
    """``names`` include the files of a tokenizer transformers can build."""
    if SERIALIZED in names or WORDPIECE in names or all(n in names for n in BPE):
        return True
    if any(n in names for n in (*SENTENCEPIECE, *OTHER)):
        return True
    return any(n.endswith(".tiktoken") or n.startswith("tokenizer.model.") for n in names)


def _custom_code(tokenizer_config: Mapping[str, Any]) -> bool:
    auto_map = tokenizer_config.get("auto_map")
    if isinstance(auto_map, Mapping):
        return "AutoTokenizer" in auto_map
    return isinstance(auto_map, list) and bool(auto_map)  # old style: [slow, fast] classes
