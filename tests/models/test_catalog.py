"""The embedded-model catalog: every family listed once, in order, under the cache root of the
moment (the zoo's listing is read once a process; where the models live is not)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.models.cache_dir import CACHE_ENV
from harness.models.catalog import ZOO_PREFIX, embedded_models, zoo_entries
from harness.models.real import REAL_MODELS
from harness.models.zoo.derive_vision_family import generated_families
from harness.models.zoo.families import FAMILIES
from harness.models.zoo.families_audio import AUDIO_FAMILIES
from harness.models.zoo.families_caller import CALLER_FAMILIES
from harness.models.zoo.families_draft import DRAFT_FAMILIES
from harness.models.zoo.families_thinker import THINKER_FAMILIES


def test_the_zoo_lists_every_family_in_order_with_its_backend_and_tags() -> None:
    families = [
        *FAMILIES.values(),
        *AUDIO_FAMILIES.values(),
        *generated_families().values(),
        *DRAFT_FAMILIES.values(),
        *CALLER_FAMILIES.values(),
        *THINKER_FAMILIES.values(),
    ]
    assert [(e.family, e.backend, e.tags) for e in zoo_entries()] == [
        (f.name, f.backend, f.tags) for f in families
    ]
    zoo = [m for m in embedded_models() if m.name.startswith(ZOO_PREFIX)]
    assert [m.name for m in zoo] == [f"{ZOO_PREFIX}{f.name}" for f in families]
    assert all(m.tags[0] == "zoo" for m in zoo)


def test_models_live_under_the_cache_root_of_the_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two roots one after the other in one process: each listing follows its own."""
    for name in ("one", "two"):
        monkeypatch.setenv(CACHE_ENV, str(tmp_path / name))
        models = embedded_models()
        assert len(models) == len(REAL_MODELS) + 1 + len(zoo_entries())  # + Whisper
        zoo = [m for m in models if m.name.startswith(ZOO_PREFIX)]
        assert zoo and all(m.path.is_relative_to(tmp_path / name) for m in zoo)
