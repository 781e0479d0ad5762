"""Config-only model directories for the probe tests: real configs at toy sizes, fake weights.

Each builder writes config/tokenizer/processor files as the real checkpoints ship them (the keys
that matter, sizes shrunk) and a small safetensors file whose header is real and whose data is
zeros, so header reading, byte counting and truncation checks all run.
"""

from __future__ import annotations

import json
import shutil
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from harness.models.gguf.synthetic import tiny_gemma3, tiny_llama, write_gguf
from harness.probe.types import Capability, Library, ReasonCode

Build = Callable[[Path, Mapping[str, Path]], Path]  # (tmp root, zoo dirs) -> model path
Tensors = Mapping[str, tuple[str, tuple[int, ...]]]
SIZES = {"F32": 4, "F16": 2, "BF16": 2, "U32": 4, "U8": 1, "I64": 8}
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
HERMES_TOOLS = CHATML + "{% if tools %}<tool_call>{{ tool_call.name }}</tool_call>{% endif %}"
QWEN_CODER_TOOLS = CHATML + "{% if tools %}<tool_call>\n<function=x>{% endif %}"
MISTRAL_TOOLS = "[INST]{{ messages[0]['content'] }}[/INST]{% if tools %}[TOOL_CALLS]{% endif %}"
TEXT = {
    "hidden_size": 8,
    "num_hidden_layers": 1,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "intermediate_size": 16,
    "vocab_size": 16,
}
VISION = {"hidden_size": 8, "num_hidden_layers": 1, "num_attention_heads": 2, "patch_size": 14}
IMAGE_PRE = {"image_mean": [0.5, 0.5, 0.5], "image_std": [0.5, 0.5, 0.5], "do_resize": True}
LLAMA = {"model_type": "llama", "architectures": ["LlamaForCausalLM"], **TEXT}
LLAMA["max_position_embeddings"] = 2048
QWEN3 = {"model_type": "qwen3", "architectures": ["Qwen3ForCausalLM"], **TEXT, "head_dim": 4}
# A tokenizers serialization with a two-token vocabulary: enough for the tokenizer-files rule,
# neutral for the tool-parser and thinking inference (no special tokens).
MIN_TOKENIZER = {
    "version": "1.0",
    "added_tokens": [],
    "model": {"type": "WordLevel", "vocab": {"<unk>": 0, "a": 1}, "unk_token": "<unk>"},
}


@dataclass(frozen=True)
class Row:
    """One table row: a model to build and what the probe and policy must say about it."""

    name: str
    build: Build
    caps: frozenset[Capability]
    backend: Library
    parser: str | None
    code: ReasonCode
    module: str | None = None  # the model module the chosen backend would use
    tokenizer: bool = False  # has a real tokenizer: compared with mlx-lm's own loader


def write_json(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))


def write_safetensors(path: Path, tensors: Tensors) -> int:
    """A valid safetensors file of zeros; returns its data bytes."""
    header: dict[str, Any] = {}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        n = SIZES[dtype]
        for d in shape:
            n *= d
        header[name] = {"dtype": dtype, "shape": list(shape), "data_offsets": [offset, offset + n]}
        offset += n
    raw = json.dumps(header).encode()
    raw += b" " * (-len(raw) % 8)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * offset)
    return offset


def dense(layers: int = 1, hidden: int = 8, vocab: int = 16, prefix: str = "model") -> Tensors:
    """Tensors of a tiny dense decoder (names as mlx-lm saves them), float16."""
    t = {f"{prefix}.embed_tokens.weight": ("F16", (vocab, hidden))}
    for i in range(layers):
        for proj in ("q_proj", "k_proj", "v_proj", "o_proj"):
            t[f"{prefix}.layers.{i}.self_attn.{proj}.weight"] = ("F16", (hidden, hidden))
    return t


