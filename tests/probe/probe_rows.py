"""The probe table: zoo families (built per session) and config-only fixtures, with expectations.

Columns: name, builder, capabilities, backend, tool parser, reason code, backend model module.
"""

from __future__ import annotations

import probe_fixtures as fx
from probe_fixtures import CHATML, HERMES_TOOLS, IMAGE_PRE, LLAMA, MISTRAL_TOOLS, QWEN3, Row

from harness.models.zoo.families import FAMILIES
from harness.probe.types import Capability, Library, ReasonCode

C = Capability
LM, VLM_B, AUDIO, NONE = Library.MLX_LM, Library.MLX_VLM, Library.MLX_AUDIO, Library.NONE
OK, R = ReasonCode.OK, ReasonCode
TEXT = frozenset({C.TEXT})
TEXT_CHAT = frozenset({C.TEXT, C.CHAT})
VLM = frozenset({C.TEXT, C.CHAT, C.VISION})
TOOLS = frozenset({C.TOOLS})
THINK = frozenset({C.REASONING})
ZOO_CAPS = {
    "llama": TEXT_CHAT | TOOLS,
    "qwen2": TEXT_CHAT | TOOLS,
    "qwen3": TEXT_CHAT | TOOLS | THINK,
    "gemma3_text": TEXT_CHAT,
    "mistral": TEXT_CHAT | TOOLS,
    "phi3": TEXT_CHAT,
    "qwen3_moe": TEXT_CHAT | TOOLS | THINK,
    "lfm2": TEXT_CHAT | TOOLS,
    "qwen2_vl": VLM,
    "llava": VLM,
    "whisper": frozenset({C.AUDIO_IN}),
}


def _zoo(name: str) -> Row:
    family = FAMILIES[name]
    module = "llama" if name == "mistral" else name  # mlx-lm remaps mistral -> llama
    return Row(
        f"zoo/{name}",
        lambda root, zoo: zoo[name],
        ZOO_CAPS[name],
        Library(family.backend),
        family.expected_parser,
        OK,
        module,
        tokenizer=True,
    )


def _pre(image_processor: str) -> dict[str, object]:
    return {"preprocessor_config.json": {"image_processor_type": image_processor}}


VIDEO = {"video_preprocessor_config.json": {"video_processor_type": "AVideoProcessor"}}
QWEN25_VL = fx.vlm(
    "qwen2_5_vl", "qwen2_5_vl", "Qwen2_5_VLForConditionalGeneration", nested=False,
    template=HERMES_TOOLS,
    files={**_pre("Qwen2VLImageProcessor"), "chat_template.json": {"chat_template": CHATML}},
)  # fmt: skip
GEMMA3 = fx.vlm(
    "gemma3-vision", "gemma3", "Gemma3ForConditionalGeneration",
    files={"processor_config.json": {"processor_class": "Gemma3Processor", "image_seq_length": 8}},
    extra={"mm_tokens_per_image": 256},
)  # fmt: skip
IDEFICS3 = fx.vlm("idefics3", "idefics3", "Idefics3ForConditionalGeneration",
                  files=_pre("Idefics3ImageProcessor"))  # fmt: skip
SMOLVLM2 = fx.vlm("smolvlm2", "smolvlm", "SmolVLMForConditionalGeneration",
                  files={**_pre("SmolVLMImageProcessor"), **VIDEO})  # fmt: skip
QWEN3_VL = fx.vlm("qwen3_vl", "qwen3_vl", "Qwen3VLForConditionalGeneration",
                  template=fx.QWEN_CODER_TOOLS, files={**_pre("Qwen2VLImageProcessorFast"), **VIDEO})  # fmt: skip  # noqa: E501
MLLAMA = fx.vlm("mllama", "mllama", "MllamaForConditionalGeneration",
                files=_pre("MllamaImageProcessor"), extra_embed_rows=8)  # fmt: skip
MISTRAL3 = fx.vlm("mistral3-pixtral", "mistral3", "Mistral3ForConditionalGeneration",
                  template=MISTRAL_TOOLS,
                  files={"processor_config.json": {"image_token": "[IMG]"}})  # fmt: skip
