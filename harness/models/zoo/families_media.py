"""Vision (mlx-vlm) and audio (mlx-audio) families: tiny Qwen2-VL, LLaVA and Whisper."""

from __future__ import annotations

from harness.models import whisper_layout as whisper
from harness.models.zoo import templates as t
from harness.models.zoo.family import VOCAB_SIZE, Family, frozen

WHISPER_VOCAB_SIZE = VOCAB_SIZE + len(whisper.SPECIAL_TOKENS) + whisper.TIMESTAMPS

# OpenAI CLIP normalisation, used by Qwen2-VL's and LLaVA's image processors.
_CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
_CLIP_STD = (0.26862954, 0.26130258, 0.27577711)

QWEN2_VL = Family(
    name="qwen2_vl",
    backend="mlx_vlm",
    config=frozen(
        {
            "model_type": "qwen2_vl",
            "architectures": ["Qwen2VLForConditionalGeneration"],
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "intermediate_size": 128,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "rms_norm_eps": 1e-6,
            "rope_theta": 1000000.0,
            # mrope sections (temporal, height, width) sum to head_dim / 2 = 16 / 2.
            "rope_scaling": {"type": "mrope", "mrope_section": [2, 3, 3]},
            "max_position_embeddings": 4096,
            "max_window_layers": 2,
            "sliding_window": 4096,
            "use_sliding_window": False,
            "tie_word_embeddings": True,
            "vocab_size": VOCAB_SIZE,
            "vision_config": {
                "depth": 2,
                "embed_dim": 32,
                "hidden_size": 64,
                "num_heads": 2,
                "mlp_ratio": 2,
                "in_chans": 3,
                "patch_size": 14,
                "spatial_patch_size": 14,
                "spatial_merge_size": 2,
                "temporal_patch_size": 2,
            },
        }
    ),
    chat_template=t.QWEN2_VL,
    special_tokens=(),
    appended_special_tokens=t.QWEN2_VL_SPECIAL_TOKENS,
    bos_token=None,
    eos_token="<|im_end|>",
    token_ids=frozen(
        {
            "bos_token_id": "<|endoftext|>",
            "eos_token_id": "<|im_end|>",
            "vision_start_token_id": "<|vision_start|>",
            "vision_end_token_id": "<|vision_end|>",
            "vision_token_id": "<|vision_pad|>",
            "image_token_id": "<|image_pad|>",
            "video_token_id": "<|video_pad|>",
        }
    ),
    files=frozen(
        {
            "preprocessor_config.json": {
                "image_processor_type": "Qwen2VLImageProcessor",
                "processor_class": "Qwen2VLProcessor",
                "min_pixels": 3136,
                "max_pixels": 12544,
                "patch_size": 14,
                "temporal_patch_size": 2,
                "merge_size": 2,
                "image_mean": _CLIP_MEAN,
                "image_std": _CLIP_STD,
            }
        }
    ),
    expected_parser=None,
    tags=("vision", "chat", "tiny", "random"),
    notes="Qwen2-VL: ViT with 2D rotary, 2x2 patch merger, mrope text model; images up to "
    "112x112 pixels (max_pixels 12544) so a test image gives a handful of vision tokens.",
)

