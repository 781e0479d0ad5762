"""Pin sets that follow something instead of pins (``track:``): ``lock`` exports the checkout's
uv.lock, ``latest`` resolves the newest releases now; both install the exact list they got,
are keyed by it (a new release makes a new environment), and need uv (one line otherwise)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from harness.runner import pin_env
from harness.runner.env_lock import lock_versions
from harness.runner.pin_env import (
    READY,
    REQUIREMENTS,
    EnvKind,
    Installer,
    InstallTool,
    PinEnvError,
    PinEnvSpec,
    Track,
    ensure_env,
    env_path,
    find_uv,
    install_commands,
    tracked_requirements,
)
from tests.runner.fake_dep_index import write_wheel

CHECKOUT = Path(__file__).resolve().parents[2]
UV_FOUND = find_uv(os.environ, sys.executable)
NEEDS_UV = pytest.mark.skipif(UV_FOUND is None, reason="no uv beside this Python or on PATH")
LOCKED = PinEnvSpec("locked", (), EnvKind.VENV, track=Track.LOCK, extras=("all",))


def _exact(text: str) -> dict[str, str]:
    """``name==version`` lines (markers dropped) as ``name -> version``."""
    from packaging.utils import canonicalize_name

    found = {}
    for line in text.splitlines():
        line = line.split(";")[0].strip()
        if "==" in line and not line.startswith("#"):
            name, version = line.split("==", 1)
            found[canonicalize_name(name.strip())] = version.strip()
    return found


@NEEDS_UV
def test_the_lock_track_installs_exactly_the_lock() -> None:
    assert UV_FOUND is not None
    text = tracked_requirements(LOCKED, CHECKOUT, InstallTool(Installer.UV, UV_FOUND))
    assert text is not None
    exact = _exact(text)
    locked = lock_versions((CHECKOUT / "uv.lock").read_text(), CHECKOUT / "uv.lock")
    for name in ("mlx", "mlx-lm", "mlx-vlm", "mlx-audio", "transformers", "tokenizers"):
        assert exact[name] in locked[name], name
    assert "mlx-harness" not in exact  # the checkout is installed editable after the list
    assert all(version in locked[name] for name, version in exact.items())


@NEEDS_UV
def test_the_lock_track_without_a_lock_is_one_line(tmp_path: Path) -> None:
    assert UV_FOUND is not None
    (tmp_path / "pyproject.toml").write_text((CHECKOUT / "pyproject.toml").read_text())
    with pytest.raises(PinEnvError) as info:
        tracked_requirements(LOCKED, tmp_path, InstallTool(Installer.UV, UV_FOUND))
    message = str(info.value)
    assert "\n" not in message and str(tmp_path / "uv.lock") in message and "make lock" in message


@pytest.mark.parametrize("track", list(Track))
def test_a_track_without_uv_is_one_line(track: Track) -> None:
    spec = PinEnvSpec("t", (), EnvKind.VENV, track=track)
    with pytest.raises(PinEnvError) as info:
        tracked_requirements(spec, CHECKOUT, InstallTool(Installer.PIP))
    message = str(info.value)
    assert "\n" not in message and f"track: {track.value} needs uv" in message


def test_a_plain_pin_set_resolves_nothing() -> None:
    spec = PinEnvSpec("p", ("mlx-lm==0.32.2",), EnvKind.VENV)
    assert tracked_requirements(spec, CHECKOUT, InstallTool(Installer.PIP)) is None


def test_a_resolved_list_is_installed_as_it_is() -> None:
    uv = InstallTool(Installer.UV, "/u/uv")
    got = install_commands(
        LOCKED, Path("/e"), Path("/src"), uv, ["pyyaml"], base="/b/python", listed=Path("/e/r.txt")
    )
    assert got[1] == ["/u/uv", "pip", "install", "--python", "/e/bin/python", "-r", "/e/r.txt"]
    assert got[2][-3:] == ["--no-deps", "-e", "/src"]


@NEEDS_UV
def test_latest_takes_the_newest_release_and_a_new_one_makes_a_new_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over a local folder of wheels: the newest version is chosen, a pin still wins, and a
    release appearing later gives another key; the environment holds the resolved list."""
    assert UV_FOUND is not None
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(pin_env, "harness_requirements", lambda pins, extras=(): [])
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    for version in ("1.2", "1.3"):
        write_wheel(wheels, version, 0.002, False)
    tool = InstallTool(Installer.UV, UV_FOUND)
    spec = PinEnvSpec(
        "latest", ("harness-fake-dep",), EnvKind.VENV, find_links=str(wheels), track=Track.LATEST
    )
    first = tracked_requirements(spec, CHECKOUT, tool)
    assert first is not None and _exact(first) == {"harness-fake-dep": "1.3"}
    pinned = PinEnvSpec(
        "latest",
        ("harness-fake-dep==1.2",),
        EnvKind.VENV,
        find_links=str(wheels),
        track=Track.LATEST,
    )
    assert _exact(tracked_requirements(pinned, CHECKOUT, tool) or "") == {"harness-fake-dep": "1.2"}
    write_wheel(wheels, "1.4", 0.002, False)  # released since
    second = tracked_requirements(spec, CHECKOUT, tool)
    assert second is not None and _exact(second) == {"harness-fake-dep": "1.4"}
    assert env_path(spec, CHECKOUT, first) != env_path(spec, CHECKOUT, second)
    assert env_path(spec, CHECKOUT, second) == env_path(spec, CHECKOUT, second)


@NEEDS_UV
def test_latest_with_nothing_to_resolve_from_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert UV_FOUND is not None
    monkeypatch.setattr(pin_env, "harness_requirements", lambda pins, extras=(): [])
    (tmp_path / "empty").mkdir()
    spec = PinEnvSpec(
        "latest",
        ("harness-fake-dep",),
        EnvKind.VENV,
        find_links=str(tmp_path / "empty"),
        track=Track.LATEST,
    )
    with pytest.raises(PinEnvError) as info:
        tracked_requirements(spec, CHECKOUT, InstallTool(Installer.UV, UV_FOUND))
    message = str(info.value)
    assert message.startswith("resolving the newest releases failed (") and "\n" not in message
    assert "harness-fake-dep" in message


@NEEDS_UV
@pytest.mark.slow
def test_a_locked_environment_is_built_and_matches_the_lock(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real thing: the lock's ~100 distributions into a venv (uv's cache makes it
    seconds), and that environment's own check says it matches uv.lock."""
    import subprocess

    assert UV_FOUND is not None
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    env = ensure_env(LOCKED, tool=InstallTool(Installer.UV, UV_FOUND))
    assert env.cold and (env.path / READY).is_file() and (env.path / REQUIREMENTS).is_file()
    check = (
        "from harness.runner.env_lock import environment_lock; c = environment_lock(); "
        "print(c.line()); print(*c.differences, sep='\\n')"
    )
    done = subprocess.run(
        [str(env.path / "bin" / "python"), "-c", check],
        capture_output=True,
        text=True,
        env=env.env(os.environ),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("matches uv.lock ("), done.stdout
    assert not ensure_env(LOCKED, tool=InstallTool(Installer.UV, UV_FOUND)).cold