LFM2_VL = fx.vlm("lfm2-vl", "lfm2-vl", "Lfm2VlForConditionalGeneration",
                 template=CHATML + "<|tool_call_start|>",
                 files={"preprocessor_config.json": IMAGE_PRE})  # fmt: skip
GEMMA3N = fx.vlm("gemma3n", "gemma3n", "Gemma3nForConditionalGeneration",
                 extra={"audio_config": {"hidden_size": 8}})  # fmt: skip
MUSE = fx.vlm("muse_spark", "muse_spark", "MuseSparkForConditionalGeneration")
VJEPA = fx.plain(
    "vjepa2", {"model_type": "vjepa2", "architectures": ["VJEPA2ForVideoClassification"]},
    files={"preprocessor_config.json": {"video_processor_type": "VJEPA2VideoProcessor",
                                        **IMAGE_PRE}, **VIDEO},
)  # fmt: skip
FROB = fx.plain("frobnicator", {"model_type": "frobnicator",
                                "architectures": ["FrobnicatorForCausalLM"]}, template=CHATML)  # fmt: skip  # noqa: E501
MYSTERY = fx.plain("mystery", {"model_type": "mystery", "hidden_size": 8})
KOKORO = fx.plain("kokoro", {"model_type": "kokoro", "istftnet": {}, "style_dim": 128})
KOKORO_NAME = fx.plain("Kokoro-82M", {"istftnet": {}, "plbert": {}, "n_token": 178})
CSM = fx.plain("csm-1b", {"model_type": "csm", "backbone_flavor": "llama-1B"})
WHISPER_V3 = fx.plain(
    "whisper-large-v3", {"model_type": "whisper", "num_mel_bins": 128,
                         "architectures": ["WhisperForConditionalGeneration"]},
    files={"preprocessor_config.json": {"feature_extractor_type": "WhisperFeatureExtractor"}},
)  # fmt: skip
OVERRIDE = fx.plain("qwen3-override", QWEN3, tokenizer_of="qwen3", template=HERMES_TOOLS,
                    tokenizer_config={"tool_parser_type": "qwen3_coder"})  # fmt: skip
BAD_PARSER = fx.plain("qwen3-bad-parser", QWEN3, template=CHATML,
                      tokenizer_config={"tool_parser_type": "hermes_xml"})  # fmt: skip
VOCAB_ONLY = fx.plain("lfm2-vocab-only", {**LLAMA, "model_type": "lfm2",
                                          "architectures": ["Lfm2ForCausalLM"]},
                      tokenizer_of="lfm2", template=CHATML)  # fmt: skip
PYTORCH = fx.plain("pytorch-only", LLAMA, tensors=None, template=CHATML,
                   files={"pytorch_model.bin": b"\0" * 16})  # fmt: skip
NO_WEIGHTS = fx.plain("no-weights", LLAMA, tensors=None, template=CHATML)