LLAVA = Family(
    name="llava",
    backend="mlx_vlm",
    config=frozen(
        {
            "model_type": "llava",
            "architectures": ["LlavaForConditionalGeneration"],
            "vision_feature_layer": -2,
            "vision_feature_select_strategy": "default",
            "projector_hidden_act": "gelu",
            "image_seq_length": 4,
            "vocab_size": VOCAB_SIZE,
            "text_config": {
                "model_type": "llama",
                "hidden_size": 64,
                "num_hidden_layers": 2,
                "intermediate_size": 128,
                "num_attention_heads": 4,
                "num_key_value_heads": 2,
                "rms_norm_eps": 1e-5,
                "max_position_embeddings": 4096,
                "vocab_size": VOCAB_SIZE,
            },
            "vision_config": {
                "model_type": "clip_vision_model",
                "hidden_size": 32,
                "intermediate_size": 64,
                "num_hidden_layers": 2,
                "num_attention_heads": 2,
                "image_size": 28,
                "patch_size": 14,
                "projection_dim": 32,
                "num_channels": 3,
                "layer_norm_eps": 1e-5,
            },
        }
    ),
    chat_template=t.LLAVA_1_5,
    special_tokens=t.LLAVA_1_5_SPECIAL_TOKENS,
    appended_special_tokens=t.LLAVA_1_5_APPENDED_TOKENS,
    bos_token="<s>",
    add_bos_token=True,
    eos_token="</s>",
    token_ids=frozen(
        {
            "image_token_index": "<image>",
            "bos_token_id": "<s>",
            "eos_token_id": "</s>",
            "pad_token_id": "<pad>",
        }
    ),
    files=frozen(
        {
            "preprocessor_config.json": {
                "image_processor_type": "CLIPImageProcessor",
                "processor_class": "LlavaProcessor",
                "crop_size": {"height": 28, "width": 28},
                "size": {"shortest_edge": 28},
                "do_center_crop": True,
                "do_convert_rgb": True,
                "do_normalize": True,
                "do_rescale": True,
                "do_resize": True,
                "image_mean": _CLIP_MEAN,
                "image_std": _CLIP_STD,
                "resample": 3,
                "rescale_factor": 0.00392156862745098,
            },
            "processor_config.json": {
                "processor_class": "LlavaProcessor",
                "image_token": "<image>",
                "num_additional_image_tokens": 1,
                "patch_size": 14,
                "vision_feature_select_strategy": "default",
            },
        }
    ),
    expected_parser=None,
    tags=("vision", "chat", "tiny", "random"),
    known_incompatibility=(
        "Failed to process inputs with error: "
        "ImagesKwargs.__init__() got an unexpected keyword argument 'padding'"
    ),
    notes="LLaVA-1.5 (CLIP ViT + Llama): loads, but mlx-vlm 0.7.10 passes padding= to the "
    "image processor, which transformers 5 rejects, so generation fails before the model runs.",
)

WHISPER = Family(
    name="whisper",
    backend="mlx_audio",
    config=frozen(
        {
            "model_type": "whisper",
            "architectures": ["WhisperForConditionalGeneration"],
            "num_mel_bins": 80,
            "d_model": 64,
            "encoder_layers": 2,
            "encoder_attention_heads": 2,
            "encoder_ffn_dim": 256,
            "decoder_layers": 2,
            "decoder_attention_heads": 2,
            "decoder_ffn_dim": 256,
            # 30 s of audio = 3000 mel frames = 1500 encoder positions: fixed by the model code.
            "max_source_positions": 1500,
            "max_target_positions": 448,
            "activation_function": "gelu",
            "scale_embedding": False,
            "tie_word_embeddings": True,
            "vocab_size": WHISPER_VOCAB_SIZE,
        }
    ),
    chat_template=None,
    special_tokens=(),
    appended_special_tokens=whisper.SPECIAL_TOKENS,
    bos_token="<|endoftext|>",
    eos_token="<|endoftext|>",
    token_ids=frozen(
        {
            "bos_token_id": "<|endoftext|>",
            "eos_token_id": "<|endoftext|>",
            "pad_token_id": "<|endoftext|>",
            "decoder_start_token_id": "<|startoftranscript|>",
        }
    ),
    files=frozen({"preprocessor_config.json": whisper.preprocessor_config(80)}),
    expected_parser=None,
    expected_caches=("tuple",),
    tags=("audio", "asr", "tiny", "random"),
    notes="English-only Whisper in Hugging Face layout (config and weight names), 80 mels; "
    "timestamp tokens end the vocabulary. mlx-audio's decoder keeps plain (key, value) tuples "
    "per block (self- and cross-attention), not cache objects.",
)

MEDIA_FAMILIES: tuple[Family, ...] = (QWEN2_VL, LLAVA, WHISPER)
