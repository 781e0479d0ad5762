"""Pin-set environments: keyed by what they hold, built once (marker written last), reused,
rebuilt when a build did not finish; a failed install is one line naming its log."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.runner.pin_env import (
    READY,
    EnvKind,
    PinEnvError,
    PinEnvSpec,
    ensure_env,
    env_key,
    env_path,
    other_requirements,
)
from tests.runner.fake_dep_index import write_index

CHECKOUT = Path(__file__).resolve().parents[2]
BASE = PinEnvSpec("a", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/w")


@pytest.mark.parametrize(
    ("other", "same"),
    [
        (PinEnvSpec("a", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/w"), True),
        (PinEnvSpec("b", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/w"), True),
        (PinEnvSpec("a", ("harness-fake-dep==1.3",), EnvKind.OVERLAY, find_links="/w"), False),
        (PinEnvSpec("a", ("harness-fake-dep==1.2",), EnvKind.VENV, find_links="/w"), False),
        (PinEnvSpec("a", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/x"), False),
    ],
    ids=["same", "name_only", "pin", "kind", "source"],
)
def test_key_is_what_the_environment_holds(other: PinEnvSpec, same: bool) -> None:
    assert (env_key(other, CHECKOUT) == env_key(BASE, CHECKOUT)) is same


def test_built_once_then_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    wheels = write_index(tmp_path / "wheels")
    spec = PinEnvSpec("fd", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links=str(wheels))
    cold = ensure_env(spec)
    assert cold.cold and (cold.path / READY).is_file()
    assert (cold.path / "site" / "harness_fake_dep-1.2.dist-info").is_dir()
    warm = ensure_env(spec)
    assert not warm.cold and warm.path == cold.path
    (cold.path / READY).unlink()  # as if the build had been killed before its marker
    assert ensure_env(spec).cold


def test_failed_install_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    wheels = write_index(tmp_path / "wheels")
    spec = PinEnvSpec("fd", ("harness-fake-dep==7.0",), EnvKind.OVERLAY, find_links=str(wheels))
    with pytest.raises(PinEnvError) as info:
        ensure_env(spec)
    assert "\n" not in str(info.value)
    assert "harness-fake-dep==7.0" in str(info.value)
    assert str(env_path(spec, CHECKOUT) / "install.log") in str(info.value)
    assert not (env_path(spec, CHECKOUT) / READY).exists()


def test_a_pin_replaces_the_harness_requirement_on_it() -> None:
    kept = other_requirements(["MLX-LM==0.31.3"])
    assert not any(r.lower().startswith("mlx-lm") for r in kept)
    assert any(r.startswith("pydantic") for r in kept)
    assert all("extra" not in r for r in kept)
