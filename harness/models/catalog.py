"""The embedded models a suite can name without a path: ``zoo/<family>`` and real models."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from harness.models.cache_dir import models_dir

ZOO_PREFIX = "zoo/"
MARKER = "harness-model.json"


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    backend: str
    description: str
    path: Path
    tags: tuple[str, ...] = ()  # what a suite's selector can filter on: real or zoo, and more

    @property
    def prepared(self) -> bool:
        """A marker is written last, after an atomic rename: present means complete."""
        return (self.path / MARKER).is_file()

    @property
    def size_bytes(self) -> int:
        if not self.path.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())


@dataclass(frozen=True)
class ZooEntry:
    """What the catalog lists of one zoo family: its name, backend and tags."""

    family: str
    backend: str
    tags: tuple[str, ...]


@cache
def zoo_entries() -> tuple[ZooEntry, ...]:
    """The zoo's families, read once a process: building the generated families' recipes asks
    the installed mlx-vlm's version each time (~2.5 ms a family), and suite loading lists the
    embedded models once per entry. Names, backends and tags are code, whatever the version."""
    from harness.models.zoo.derive_vision_family import generated_families
    from harness.models.zoo.families import FAMILIES
    from harness.models.zoo.families_audio import AUDIO_FAMILIES
    from harness.models.zoo.families_caller import CALLER_FAMILIES
    from harness.models.zoo.families_draft import DRAFT_FAMILIES
    from harness.models.zoo.families_thinker import THINKER_FAMILIES

    return tuple(
        ZooEntry(family.name, family.backend, family.tags)
        for family in (
            *FAMILIES.values(),
            *AUDIO_FAMILIES.values(),
            *generated_families().values(),
            *DRAFT_FAMILIES.values(),
            *CALLER_FAMILIES.values(),
            *THINKER_FAMILIES.values(),
        )
    )


def embedded_models() -> list[EmbeddedModel]:
    """Every embedded model, prepared or not, in a stable order: real models, then the zoo."""
    from harness.models.real import REAL_MODELS, model_path

    root = models_dir()
    real = [
        EmbeddedModel(
            name=m.name,
            backend="mlx_lm",
            description=m.description,
            path=model_path(m.name),
            tags=("real",),
        )
        for m in REAL_MODELS
    ]
    zoo = [
        EmbeddedModel(
            name=f"{ZOO_PREFIX}{entry.family}",
            backend=entry.backend,
            description=f"tiny {'trained' if 'trained' in entry.tags else 'random-weight'} "
            f"{entry.family} ({', '.join(entry.tags)})",
            path=root / "zoo" / entry.family,
            tags=("zoo", *entry.tags),
        )
        for entry in zoo_entries()
    ]
    from harness.models import whisper_ct2

    whisper = EmbeddedModel(
        name=whisper_ct2.MODEL_NAME,
        backend="mlx_audio",
        description="Whisper tiny.en (CTranslate2 -> MLX, float32)",
        path=whisper_ct2.default_path(),
        tags=("real", "audio", "asr"),
    )
    return [*real, whisper, *zoo]


def find_embedded(name: str) -> EmbeddedModel | None:
    for model in embedded_models():
        if model.name == name:
            return model
    return None


def prepare_embedded(name: str, *, force: bool = False) -> Path:
    """Build or convert one embedded model into the cache; idempotent."""
    from harness.models.real import real_model_names
    from harness.models.zoo.build import build, is_current
    from harness.models.zoo.derive_vision_family import generated_families
    from harness.models.zoo.families import FAMILIES
    from harness.models.zoo.families_audio import AUDIO_FAMILIES
    from harness.models.zoo.families_caller import CALLER_FAMILIES
    from harness.models.zoo.families_draft import DRAFT_FAMILIES
    from harness.models.zoo.families_thinker import THINKER_FAMILIES

    model = find_embedded(name)
    if model is None:
        raise KeyError(name)
    if name in real_model_names():
        from harness.models.real import prepare

        return prepare(name, force=force)
    from harness.models import whisper_ct2

    if name == whisper_ct2.MODEL_NAME:
        return whisper_ct2.prepare_whisper_tiny_en(model.path, force=force)
    key = name.removeprefix(ZOO_PREFIX)
    family = (
        FAMILIES.get(key)
        or AUDIO_FAMILIES.get(key)
        or DRAFT_FAMILIES.get(key)
        or CALLER_FAMILIES.get(key)
        or THINKER_FAMILIES.get(key)
        or generated_families()[key]
    )
    if force or not is_current(model.path, family):
        build(family, model.path)
    return model.path