def model_dir(
    root: Path,
    name: str,
    config: Mapping[str, Any] | None,
    *,
    files: Mapping[str, Any] | None = None,
    tensors: Tensors | None = None,
    template: str | None = None,
    tokenizer_from: Path | None = None,
    tokenizer_config: Mapping[str, Any] | None = None,
    tokenizer: bool = True,
) -> Path:
    """A model folder; ``tokenizer``: write a minimal tokenizer.json unless one is copied."""
    path = root / name
    path.mkdir(parents=True, exist_ok=True)
    if config is not None:
        write_json(path / "config.json", config)
    for rel, content in (files or {}).items():
        if isinstance(content, bytes):
            (path / rel).write_bytes(content)
        else:
            write_json(path / rel, content)
    if tensors is not None:
        write_safetensors(path / "model.safetensors", tensors)
    if tokenizer_from is not None:
        shutil.copy(tokenizer_from / "tokenizer.json", path / "tokenizer.json")
    elif tokenizer:
        write_json(path / "tokenizer.json", MIN_TOKENIZER)
    tok = dict(tokenizer_config or {})
    if template is not None:
        tok["chat_template"] = template
    if tok or tokenizer_from is not None:
        tok.setdefault("tokenizer_class", "PreTrainedTokenizerFast")
        tok.setdefault("eos_token", "<|im_end|>")
        write_json(path / "tokenizer_config.json", tok)
    return path


def vlm(
    name: str,
    model_type: str,
    arch: str,
    *,
    nested: bool = True,
    files: Mapping[str, Any] | None = None,
    template: str = CHATML,
    extra: Mapping[str, Any] | None = None,
    extra_embed_rows: int = 0,
) -> Build:
    """A vision-language model: text settings (flat or in text_config) plus vision_config;
    ``extra_embed_rows``: embedding rows beyond vocab_size, as the family builds them."""

    def build(root: Path, zoo: Mapping[str, Path]) -> Path:
        text = {"text_config": {"model_type": f"{model_type}_text", **TEXT}} if nested else TEXT
        config = {"model_type": model_type, "architectures": [arch], **text}
        config.update({"vision_config": VISION, **(extra or {})})
        tensors = dict(dense(prefix="language_model.model"))
        embed = "language_model.model.embed_tokens.weight"
        rows, hidden = tensors[embed][1]
        tensors[embed] = (tensors[embed][0], (rows + extra_embed_rows, hidden))
        return model_dir(root, name, config, files=files, template=template, tensors=tensors)

    return build


def plain(name: str, config: Mapping[str, Any], *, tokenizer_of: str | None = None,
          **kw: Any) -> Build:  # fmt: skip
    """Any model: config, optional files / template / tokenizer copied from a zoo family."""

    def build(root: Path, zoo: Mapping[str, Path]) -> Path:
        options = {"tensors": dense(), **kw}
        if tokenizer_of is not None:
            options["tokenizer_from"] = zoo[tokenizer_of]
        return model_dir(root, name, config, **options)

    return build


