"""Pin-set environments: keyed by what they hold, built once (marker written last, naming the
installer, uv or pip), reused, rebuilt when a build did not finish; a failed install is one line
naming its log."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from harness.runner.pin_env import (
    INSTALLER_ENV,
    READY,
    EnvKind,
    Installer,
    InstallTool,
    PinEnvError,
    PinEnvSpec,
    choose_installer,
    ensure_env,
    env_key,
    env_path,
    find_uv,
    harness_requirements,
    install_commands,
)
from tests.runner.fake_dep_index import write_index

CHECKOUT = Path(__file__).resolve().parents[2]
BASE = PinEnvSpec("a", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links="/w")
UV_FOUND = find_uv(os.environ, sys.executable)
NEEDS_UV = pytest.mark.skipif(UV_FOUND is None, reason="no uv beside this Python or on PATH")
INSTALLERS = [
    pytest.param(Installer.PIP, id="pip"),
    pytest.param(Installer.UV, id="uv", marks=NEEDS_UV),
]


def tool_for(installer: Installer) -> InstallTool:
    return InstallTool(installer, UV_FOUND if installer is Installer.UV else None)


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


@pytest.mark.parametrize("installer", INSTALLERS)
def test_failed_install_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: Installer
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    wheels = write_index(tmp_path / "wheels")
    spec = PinEnvSpec("fd", ("harness-fake-dep==7.0",), EnvKind.OVERLAY, find_links=str(wheels))
    with pytest.raises(PinEnvError) as info:
        ensure_env(spec, tool=tool_for(installer))
    assert "\n" not in str(info.value)
    assert str(info.value).startswith(f"installing with {installer.value} failed (")
    assert "error" in str(info.value).lower()  # the installer's error line, not the command
    assert "harness-fake-dep==7.0" in str(info.value)
    assert str(env_path(spec, CHECKOUT) / "install.log") in str(info.value)
    assert not (env_path(spec, CHECKOUT) / READY).exists()


def test_a_pin_replaces_the_harness_requirement_on_it() -> None:
    kept = harness_requirements(["MLX-LM==0.31.3"])
    assert not any(r.lower().startswith("mlx-lm") for r in kept)
    assert any(r.startswith("pydantic") for r in kept)
    assert all("extra" not in r for r in kept)


def _names(requirements: list[str]) -> set[str]:
    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    return {canonicalize_name(Requirement(r).name) for r in requirements}


@pytest.mark.parametrize(
    ("extras", "present", "absent"),
    [
        ((), {"mlx-lm", "pydantic"}, {"mlx-vlm", "mlx-audio", "ruff"}),
        (("vlm",), {"mlx-lm", "mlx-vlm"}, {"mlx-audio", "ruff"}),
        # "all" is mlx-harness[vlm,audio]: it brings both extras' requirements, not itself
        (("all",), {"mlx-vlm", "mlx-audio", "webrtcvad"}, {"mlx-harness", "ruff"}),
        (("dev", "audio"), {"ruff", "mlx-audio"}, {"mlx-vlm"}),
    ],
    ids=["none", "vlm", "all", "dev_audio"],
)
def test_extras_bring_their_requirements(
    extras: tuple[str, ...], present: set[str], absent: set[str]
) -> None:
    names = _names(harness_requirements([], extras))
    assert present <= names and not absent & names


UV = InstallTool(Installer.UV, "/u/uv")
PIP = InstallTool(Installer.PIP)
PIN = "mlx-lm==0.32.2"
ENV = "/c/envs/a-1"
PIP_IN = f"{ENV}/bin/python -m pip install --disable-pip-version-check --no-input"
UV_IN = f"/u/uv pip install --python {ENV}/bin/python"
UV_VENV = f"/u/uv venv --no-project --allow-existing --python /b/python {ENV}"
INDEX = "https://i/simple"


@pytest.mark.parametrize(
    ("tool", "spec", "expected"),
    [
        (
            PIP,
            PinEnvSpec("a", (PIN,), EnvKind.VENV, find_links="/w"),
            [
                f"/b/python -m venv {ENV}",
                f"{PIP_IN} --find-links /w --no-index {PIN} pyyaml",
                f"{PIP_IN} --find-links /w --no-index --no-deps -e /src",
            ],
        ),
        (
            UV,
            PinEnvSpec("a", (PIN,), EnvKind.VENV),
            [UV_VENV, f"{UV_IN} {PIN} pyyaml", f"{UV_IN} --no-deps -e /src"],
        ),
        (
            UV,
            PinEnvSpec("a", (PIN,), EnvKind.VENV, index_url=INDEX, find_links="/w"),
            [
                UV_VENV,
                f"{UV_IN} --default-index {INDEX} --find-links /w {PIN} pyyaml",
                f"{UV_IN} --default-index {INDEX} --find-links /w --no-deps -e /src",
            ],
        ),
        (
            PIP,
            PinEnvSpec("a", (PIN,), EnvKind.OVERLAY, index_url=INDEX),
            [
                "/v/python -m pip install --disable-pip-version-check --no-input "
                f"--index-url {INDEX} --target {ENV}/site --no-deps {PIN}"
            ],
        ),
        (
            UV,
            PinEnvSpec("a", (PIN,), EnvKind.OVERLAY, find_links="/w"),
            [
                "/u/uv pip install --python /v/python "
                f"--find-links /w --no-index --target {ENV}/site --no-deps {PIN}"
            ],
        ),
    ],
    ids=["pip-venv-links", "uv-venv", "uv-venv-index-links", "pip-overlay-index", "uv-overlay"],
)
def test_commands_of_each_installer_and_kind(
    tool: InstallTool, spec: PinEnvSpec, expected: list[str]
) -> None:
    got = install_commands(
        spec, Path(ENV), Path("/src"), tool, ["pyyaml"], python="/v/python", base="/b/python"
    )
    assert got == [line.split() for line in expected]


@pytest.mark.parametrize(
    ("setting", "uv_at", "expected"),
    [
        (None, (), (Installer.PIP, None)),
        (None, ("beside",), (Installer.UV, "beside")),
        (None, ("path",), (Installer.UV, "path")),
        (None, ("path", "beside"), (Installer.UV, "beside")),
        ("", ("path",), (Installer.UV, "path")),
        ("pip", ("beside", "path"), (Installer.PIP, None)),
        ("UV", ("path",), (Installer.UV, "path")),
        ("uv", (), f"{INSTALLER_ENV}=uv but no uv is beside"),
        (
            "conda",
            ("path",),
            f"{INSTALLER_ENV}='conda' is not an installer; set it to one of uv, pip",
        ),
    ],
    ids=["none", "beside", "path", "beside_first", "empty", "pip", "upper", "uv_missing", "bad"],
)
def test_installer_choice(
    tmp_path: Path,
    setting: str | None,
    uv_at: tuple[str, ...],
    expected: tuple[Installer, str | None] | str,
) -> None:
    for where in ("beside", "path"):
        (tmp_path / where).mkdir()
    for where in uv_at:
        (tmp_path / where / "uv").write_text("#!/bin/sh\n")
        (tmp_path / where / "uv").chmod(0o755)
    environ = {"PATH": str(tmp_path / "path")}
    if setting is not None:
        environ[INSTALLER_ENV] = setting
    python = str(tmp_path / "beside" / "python")
    if isinstance(expected, str):
        with pytest.raises(PinEnvError) as info:
            choose_installer(environ, python)
        assert str(info.value).startswith(expected) and "\n" not in str(info.value)
        return
    installer, found_at = expected
    uv = str(tmp_path / found_at / "uv") if found_at else None
    assert choose_installer(environ, python) == InstallTool(installer, uv)


def test_a_bad_installer_setting_stops_ensure_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(INSTALLER_ENV, "poetry")
    with pytest.raises(PinEnvError, match=f"^{INSTALLER_ENV}='poetry' is not an installer"):
        ensure_env(BASE)


@pytest.mark.parametrize("installer", INSTALLERS)
def test_each_installer_builds_and_records_itself(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, installer: Installer
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    wheels = write_index(tmp_path / "wheels")
    spec = PinEnvSpec("fd", ("harness-fake-dep==1.3",), EnvKind.OVERLAY, find_links=str(wheels))
    cold = ensure_env(spec, tool=tool_for(installer))
    assert cold.cold and cold.installer is installer
    assert (cold.path / "site" / "harness_fake_dep-1.3.dist-info").is_dir()
    assert json.loads((cold.path / READY).read_text())["installer"] == installer.value
    log = (cold.path / "install.log").read_text()
    assert log.startswith(f"$ {tool_for(installer).uv or sys.executable} ")
    other = Installer.PIP if installer is Installer.UV else Installer.UV
    warm = ensure_env(spec, tool=InstallTool(other, "/nowhere/uv"))  # not part of the key
    assert not warm.cold and warm.installer is installer and warm.path == cold.path


@pytest.mark.parametrize(
    ("marker", "cold", "installer"),
    [
        ('{"name": "fd", "pins": []}\n', False, Installer.PIP),  # written before the field
        ('{"name": "fd", "pins": [], "installer": "uv"}\n', False, Installer.UV),
        ('{"name": "fd", "installer": "conda"}\n', True, Installer.PIP),
        ('{"name": "fd", "pi', True, Installer.PIP),
        ("[]", True, Installer.PIP),
    ],
    ids=["old", "uv", "unknown", "torn", "not_object"],
)
def test_marker_says_who_built_it_or_the_build_is_redone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, marker: str, cold: bool, installer: Installer
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    wheels = write_index(tmp_path / "wheels")
    spec = PinEnvSpec("fd", ("harness-fake-dep==1.2",), EnvKind.OVERLAY, find_links=str(wheels))
    built = ensure_env(spec, tool=PIP)
    (built.path / READY).write_text(marker)
    again = ensure_env(spec, tool=PIP)
    assert (again.cold, again.installer) == (cold, installer)
