"""Load a zoo model through its real backend, generate a few tokens, report what was exercised.

One function per backend, all behind :func:`probe`: mlx-lm ``load`` + ``stream_generate`` for
text, mlx-vlm ``load`` + ``generate`` on a generated image for vision, mlx-audio ``load`` +
Whisper ``generate`` on a generated waveform for audio. The cache the generation used is
observed, not assumed: the prompt cache passed in (text, vision) or the per-block entries the
Whisper decoder hands back (audio). Set ``HF_HUB_OFFLINE=1`` first: processors look on the hub
for files a checkpoint lacks.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from harness.models.zoo.family import Family

# Long enough (~100 tokens) to overflow gemma3_text's 64-token sliding window.
PROMPT = (
    "A language model reads a prompt, computes a cache of keys and values, and decodes tokens. "
    "Prefill processes the prompt in large batches; decoding produces one token at a time. "
    "Benchmarks measure throughput in tokens per second and latency in seconds. "
    "What is the capital of France?"
)
IMAGE_PROMPT = "Describe the image."


@dataclass(frozen=True)
class Probe:
    """What one load-and-generate run through a backend exercised."""

    family: str
    backend: str
    device: str
    cache_classes: tuple[str, ...]
    prompt_tokens: int
    generated_tokens: int
    text: str
    detail: dict[str, Any] = field(default_factory=dict)


def probe(family: Family, model_dir: Path, *, max_tokens: int = 4) -> Probe:
    """Load ``model_dir`` (a build of ``family``) with ``family.backend`` and generate."""
    runners: dict[str, Callable[[Family, Path, int], Probe]] = {
        "mlx_lm": probe_text,
        "mlx_vlm": probe_vision,
        "mlx_audio": probe_audio,
    }
    return runners[family.backend](family, Path(model_dir), max_tokens)


def _device() -> str:
    import mlx.core as mx

    return str(mx.default_device())


def _class_names(objects: list[Any]) -> tuple[str, ...]:
    return tuple(sorted({type(o).__name__ for o in objects}))


def _cache_detail(cache: list[Any]) -> dict[str, Any]:
    """Largest cache offset, and whether a sliding-window cache wrapped around."""
    offsets = [int(c.offset) for c in cache if hasattr(c, "offset")]
    windows = [c for c in cache if hasattr(c, "max_size") and c.max_size is not None]
    return {
        "max_offset": max(offsets, default=0),
        "window_sizes": sorted({int(c.max_size) for c in windows}),
        "window_exceeded": any(int(c.offset) > int(c.max_size) for c in windows),
    }


def probe_text(family: Family, model_dir: Path, max_tokens: int) -> Probe:
    """mlx-lm: chat template -> ``stream_generate`` with a prompt cache we keep."""
    from mlx_lm import load, stream_generate
    from mlx_lm.models.cache import make_prompt_cache

    loaded = load(str(model_dir))
    model, tokenizer = loaded[0], loaded[1]
    messages = [{"role": "user", "content": PROMPT}]
    prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    cache = make_prompt_cache(model)
    responses = list(
        stream_generate(model, tokenizer, prompt, max_tokens=max_tokens, prompt_cache=cache)
    )
    last = responses[-1]
    parser = tokenizer._tool_parser
    return Probe(
        family=family.name,
        backend="mlx_lm",
        device=_device(),
        cache_classes=_class_names(cache),
        prompt_tokens=int(last.prompt_tokens),
        generated_tokens=int(last.generation_tokens),
        text="".join(r.text for r in responses),
        detail={
            **_cache_detail(cache),
            "tool_parser": parser.__module__.rsplit(".", 1)[-1] if parser else None,
        },
    )


def sample_image(size: int = 56) -> Any:
    """A deterministic RGB gradient (56 px = 4x4 patches of 14 = 4 merged vision tokens)."""
    import numpy as np
    from PIL import Image

    ramp = np.linspace(0, 255, size, dtype=np.float32)
    rgb = np.stack(
        [
            ramp[None, :].repeat(size, 0),
            ramp[:, None].repeat(size, 1),
            np.full((size, size), 128.0, dtype=np.float32),
        ],
        axis=-1,
    )
    return Image.fromarray(rgb.astype(np.uint8), mode="RGB")


def probe_vision(family: Family, model_dir: Path, max_tokens: int) -> Probe:
    """mlx-vlm: its chat-template helper -> ``generate`` with an image and our prompt cache."""
    from mlx_vlm import generate, load
    from mlx_vlm.models.cache import make_prompt_cache
    from mlx_vlm.prompt_utils import apply_chat_template

    model, processor = cast("tuple[Any, Any]", load(str(model_dir)))
    image = sample_image()
    prompt = cast(str, apply_chat_template(processor, model.config, IMAGE_PROMPT, num_images=1))
    ids = processor(text=[prompt], images=[image])["input_ids"].tolist()[0]
    cache = make_prompt_cache(model.language_model)
    result = generate(
        model, processor, prompt, image=[image], max_tokens=max_tokens, prompt_cache=cache
    )
    return Probe(
        family=family.name,
        backend="mlx_vlm",
        device=_device(),
        cache_classes=_class_names(cache),
        prompt_tokens=int(result.prompt_tokens),
        generated_tokens=int(result.generation_tokens),
        text=str(result.text),
        detail={
            **_cache_detail(cache),
            "image_tokens": ids.count(_image_token_id(model.config)),
        },
    )


def sample_waveform(seconds: float = 1.0, sample_rate: int = 16000) -> Any:
    """A 440 Hz tone with a little seeded noise, float32 at 16 kHz."""
    import numpy as np

    t = np.arange(int(seconds * sample_rate)) / sample_rate
    noise = np.random.default_rng(0).normal(0.0, 0.01, t.shape)
    return (0.3 * np.sin(2 * np.pi * 440.0 * t) + noise).astype(np.float32)


class _DecoderSpy:
    """Stands in for ``model.decoder``: forwards calls, notes the cache entries it returns."""

    def __init__(self, decoder: Any) -> None:
        self.decoder = decoder
        self.entries: list[Any] = []
        self.calls = 0

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        logits, kv_cache, cross_qk = self.decoder(*args, **kwargs)
        self.calls += 1
        self.entries = [entry for block in kv_cache for entry in block]
        return logits, kv_cache, cross_qk


def probe_audio(family: Family, model_dir: Path, max_tokens: int) -> Probe:
    """mlx-audio: ``mlx_audio.stt.load`` -> Whisper ``generate`` on a 1 s tone (greedy)."""
    from mlx_audio.stt import load

    model = load(str(model_dir))
    spy = _DecoderSpy(model.decoder)
    model["decoder"] = spy
    try:
        result = model.generate(
            sample_waveform(),
            temperature=0.0,
            sample_len=max_tokens,
            condition_on_previous_text=False,
        )
    finally:
        model["decoder"] = spy.decoder
    tokens = [tok for seg in result.segments for tok in seg["tokens"]]
    return Probe(
        family=family.name,
        backend="mlx_audio",
        device=_device(),
        cache_classes=_class_names(spy.entries),
        prompt_tokens=len(model.get_tokenizer().sot_sequence),
        generated_tokens=len(tokens),
        text=str(result.text),
        detail={"decoder_calls": spy.calls, "dtype": str(model.dtype)},
    )


def _image_token_id(config: Any) -> int:
    """The image placeholder id: ``image_token_id`` (Qwen2-VL) or ``image_token_index`` (LLaVA)."""
    value = getattr(config, "image_token_id", None)
    if value is None:
        value = config.image_token_index
    return int(value)
