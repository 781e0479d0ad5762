"""What the probe reads from the installed backends (without importing them)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from harness.probe.installed import Stack


def test_mlx_lm_rules(stack: Stack) -> None:
    lm = stack.lm
    assert lm.installed and lm.kv_step == 256
    assert lm.module_for("mistral", ()) == "llama"  # MODEL_REMAPPING
    assert lm.module_for("llava", ()) == "mistral3"
    assert lm.module_for("bailing_hybrid", ("BailingMoeV3ForCausalLM",)) == "bailing_moe_v3"
    assert lm.module_for("no_such_model", ()) is None
    assert lm.tokenizer_defaults("muse_spark")["tool_parser_type"] == "muse_spark"
    assert lm.tokenizer_defaults("llama") == {}


def test_mlx_vlm_lists_text_models_but_only_some_see(stack: Stack) -> None:
    """mlx-vlm's model folder also holds text-only models: listing alone is not vision."""
    vlm = stack.vlm
    for text_only in ("llama", "qwen3", "gemma3_text", "lfm2", "bert"):
        assert text_only in vlm.model_types and text_only not in vlm.vision_types
    for vision in ("gemma3", "qwen2_5_vl", "qwen3_vl", "idefics3", "smolvlm", "mllama", "pixtral"):
        assert vision in vlm.vision_types
    assert vlm.module_for({"model_type": "LFM2-VL"}) == "lfm2_vl"  # lower-cased, remapped
    assert vlm.embedding_module_for({"model_type": "qwen3"}) == "qwen3_embedding"


@pytest.mark.parametrize(
    ("model_type", "name", "expected"),
    [
        ("whisper", "", ("stt", "whisper")),
        ("csm", "", ("tts", "sesame")),
        ("kokoro", "", ("tts", "kokoro")),
        ("", "Kokoro-82M", ("tts", "kokoro")),
        ("llama", "", None),  # mlx-audio ships a llama TTS backbone; a bare llama is an LLM
        ("qwen3", "", None),
        ("qwen2_vl", "", None),
    ],
)
def test_audio_classification_with_and_without_the_registry(
    model_type: str, name: str, expected: tuple[str, str] | None, stack: Stack
) -> None:
    assert stack.audio.classify_model is not None
    assert stack.audio.classify(model_type, name) == expected
    fallback = replace(stack.audio, classify_model=None)
    assert fallback.classify(model_type, name) == expected