def quantized(root: Path, zoo: Mapping[str, Path]) -> Path:
    """mlx-community 4-bit, group 32, with 8-bit embedding and lm_head overrides."""
    q = {
        "group_size": 32,
        "bits": 4,
        "mode": "affine",
        "model.embed_tokens": {"group_size": 32, "bits": 8},
        "lm_head": {"group_size": 32, "bits": 8},
    }
    config = {**LLAMA, "hidden_size": 64, "vocab_size": 32, "tie_word_embeddings": False}
    config.update(quantization=q, quantization_config=q)
    t: dict[str, tuple[str, tuple[int, ...]]] = {}
    layers = (("model.embed_tokens", 32, 8), ("lm_head", 32, 8))
    for path, rows, bits in (*layers, ("model.layers.0.self_attn.q_proj", 64, 4)):
        t[f"{path}.weight"] = ("U32", (rows, 64 * bits // 32))
        t[f"{path}.scales"] = ("BF16", (rows, 2))
        t[f"{path}.biases"] = ("BF16", (rows, 2))
    t["model.norm.weight"] = ("BF16", (64,))
    return model_dir(root, "quantized-4bit-8bit", config, tensors=t, template=HERMES_TOOLS)


def sentence_bert(root: Path, zoo: Mapping[str, Path]) -> Path:
    config = {"model_type": "bert", "architectures": ["BertModel"], **TEXT}
    modules = [
        {"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
        {
            "idx": 1,
            "name": "1",
            "path": "1_Pooling",
            "type": "sentence_transformers.models.Pooling",
        },
    ]
    files = {
        "modules.json": modules,
        "config_sentence_transformers.json": {"__version__": {"sentence_transformers": "3.0.0"}},
        "1_Pooling/config.json": {"word_embedding_dimension": 8, "pooling_mode_mean_tokens": True},
    }
    tensors = {"embeddings.word_embeddings.weight": ("F32", (16, 8))}
    return model_dir(root, "bert-st", config, files=files, tensors=tensors)


def qwen3_embedding(root: Path, zoo: Mapping[str, Path]) -> Path:
    files = {"modules.json": [], "1_Pooling/config.json": {"pooling_mode_lasttoken": True}}
    return model_dir(root, "qwen3-embedding", QWEN3, files=files, tensors=dense(),
                     template=HERMES_TOOLS)  # fmt: skip


def gguf_llama(root: Path, zoo: Mapping[str, Path]) -> Path:
    return tiny_llama(root / "tiny-llama.gguf").path


def gguf_dir_tools(root: Path, zoo: Mapping[str, Path]) -> Path:
    """A directory holding only a GGUF (with a tool-calling template in its metadata)."""
    (root / "gguf-dir").mkdir(exist_ok=True)
    meta = {"tokenizer.chat_template": HERMES_TOOLS}
    return tiny_llama(root / "gguf-dir" / "m-Q4_0.gguf", metadata=meta).path.parent


def gguf_gemma3(root: Path, zoo: Mapping[str, Path]) -> Path:
    return tiny_gemma3(root / "tiny-gemma3.gguf").path


def gguf_unsupported(root: Path, zoo: Mapping[str, Path]) -> Path:
    meta = {"qwen2.block_count": 1, "qwen2.context_length": 256}
    tensors = {"token_embd.weight": (np.zeros((16, 32), np.float32), "F32")}
    return write_gguf(root / "tiny-qwen2.gguf", "qwen2", meta, tensors)


def truncated(root: Path, zoo: Mapping[str, Path]) -> Path:
    path = model_dir(root, "truncated-download", LLAMA, tensors=dense(), template=CHATML)
    data = (path / "model.safetensors").read_bytes()
    (path / "model.safetensors").write_bytes(data[:-10])
    return path


def missing_shard(root: Path, zoo: Mapping[str, Path]) -> Path:
    shards = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")
    index = {"metadata": {}, "weight_map": {"a": shards[0], "b": shards[1]}}
    path = model_dir(root, "missing-shard", LLAMA, files={"model.safetensors.index.json": index})
    write_safetensors(path / shards[0], {"a": ("F16", (4, 4))})
    return path


def consolidated(root: Path, zoo: Mapping[str, Path]) -> Path:
    """Mistral's layout: model.safetensors plus a duplicate consolidated.safetensors."""
    config = {**LLAMA, "model_type": "mistral", "architectures": ["MistralForCausalLM"]}
    path = model_dir(root, "mistral-consolidated", config, tensors=dense(), template=MISTRAL_TOOLS)
    write_safetensors(path / "consolidated.safetensors", dense())
    return path


def corrupt(root: Path, zoo: Mapping[str, Path]) -> Path:
    path = model_dir(root, "corrupt-config", None, tensors=dense())
    (path / "config.json").write_text('{"model_type": "llama", "hidden_size": ')
    return path
