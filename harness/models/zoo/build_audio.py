"""Write an audio family as a checkpoint that mlx-audio loads: Whisper in Hugging Face layout,
a text-to-speech family (:mod:`.families_audio`) in mlx-audio's own names.

Whisper:

The model is mlx-audio's own Whisper class (seeded, float32); its weights are saved under the
Hugging Face names (``model.encoder.layers.0.self_attn.q_proj.weight``, PyTorch conv layout),
the form of ``openai/whisper-*`` repositories, so loading exercises mlx-audio's key remapping.
Files: tokenizer.json (text vocabulary, special tokens, 1501 timestamp tokens last),
tokenizer_config.json, preprocessor_config.json (80 mels), config.json, generation_config.json
(alignment heads) and model.safetensors.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from harness.models.whisper_layout import timestamp_tokens
from harness.models.zoo.common import (
    check_float32,
    model_config,
    resolve_token_ids,
    seeded_init,
    write_extra_files,
    write_json,
    write_tokenizer,
)
from harness.models.zoo.family import Family

if TYPE_CHECKING:
    import mlx.core as mx

# mlx-audio parameter names -> Hugging Face names (the inverse of ``Model.sanitize``'s map).
_MLX_TO_HF = (
    ("encoder.ln_post.", "encoder.layer_norm."),
    ("decoder.ln.", "decoder.layer_norm."),
    ("encoder.blocks.", "encoder.layers."),
    ("decoder.blocks.", "decoder.layers."),
    (".cross_attn_ln.", ".encoder_attn_layer_norm."),
    (".attn_ln.", ".self_attn_layer_norm."),
    (".mlp_ln.", ".final_layer_norm."),
    (".mlp1.", ".fc1."),
    (".mlp2.", ".fc2."),
    (".cross_attn.query.", ".encoder_attn.q_proj."),
    (".cross_attn.key.", ".encoder_attn.k_proj."),
    (".cross_attn.value.", ".encoder_attn.v_proj."),
    (".cross_attn.out.", ".encoder_attn.out_proj."),
    (".attn.query.", ".self_attn.q_proj."),
    (".attn.key.", ".self_attn.k_proj."),
    (".attn.value.", ".self_attn.v_proj."),
    (".attn.out.", ".self_attn.out_proj."),
    ("decoder.token_embedding.", "decoder.embed_tokens."),
    ("decoder.positional_embedding", "decoder.embed_positions.weight"),
)


def write_audio_model(family: Family, out_dir: Path, *, seed: int) -> int:
    """Write the checkpoint files for ``family``; return the parameter count."""
    if family.model_type == "whisper":
        return write_whisper_model(family, out_dir, seed=seed)
    return write_tts_model(family, out_dir, seed=seed)


def write_tts_model(family: Family, out_dir: Path, *, seed: int) -> int:
    """A text-to-speech family: its tokenizer, config.json and the weights of mlx-audio's own
    model class (built from the config as ``mlx_audio.tts.utils.load_model`` builds it)."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_audio.utils import get_model_class

    vocab = write_tokenizer(family, out_dir)
    config = model_config(family, vocab)
    module, _kind = get_model_class(
        model_type=family.model_type, model_name=[], category="tts", model_remapping={}
    )
    seeded_init(seed)
    model = module.Model(module.ModelConfig.from_dict({**config, "model_path": str(out_dir)}))
    n_params = check_float32(model)
    weights = dict(tree_flatten(model.parameters()))
    mx.save_safetensors(str(out_dir / "model.safetensors"), weights, metadata={"format": "mlx"})
    write_json(out_dir / "config.json", config)
    write_extra_files(family, out_dir)
    return n_params


def write_whisper_model(family: Family, out_dir: Path, *, seed: int) -> int:
    """Write the Whisper checkpoint files for ``family``; return the parameter count."""
    import mlx.core as mx
    from mlx_audio.stt.models.whisper.whisper import Model, ModelDimensions

    vocab = write_tokenizer(
        family,
        out_dir,
        appended_tokens=timestamp_tokens(),
        tokenizer_extra={
            "tokenizer_class": "WhisperTokenizer",
            "processor_class": "WhisperProcessor",
            "unk_token": family.eos_token,
            "add_prefix_space": False,
            "errors": "replace",
            "model_max_length": 1024,
        },
    )
    if len(vocab) != int(family.config["vocab_size"]):
        raise ValueError(f"{family.name}: {len(vocab)} tokens, vocab_size must match exactly")
    config = model_config(family, vocab)
    dims = ModelDimensions.from_dict(config)
    seeded_init(seed)
    model = Model(dims, dtype=mx.float32)
    # A learned table in Whisper; mlx-audio starts it at zeros because it expects to load it.
    model.decoder.positional_embedding = 0.02 * mx.random.normal(
        model.decoder.positional_embedding.shape
    )
    n_params = check_float32(model)
    weights = hf_weights(model)
    mx.save_safetensors(str(out_dir / "model.safetensors"), weights, metadata={"format": "pt"})
    write_json(out_dir / "config.json", config)
    write_json(out_dir / "generation_config.json", _generation_config(family, vocab, config))
    write_extra_files(family, out_dir)
    return n_params


def hf_weights(model: Any) -> dict[str, mx.array]:
    """``model``'s parameters under Hugging Face names; checked to round-trip through sanitize."""
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_audio.stt.models.whisper.whisper import sinusoids

    ours = dict(tree_flatten(model.parameters()))
    hf: dict[str, mx.array] = {}
    for name, value in ours.items():
        hf_name = name
        for old, new in _MLX_TO_HF:
            hf_name = hf_name.replace(old, new)
        if name.endswith(("conv1.weight", "conv2.weight")):
            value = value.transpose(0, 2, 1)  # MLX (out, kernel, in) -> PyTorch (out, in, kernel)
        hf["model." + hf_name] = value
    dims = model.dims
    hf["model.encoder.embed_positions.weight"] = sinusoids(dims.n_audio_ctx, dims.n_audio_state)
    back = model.sanitize(dict(hf))
    if set(back) != set(ours) or not all(mx.array_equal(back[k], ours[k]) for k in ours):
        raise AssertionError("Hugging Face weight names do not round-trip through sanitize")
    return hf


def _generation_config(
    family: Family, vocab: dict[str, int], config: dict[str, Any]
) -> dict[str, Any]:
    """Decoding defaults; ``alignment_heads`` (the last half of the decoder layers, every head)
    are what mlx-audio reads for word timestamps."""
    layers = int(config["decoder_layers"])
    heads = int(config["decoder_attention_heads"])
    ids = resolve_token_ids(family.token_ids, vocab)
    return {
        **ids,
        "alignment_heads": [
            [layer, head] for layer in range(layers // 2, layers) for head in range(heads)
        ],
        "begin_suppress_tokens": [vocab["Ġ"], vocab["<|endoftext|>"]],
        "is_multilingual": False,
        "max_initial_timestamp_index": 50,
        "max_length": int(config["max_target_positions"]),
        "no_timestamps_token_id": vocab["<|notimestamps|>"],
        "prev_sot_token_id": vocab["<|startofprev|>"],
        "suppress_tokens": [],
    }
