"""Read bandwidth: measured with MLX kernels, cached per machine fingerprint."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from harness.backends import bandwidth

SMALL = 4 * 2**20  # keeps the test fast; the real buffer is far larger than the caches


@pytest.fixture()
def mlx_loaded() -> None:
    import mlx.core  # noqa: F401  (the worker has it loaded by the backend)


@pytest.fixture()
def small_measure(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls: list[int] = []
    real = bandwidth.measure

    def measure(buffer_bytes: int = SMALL, repeats: int = 2) -> bandwidth.Bandwidth | None:
        calls.append(1)
        return real(SMALL, 2)

    monkeypatch.setattr(bandwidth, "measure", measure)
    return calls


def test_measures_each_kernel(mlx_loaded: None) -> None:
    found = bandwidth.measure(SMALL, 2)
    assert found is not None
    assert set(found.kernels_bytes_per_s) == {"sum", "gemv"}
    assert found.bytes_per_s == max(found.kernels_bytes_per_s.values()) > 0
    assert found.kernel in found.kernels_bytes_per_s
    assert found.source == "measured"
    assert found.fingerprint == bandwidth.fingerprint(found.machine)
    assert found.flops_per_s > 0


def test_cached_per_fingerprint(
    mlx_loaded: None, small_measure: list[int], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = bandwidth.read_bandwidth(tmp_path)
    second = bandwidth.read_bandwidth(tmp_path)
    assert first is not None and second is not None
    assert len(small_measure) == 1
    assert (first.source, second.source) == ("measured", "cached")
    assert second.bytes_per_s == first.bytes_per_s
    assert second.flops_per_s == first.flops_per_s
    assert bandwidth.cache_file(first.fingerprint, tmp_path).is_file()
    facts = {**bandwidth.machine_facts(), "cpu": "another CPU"}
    monkeypatch.setattr(bandwidth, "machine_facts", lambda: facts)
    third = bandwidth.read_bandwidth(tmp_path)
    assert third is not None and third.source == "measured"  # another machine: measured again
    assert len(small_measure) == 2


@pytest.mark.parametrize(
    "content", ["", "not json", "[]", json.dumps({"format": 99}), json.dumps({"format": 2})]
)
def test_unreadable_cache_is_measured_again(
    mlx_loaded: None, small_measure: list[int], tmp_path: Path, content: str
) -> None:
    path = bandwidth.cache_file(bandwidth.fingerprint(bandwidth.machine_facts()), tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    found = bandwidth.read_bandwidth(tmp_path)
    assert found is not None and found.source == "measured"
    assert json.loads(path.read_text())["format"] == bandwidth.CACHE_FORMAT


def test_none_without_mlx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delitem(sys.modules, "mlx.core", raising=False)
    assert bandwidth.read_bandwidth(tmp_path) is None
    assert bandwidth.measure(SMALL, 1) is None
