"""What a model can do and which backend should load it, from its config and side files.

Order matters: strong embedding signals (sentence-transformers files, pooling config, BERT-like
types, ``*ForMaskedLM``), then audio (mlx-audio's own classification), then vision (an mlx-vlm
model with a vision tower, a ``vision_config``, or an image processor; a video-only processor
does not count), then weak embedding signals (bare ``*Model`` architectures), then text.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from harness.probe.installed import Stack
from harness.probe.snapshot import Snapshot
from harness.probe.types import BackendSupport, Capability, Library

SENTENCE_TRANSFORMERS_FILES = (
    "modules.json",
    "config_sentence_transformers.json",
    "sentence_bert_config.json",
)
BERT_LIKE = frozenset(
    {
        "bert",
        "roberta",
        "xlm-roberta",
        "xlm_roberta",
        "distilbert",
        "mpnet",
        "electra",
        "deberta",
        "deberta-v2",
        "modernbert",
        "nomic_bert",
        "camembert",
        "albert",
        "jina_bert",
        "new",  # Alibaba GTE
    }
)
# Used only when mlx-audio is not installed (then the model is blocked as a missing dependency).
KNOWN_STT = frozenset({"whisper", "parakeet", "voxtral", "qwen2_audio", "moonshine", "wav2vec2"})
KNOWN_TTS = frozenset({"kokoro", "csm", "sesame", "outetts", "spark", "dia", "bark", "marvis"})
TEXT_ARCH_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")
IMAGE_HINTS = ("image_processor_type", "image_mean", "image_std", "crop_size", "image_processor")


@dataclass(frozen=True)
class Modality:
    capabilities: frozenset[Capability]
    backend: Library
    support: tuple[BackendSupport, ...]


def detect(
    files: Snapshot, config: Mapping[str, Any], stack: Stack, *, chat: bool, name: str = ""
) -> Modality:
    """Capabilities (before tools/reasoning) and the backend that should load the model."""
    model_type = str(config["model_type"]).lower() if config.get("model_type") else None
    archs = tuple(str(a) for a in config.get("architectures") or ())
    lm_module = stack.lm.module_for(model_type, archs) if model_type else None
    vlm_module = stack.vlm.module_for(config) if model_type else None
    audio = stack.audio.classify(model_type, name if model_type is None else "")
    emb_module = stack.vlm.embedding_module_for(config)
    caps: set[Capability] = set()
    backend = Library.NONE

    if _strong_embedding(files, model_type, archs):
        caps, backend = {Capability.EMBEDDINGS}, Library.MLX_VLM
    elif audio is not None or model_type in KNOWN_STT | KNOWN_TTS:
        caps, backend = _audio_caps(audio[0] if audio else None, model_type), Library.MLX_AUDIO
    elif _vision(files, config, vlm_module, stack):
        caps, backend = {Capability.VISION, Capability.TEXT}, Library.MLX_VLM
        if isinstance(config.get("audio_config"), Mapping) and config["audio_config"]:
            caps.add(Capability.AUDIO_IN)
    elif any(a.endswith("Model") and not a.endswith("LMHeadModel") for a in archs):
        caps, backend = {Capability.EMBEDDINGS}, Library.MLX_VLM
    elif lm_module is not None or any(a.endswith(TEXT_ARCH_SUFFIXES) for a in archs):
        caps, backend = {Capability.TEXT}, Library.MLX_LM
    if chat and caps:
        caps.add(Capability.CHAT)

    support = (
        BackendSupport(Library.MLX_LM, stack.lm.installed, stack.lm.version, lm_module),
        BackendSupport(
            Library.MLX_VLM,
            stack.vlm.installed,
            stack.vlm.version,
            emb_module if Capability.EMBEDDINGS in caps else vlm_module,
        ),
        BackendSupport(
            Library.MLX_AUDIO,
            stack.audio.installed,
            stack.audio.version,
            audio[1] if audio else None,
        ),
    )
    return Modality(frozenset(caps), backend, support)


def _strong_embedding(files: Snapshot, model_type: str | None, archs: tuple[str, ...]) -> bool:
    if any(f in files.names for f in SENTENCE_TRANSFORMERS_FILES) or files.pooling:
        return True
    if model_type in BERT_LIKE:
        return True
    return any(a.endswith("ForMaskedLM") for a in archs)


def _audio_caps(kind: str | None, model_type: str | None) -> set[Capability]:
    if kind is None:
        kind = "stt" if model_type in KNOWN_STT else "tts"
    if kind == "stt":
        return {Capability.AUDIO_IN}
    if kind == "tts":
        return {Capability.TTS}
    return {Capability.AUDIO_IN, Capability.TTS}  # sts: speech in, speech out


def _vision(
    files: Snapshot, config: Mapping[str, Any], vlm_module: str | None, stack: Stack
) -> bool:
    if vlm_module is not None and vlm_module in stack.vlm.vision_types:
        return True
    vision_config = config.get("vision_config")
    if isinstance(vision_config, Mapping) and vision_config:
        return True
    return image_processor(files)


def image_processor(files: Snapshot) -> bool:
    """An image processor is declared (preprocessor_config.json / processor_config.json).

    ``video_preprocessor_config.json`` is never read: a video-only processor does not make a
    model a vision model, and neither does a preprocessor_config.json naming only a video
    processor or an audio feature extractor.
    """
    pre = files.read("preprocessor_config.json")
    if isinstance(pre, Mapping):
        if "image_processor_type" in pre:
            return True
        video_only = "video_processor_type" in pre or "video_processor" in pre
        audio = "feature_extractor_type" in pre
        if not video_only and not audio and any(k in pre for k in IMAGE_HINTS):
            return True
    proc = files.read("processor_config.json")
    if isinstance(proc, Mapping):
        return "image_processor" in proc or "image_token" in proc
    return False