ROWS: tuple[Row, ...] = (
    *(_zoo(name) for name in FAMILIES),
    Row("qwen2_5_vl", QWEN25_VL, VLM | TOOLS, VLM_B, "json_tools", OK, "qwen2_5_vl"),
    Row("gemma3-vision", GEMMA3, VLM, VLM_B, None, OK, "gemma3"),
    Row("idefics3", IDEFICS3, VLM, VLM_B, None, OK, "idefics3"),
    Row("smolvlm2-image-and-video", SMOLVLM2, VLM, VLM_B, None, OK, "smolvlm"),
    Row("qwen3_vl", QWEN3_VL, VLM | TOOLS, VLM_B, "qwen3_coder", OK, "qwen3_vl"),
    Row("mllama", MLLAMA, VLM, VLM_B, None, OK, "mllama"),
    Row("mistral3-pixtral", MISTRAL3, VLM | TOOLS, VLM_B, "mistral", OK, "mistral3"),
    Row("lfm2-vl-remapped", LFM2_VL, VLM | TOOLS, VLM_B, "pythonic", OK, "lfm2_vl"),
    Row("gemma3n-vision-audio", GEMMA3N, VLM | {C.AUDIO_IN}, VLM_B, None, OK, "gemma3n"),
    Row("muse_spark-defaults", MUSE, VLM | TOOLS, VLM_B, "muse_spark", OK, "muse_spark"),
    Row(
        "bert-sentence-transformers",
        fx.sentence_bert,
        frozenset({C.EMBEDDINGS}),
        VLM_B,
        None,
        OK,
        "bert",
    ),
    Row(
        "qwen3-embedding",
        fx.qwen3_embedding,
        frozenset({C.EMBEDDINGS, C.CHAT}),
        VLM_B,
        "json_tools",
        OK,
        "qwen3_embedding",
    ),
    Row("video-only-processor", VJEPA, frozenset(), NONE, None, R.UNKNOWN_MODEL_TYPE),
    Row("unknown-causal-lm", FROB, TEXT_CHAT, LM, None, R.RUNTIME_INCOMPATIBLE),
    Row("unknown-model-type", MYSTERY, frozenset(), NONE, None, R.UNKNOWN_MODEL_TYPE),
    Row("corrupt-config", fx.corrupt, frozenset(), NONE, None, R.CORRUPT_MODEL),
    Row(
        "quantized-4bit-8bit-overrides",
        fx.quantized,
        TEXT_CHAT | TOOLS,
        LM,
        "json_tools",
        OK,
        "llama",
    ),
    Row("gguf-llama", fx.gguf_llama, TEXT_CHAT, LM, None, R.NEEDS_CONVERSION, "llama"),
    Row(
        "gguf-dir-tools",
        fx.gguf_dir_tools,
        TEXT_CHAT | TOOLS,
        LM,
        "json_tools",
        R.NEEDS_CONVERSION,
        "llama",
    ),
    Row("gguf-gemma3", fx.gguf_gemma3, TEXT, LM, None, R.NEEDS_CONVERSION, "gemma3_text"),
    Row("gguf-unsupported-arch", fx.gguf_unsupported, TEXT, LM, None, R.RUNTIME_INCOMPATIBLE),
    Row("kokoro-tts", KOKORO, frozenset({C.TTS}), AUDIO, None, OK, "kokoro"),
    Row("kokoro-by-repo-name", KOKORO_NAME, frozenset({C.TTS}), AUDIO, None, OK, "kokoro"),
    Row("csm-tts", CSM, frozenset({C.TTS}), AUDIO, None, OK, "sesame"),
    Row("whisper-large-v3", WHISPER_V3, frozenset({C.AUDIO_IN}), AUDIO, None, OK, "whisper"),
    Row(
        "tool_parser_type-override",
        OVERRIDE,
        TEXT_CHAT | TOOLS | THINK,
        LM,
        "qwen3_coder",
        OK,
        "qwen3",
        tokenizer=True,
    ),
    Row(
        "vocab-fallback-pythonic",
        VOCAB_ONLY,
        TEXT_CHAT | TOOLS,
        LM,
        "pythonic",
        OK,
        "lfm2",
        tokenizer=True,
    ),
    Row(
        "tool_parser_type-unknown",
        BAD_PARSER,
        TEXT_CHAT | TOOLS,
        LM,
        "hermes_xml",
        R.RUNTIME_INCOMPATIBLE,
        "qwen3",
    ),
    Row("pytorch-only", PYTORCH, TEXT_CHAT, LM, None, R.RUNTIME_INCOMPATIBLE, "llama"),
    Row("config-only-no-weights", NO_WEIGHTS, TEXT_CHAT, LM, None, R.MISSING_WEIGHTS, "llama"),
    Row("truncated-download", fx.truncated, TEXT_CHAT, LM, None, R.CORRUPT_MODEL, "llama"),
    Row("missing-shard", fx.missing_shard, TEXT, LM, None, R.CORRUPT_MODEL, "llama"),
    Row("mistral-consolidated", fx.consolidated, TEXT_CHAT | TOOLS, LM, "mistral", OK, "llama"),
)
