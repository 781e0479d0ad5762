"""Weight shapes against config.json: silent on every embedded model, firing on doctored copies."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from model_copies import EMBEDDED, EMBEDDED_IDS, doctored_copy, embedded, prepared
from probe_fixtures import TEXT, dense

from harness.models.catalog import EmbeddedModel
from harness.probe.files import TensorHeader
from harness.probe.installed import Stack
from harness.probe.machine import MemoryBudget
from harness.probe.policy import Action, decide
from harness.probe.probe import probe_model
from harness.probe.quant import parse_quantization
from harness.probe.types import ReasonCode
from harness.probe.weight_shapes import config_int, shape_findings

PLENTY = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)
SMOL = "smollm2-135m-instruct"
EMBED = "model.embed_tokens.weight"


@pytest.mark.parametrize("model", EMBEDDED, ids=EMBEDDED_IDS)
def test_silent_on_every_embedded_model(model: EmbeddedModel, stack: Stack) -> None:
    """No false positives: every embedded real and zoo model probes without a problem."""
    probe = probe_model(prepared(model), stack=stack)
    assert probe.problems == ()
    assert decide(probe, scenario_needs=frozenset(), memory=PLENTY).code is ReasonCode.OK


def _drop_embed_override(config: dict[str, Any]) -> None:
    for key in ("quantization", "quantization_config"):
        config[key].pop("model.embed_tokens")


def _mla(config: dict[str, Any]) -> None:
    config.update(num_attention_heads=12, kv_lora_rank=512, qk_rope_head_dim=64)


# (embedded model, fields to set (None removes), edit, the first finding's message or None)
DOCTORED: list[tuple[str, Mapping[str, Any], Any, str | None]] = [
    (SMOL, {"vocab_size": 32000}, None,
     f"model.safetensors: {EMBED} has 49152 rows but config.json vocab_size is 32000"),
    (SMOL, {"hidden_size": 512}, None,
     f"model.safetensors: {EMBED} has 576 columns (unpacked) but config.json hidden_size is 512"),
    (SMOL, {}, _drop_embed_override,  # the 8-bit embedding read at the default 4 bits
     f"model.safetensors: {EMBED} has 1152 columns (unpacked) but config.json hidden_size is 576"),
    (SMOL, {"num_attention_heads": 12}, None,
     "model.safetensors: model.layers.0.self_attn.q_proj.weight has 576 rows but config.json "
     "num_attention_heads x head_dim is 12 x 64 = 768"),
    (SMOL, {"num_attention_heads": 12, "head_dim": None}, None, None),  # 12 x 576 / 12 = 576
    (SMOL, {"num_attention_heads": 7, "head_dim": None}, None,
     "model.safetensors: model.layers.0.self_attn.q_proj.weight has 576 rows but config.json "
     "num_attention_heads x (hidden_size / num_attention_heads) is 7 x 82 = 574"),
    (SMOL, {"num_hidden_layers": 32}, None,
     "model.safetensors: the weights hold 30 decoder layers (model.layers.*, layer 30 missing) "
     "but config.json num_hidden_layers is 32"),
    (SMOL, {"num_hidden_layers": 24}, None,
     "model.safetensors: the weights hold 30 decoder layers (model.layers.*, layer 29 beyond "
     "it) but config.json num_hidden_layers is 24"),
    (SMOL, {"num_hidden_layers": 29, "num_nextn_predict_layers": 1}, None, None),  # MTP layer
    (SMOL, {}, _mla, None),  # latent attention: the query is not heads x head_dim
    ("smollm2-135m-instruct-f32", {"vocab_size": 49153}, None,
     f"model.safetensors: {EMBED} has 49152 rows but config.json vocab_size is 49153"),
    ("gemma3-270m", {"num_attention_heads": 3}, None,
     "model.safetensors: model.layers.0.self_attn.q_proj.weight has 1024 rows but config.json "
     "num_attention_heads x head_dim is 3 x 256 = 768"),
    ("zoo/llava", {"text_config.vocab_size": 1000}, None,
     "model.safetensors: language_model.model.embed_tokens.weight has 512 rows but "
     "config.json text_config.vocab_size is 1000"),
    ("zoo/gemma3_text", {"vocab_size": 500}, None,
     f"model.safetensors: {EMBED} has 512 rows but config.json vocab_size is 500"),
    ("zoo/qwen2_vl", {"num_hidden_layers": 3}, None,
     "model.safetensors: the weights hold 2 decoder layers (language_model.model.layers.*, "
     "layer 2 missing) but config.json num_hidden_layers is 3"),
    ("zoo/qwen3_moe", {"head_dim": 24}, None,
     "model.safetensors: model.layers.0.self_attn.q_proj.weight has 128 rows but config.json "
     "num_attention_heads x head_dim is 4 x 24 = 96"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "fields", "edit", "message"), DOCTORED)
def test_doctored_copies(
    name: str,
    fields: Mapping[str, Any],
    edit: Any,
    message: str | None,
    tmp_path: Path,
    stack: Stack,
) -> None:
    copy = doctored_copy(embedded(name), tmp_path / "copy", set_fields=fields, edit=edit)
    probe = probe_model(copy, stack=stack)
    decision = decide(probe, scenario_needs=frozenset(), memory=PLENTY)
    if message is None:
        assert probe.problems == ()
        return
    assert probe.problems[0].code is ReasonCode.CORRUPT_MODEL
    assert probe.problems[0].message == message
    assert (decision.action, decision.code, decision.message) == (
        Action.BLOCK,
        ReasonCode.CORRUPT_MODEL,
        message,
    )


def test_lm_head_rows_are_checked_too(tmp_path: Path, stack: Stack) -> None:
    copy = doctored_copy(
        embedded("zoo/llava"), tmp_path / "c", set_fields={"text_config.vocab_size": 7}
    )
    messages = [p.message for p in probe_model(copy, stack=stack).problems]
    assert messages == [
        "model.safetensors: language_model.model.embed_tokens.weight has 512 rows but "
        "config.json text_config.vocab_size is 7",
        "model.safetensors: language_model.lm_head.weight has 512 rows but "
        "config.json text_config.vocab_size is 7",
    ]


def _headers(tensors: Mapping[str, tuple[str, tuple[int, ...]]]) -> tuple[TensorHeader, ...]:
    return tuple(TensorHeader(n, d, s, 0, "model.safetensors") for n, (d, s) in tensors.items())


LLAMA = {"model_type": "llama", **TEXT}  # hidden 8, 2 heads, 1 layer, vocab 16
PACKED = {
    "model.embed_tokens.weight": ("U32", (16, 1)),
    "model.embed_tokens.scales": ("F16", (16, 1)),
}


@pytest.mark.parametrize(
    ("config", "tensors", "expected"),
    [
        (LLAMA, dense(), ()),
        (LLAMA, {}, ()),  # nothing to compare
        (LLAMA, {"transformer.wte.weight": ("F16", (9, 8))}, ()),  # unknown layout: silent
        (LLAMA, {"vision_tower.embed_tokens.weight": ("F16", (9, 8))}, ()),  # a tower
        ({**LLAMA, "vocab_size": None}, dense(vocab=9), ()),  # no vocab_size to compare with
        (LLAMA, PACKED, ()),  # packed but no quantization in config.json: bits unknown
        ({**LLAMA, "quantization": {"bits": 4, "group_size": 8}}, PACKED, ()),  # 1 word x 8
        ({**LLAMA, "quantization": {"bits": 8, "group_size": 8}}, PACKED,
         ("model.embed_tokens.weight has 4 columns (unpacked) but config.json hidden_size is 8",)),
        (LLAMA, dense(prefix="language_model.model"), ()),
        (LLAMA, {k.lstrip("."): v for k, v in dense(vocab=20, prefix="").items()},
         ("embed_tokens.weight has 20 rows but config.json vocab_size is 16",)),
        (LLAMA, dense(layers=2),
         ("the weights hold 2 decoder layers (model.layers.*, layer 1 beyond it) but config.json "
          "num_hidden_layers is 1",)),
        ({**LLAMA, "n_layer": 2, "num_hidden_layers": None}, dense(),
         ("the weights hold 1 decoder layers (model.layers.*, layer 1 missing) but config.json "
          "n_layer is 2",)),
    ],
)  # fmt: skip
def test_rule_table(
    config: Mapping[str, Any],
    tensors: Mapping[str, tuple[str, tuple[int, ...]]],
    expected: tuple[str, ...],
) -> None:
    clean = {k: v for k, v in config.items() if v is not None}
    found = shape_findings(clean, _headers(tensors), parse_quantization(clean))
    assert tuple(f.message.removeprefix("model.safetensors: ") for f in found) == expected
    assert all(f.code is ReasonCode.CORRUPT_MODEL for f in found)


@pytest.mark.parametrize(
    ("config", "keys", "expected"),
    [
        ({"vocab_size": 5}, ("vocab_size",), ("vocab_size", 5)),
        ({"vocab_size": 5, "text_config": {"vocab_size": 6}}, ("vocab_size",),
         ("text_config.vocab_size", 6)),
        ({"vocab_size": 5, "text_config": {}}, ("vocab_size",), ("vocab_size", 5)),
        ({"vocab_size": True}, ("vocab_size",), None),
        ({"vocab_size": "5"}, ("vocab_size",), None),
        ({"n_layer": 3}, ("num_hidden_layers", "n_layer"), ("n_layer", 3)),
    ],
)  # fmt: skip
def test_config_int(
    config: Mapping[str, Any], keys: tuple[str, ...], expected: tuple[str, int] | None
) -> None:
    assert config_int(config, *keys) == expected
