"""The device's ceilings: measured with kernels that reach the hardware (best burst), in a
process of their own, with the conditions recorded; cached per machine fingerprint while fresh
and of this format. No speed is asserted: only that a figure is there and what gave it."""

from __future__ import annotations

import json
import os
import sys
import time
from collections import namedtuple
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends import bandwidth, bandwidth_conditions, bandwidth_kernels
from harness.backends.bandwidth_conditions import BusyProcess, Conditions

SMALL = 4 * 2**20  # keeps the test fast; the real buffer is far larger than the caches
DAY_S = 86400.0

KERNELS = {  # mlx's device kind -> (read kernels, MLX's own, FLOP kernels)
    "cpu": (
        {"numpy_sum", "numpy_gemv"}
        | ({"numpy_sum_threads"} if (os.cpu_count() or 1) > 1 else set()),
        {"gemv", "sum"},
        {"numpy_sgemm", "mlx_matmul"},
    ),
    "gpu": ({"mlx_sum", "mlx_copy"}, {"gemv", "sum"}, {"mlx_matmul"}),
}


@pytest.fixture()
def mlx_loaded() -> None:
    import mlx.core  # noqa: F401  (the worker has it loaded by the backend)


@pytest.fixture()
def small_measure(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Measurements run in this process on a small buffer; each one's reason, in order."""
    reasons: list[str] = []

    def measure_in_child(reason: str, *_: object) -> tuple[bandwidth.Bandwidth | None, str]:
        reasons.append(reason)
        return bandwidth.measure(SMALL, 2, reason), ""

    monkeypatch.setattr(bandwidth, "measure_in_child", measure_in_child)
    return reasons


def test_measures_each_kernel_and_takes_the_best(mlx_loaded: None) -> None:
    found = bandwidth.measure(SMALL, 2, "a test")
    assert found is not None
    read, own, flops = KERNELS[found.device]
    assert found.device == bandwidth.device_kind()
    assert set(found.kernels_bytes_per_s) == read
    assert set(found.mlx_kernels_bytes_per_s) == own
    assert set(found.flops_kernels_per_s) == flops
    assert found.bytes_per_s == max(found.kernels_bytes_per_s.values()) > 0
    assert found.kernels_bytes_per_s[found.kernel] == found.bytes_per_s
    assert found.flops_per_s == found.flops_kernels_per_s[found.flops_kernel] > 0
    assert found.mlx_gemv_bytes_per_s > 0
    assert (found.source, found.measured_in, found.reason) == ("measured", "worker", "a test")
    assert found.fingerprint == bandwidth.fingerprint(found.machine)
    assert found.to_json()["statistic"] == "best"


def test_the_conditions_are_recorded(mlx_loaded: None) -> None:
    before = time.time()
    found = bandwidth.measure(SMALL, 2)
    assert found is not None
    conditions = found.conditions
    assert conditions.cpu_count == (os.cpu_count() or 1)
    assert conditions.wall_s > 0
    assert before <= found.measured_unix_s <= time.time()
    if hasattr(os, "getloadavg"):
        assert conditions.load_average is not None and len(conditions.load_average) == 3
    assert conditions.others_cpu_share is None or 0.0 <= conditions.others_cpu_share <= 1.0
    assert all(
        p.cpu_percent >= bandwidth_conditions.BUSY_PERCENT for p in conditions.busy_processes
    )


def test_measured_in_a_process_of_its_own(mlx_loaded: None) -> None:
    found, why_not = bandwidth.measure_in_child("a test", SMALL, 2)
    assert found is not None, why_not
    assert (found.measured_in, found.source, found.reason) == ("child", "measured", "a test")
    assert found.bytes_per_s > 0
    assert found.fingerprint == bandwidth.fingerprint(bandwidth.machine_facts())
    assert found.device == bandwidth.device_kind()


def test_json_round_trip(mlx_loaded: None) -> None:
    found = bandwidth.measure(SMALL, 2)
    assert found is not None
    again = bandwidth.Bandwidth.from_json(json.loads(json.dumps(found.to_json())), "cached")
    assert again.to_json() == {**found.to_json(), "source": "cached"}


@pytest.mark.parametrize(
    ("elapsed_s", "expected"),
    [
        ([1.0, 4.0, 2.0, 8.0], 8.0 / 2.0),  # the warm-up is not timed; the fastest burst wins
        ([1.0, 0.5, 0.5, 0.5], 8.0 / 0.5),
        ([0.1, 3.0, 2.0, 1.0], 8.0 / 1.0),  # a fast warm-up does not count
    ],
)
def test_best_rate_is_the_fastest_burst(elapsed_s: list[float], expected: float) -> None:
    clock = iter(_stamps(elapsed_s[1:]))
    runs: list[int] = []
    rate = bandwidth_kernels.best_rate(
        lambda: runs.append(1), 8.0, len(elapsed_s) - 1, clock=lambda: next(clock)
    )
    assert rate == pytest.approx(expected)
    assert len(runs) == len(elapsed_s)  # one warm-up, then the bursts


def _stamps(elapsed_s: list[float]) -> Iterator[float]:
    now = 0.0
    for step in elapsed_s:
        yield now
        now += step
        yield now


def _cached(measured_unix_s: float, others_cpu_share: float = 0.1) -> bandwidth.Bandwidth:
    return bandwidth.Bandwidth(
        bytes_per_s=2e10,
        kernel="numpy_sum_threads",
        kernels_bytes_per_s={"numpy_sum_threads": 2e10},
        mlx_kernels_bytes_per_s={"gemv": 5e9},
        flops_per_s=1e11,
        flops_kernel="numpy_sgemm",
        flops_kernels_per_s={"numpy_sgemm": 1e11},
        device="cpu",
        threads=2,
        buffer_bytes=SMALL,
        bursts=2,
        conditions=Conditions((0.5, 0.5, 0.5), others_cpu_share, (BusyProcess("x", 50.0),), 2, 1.0),
        fingerprint="f",
        machine={},
        measured_unix_s=measured_unix_s,
        reason="a test",
        source="cached",
    )


NOW = 1_800_000_000.0


@pytest.mark.parametrize(
    ("cached", "stale"),
    [
        (None, "no cached figure"),
        (_cached(NOW), None),
        (_cached(NOW - 6 * DAY_S), None),
        (_cached(NOW - bandwidth.MAX_AGE_S + 1), None),
        (_cached(NOW - bandwidth.MAX_AGE_S - 1), "days old"),
        (_cached(NOW - 30 * DAY_S), "30.0 days old"),
        (_cached(NOW + 10), None),  # clocks differ a little
        (_cached(NOW + DAY_S), "in the future"),
        (_cached(NOW - 2 * 3600, 0.8), "kept 80% of the CPUs busy, 2.0 hours ago"),
        (_cached(NOW - 600, 0.8), None),  # disturbed, but recent
        (_cached(NOW - 2 * 3600, bandwidth.BUSY_SHARE), None),  # not over the line
    ],
)
def test_cache_freshness(cached: bandwidth.Bandwidth | None, stale: str | None) -> None:
    reason = bandwidth.stale_reason(cached, NOW)
    assert (reason is None) == (stale is None)
    assert stale is None or stale in str(reason)


def test_cached_per_fingerprint(
    mlx_loaded: None, small_measure: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = bandwidth.read_bandwidth(tmp_path)
    second = bandwidth.read_bandwidth(tmp_path)
    assert first is not None and second is not None
    assert small_measure == ["no cached figure of this format for this machine"]
    assert (first.source, second.source) == ("measured", "cached")
    assert second.to_json() == {**first.to_json(), "source": "cached"}
    assert bandwidth.cache_file(first.fingerprint, tmp_path).is_file()
    facts = {**bandwidth.machine_facts(), "cpu": "another CPU"}
    monkeypatch.setattr(bandwidth, "machine_facts", lambda: facts)
    third = bandwidth.read_bandwidth(tmp_path)
    assert third is not None and third.source == "measured"  # another machine: measured again
    assert len(small_measure) == 2


def test_an_old_figure_is_measured_again(
    mlx_loaded: None, small_measure: list[str], tmp_path: Path
) -> None:
    first = bandwidth.read_bandwidth(tmp_path)
    assert first is not None
    later = first.measured_unix_s + bandwidth.MAX_AGE_S + DAY_S
    again = bandwidth.read_bandwidth(tmp_path, now_unix_s=later)
    assert again is not None and again.source == "measured"
    assert "8.0 days old" in small_measure[-1] and again.reason == small_measure[-1]
    cached = bandwidth.read_bandwidth(tmp_path, now_unix_s=again.measured_unix_s + 60)
    assert cached is not None and cached.source == "cached" and len(small_measure) == 2


OLD_FORMAT = {  # what the harness cached before: MLX's own kernels, median of 7
    "format": 2,
    "bytes_per_s": 6.1e9,
    "kernel": "gemv",
    "kernels_bytes_per_s": {"sum": 4.5e9, "gemv": 6.1e9},
    "buffer_bytes": 256 * 2**20,
    "repeats": 7,
    "fingerprint": "f",
    "machine": {},
    "measured_unix_s": 1.0,
    "flops_per_s": 6e10,
}


@pytest.mark.parametrize(
    "content",
    [
        "",
        "not json",
        "[]",
        json.dumps({"format": 99}),
        json.dumps({"format": 3}),
        json.dumps(OLD_FORMAT),
        json.dumps({**OLD_FORMAT, "measured_unix_s": time.time()}),
    ],
    ids=["empty", "not-json", "list", "format-99", "format-3-empty", "old", "old-fresh"],
)
def test_unreadable_or_older_format_cache_is_measured_again(
    mlx_loaded: None, small_measure: list[str], tmp_path: Path, content: str
) -> None:
    path = bandwidth.cache_file(bandwidth.fingerprint(bandwidth.machine_facts()), tmp_path)
    path.parent.mkdir(parents=True)
    path.write_text(content)
    found = bandwidth.read_bandwidth(tmp_path)
    assert found is not None and found.source == "measured"
    assert json.loads(path.read_text())["format"] == bandwidth.CACHE_FORMAT == 3


def test_remeasure_whatever_the_cache_holds(
    mlx_loaded: None, small_measure: list[str], tmp_path: Path
) -> None:
    bandwidth.read_bandwidth(tmp_path)
    found = bandwidth.read_bandwidth(tmp_path, remeasure="a share above 100%")
    assert found is not None and (found.source, found.reason) == ("measured", "a share above 100%")
    assert small_measure[-1] == "a share above 100%"
    cached = bandwidth.read_bandwidth(tmp_path)
    assert cached is not None and cached.reason == "a share above 100%"  # it replaced the cache


def test_a_failed_child_falls_back_to_the_worker_except_when_remeasuring(
    mlx_loaded: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = bandwidth.measure
    monkeypatch.setattr(bandwidth, "measure_in_child", lambda reason, *_: (None, "it crashed"))
    monkeypatch.setattr(bandwidth, "measure", lambda reason: real(SMALL, 2, reason))
    found = bandwidth.read_bandwidth(tmp_path)
    assert found is not None and found.measured_in == "worker"
    assert found.reason.endswith("in the worker, as it crashed")
    assert bandwidth.read_bandwidth(tmp_path, remeasure="a share above 100%") is None


Times = namedtuple("Times", "user nice system idle iowait steal guest guest_nice")


@pytest.mark.parametrize(
    ("before", "after", "own_s", "share"),
    [
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(1, 0, 1, 2, 0, 0, 0, 0), 1.0, 0.25),
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(1, 0, 1, 2, 0, 0, 0, 0), 2.0, 0.0),
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(2, 0, 0, 0, 1, 1, 2, 0), 0.0, 0.75),  # steal busy
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(0, 0, 0, 4, 0, 0, 0, 0), 0.0, 0.0),
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(0, 0, 0, 0, 0, 0, 0, 0), 0.0, None),
        (Times(0, 0, 0, 0, 0, 0, 0, 0), Times(1, 0, 0, 0, 0, 0, 0, 0), 3.0, 0.0),  # clamped
    ],
)
def test_other_processes_cpu_share(before: Times, after: Times, own_s: float, share: float) -> None:
    found = bandwidth_conditions.others_share(
        bandwidth_conditions.busy_and_total_s(before),
        bandwidth_conditions.busy_and_total_s(after),
        own_s,
    )
    assert found == (pytest.approx(share) if share is not None else None)


def test_the_watch_sees_a_busy_neighbour() -> None:
    done = bandwidth_conditions.watch()
    end = time.perf_counter() + 0.2
    while time.perf_counter() < end:
        pass  # this process is busy: not counted as another's
    conditions = done()
    assert conditions.wall_s >= 0.2
    assert conditions.others_cpu_share is None or conditions.others_cpu_share < 1.0
    assert Conditions.from_json(conditions.to_json()) == conditions


def test_none_without_mlx(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delitem(sys.modules, "mlx.core", raising=False)
    assert bandwidth.read_bandwidth(tmp_path) is None
    assert bandwidth.measure(SMALL, 1) is None
