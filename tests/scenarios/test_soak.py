"""``soak`` against the planted server: a server that keeps 1 MiB per request fails ``growth``
with one line naming it; a clean one does not; a server whose memory cannot be read leaves the
growth not judged. And the growth fit, its verdict and the latency windows alone."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.backends.base import LoadInfo
from harness.backends.http import ServedModel, local_tokenizer
from harness.backends.openai_client import Endpoint
from harness.backends.server_memory import find_listener
from harness.core.check_types import CheckStatus
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext
from harness.scenarios.soak import SoakParams, growth_check
from harness.scenarios.soak.growth import (
    MIB,
    GrowthVerdict,
    fit_growth,
    latency_drift,
    windows,
)
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant

PARAMS = {"requests": 150, "concurrency": 2, "max_tokens": 8, "sample_every_s": 0.05}


def _run(plant: Plant | None, folder: Path, *, find: bool = True) -> Any:
    with planted_server(plant, model_dir=folder) as url:
        listener = find_listener(url) if find else None
        model = ServedModel(Endpoint(url), "url", local_tokenizer(folder), listener=listener)
        info = LoadInfo(0.0, 0, "http:url")
        ctx = ScenarioContext(model, info, 1, 1, lambda: (model, info), backend="http")
        return SCENARIOS.get("soak").run(ctx, SoakParams.model_validate(PARAMS))


def test_a_planted_leak_is_caught_and_named_in_one_line(tmp_path: Path) -> None:
    out = _run(Plant.LEAK_PER_REQUEST, tmp_path)
    (failure,) = out.failures
    assert "\n" not in failure
    assert failure.startswith("growth: server memory (rss) grew ")
    assert "MiB per 1,000 requests" in failure and "beyond the bound of 64" in failure
    growth = out.artifacts["growth"]
    assert growth["low"] * 1000 / MIB > 64  # 1 MiB a request: about 1,000 MiB per 1,000
    series = out.artifacts["memory"]
    assert series["rss_bytes"][-1] - series["rss_bytes"][0] > 40 * MIB
    assert series["requests"][-1] == 150
    names = {m.name for m in out.metrics}
    assert {"soak.growth_bytes_per_1000", "soak.memory_end_bytes", "soak.completed"} <= names


def test_a_clean_server_does_not_fail(tmp_path: Path) -> None:
    out = _run(None, tmp_path)
    assert out.failures == ()
    checks = {c.name: c.status for c in out.checks}
    assert checks["growth"] is not CheckStatus.FAIL
    assert out.artifacts["completed"] == 150 and out.artifacts["errors"] == 0
    assert [(w["first"], w["last"]) for w in out.artifacts["windows"]] == [
        (0, 49),
        (50, 99),
        (100, 149),
    ]


def test_memory_that_cannot_be_read_leaves_growth_not_judged(tmp_path: Path) -> None:
    out = _run(None, tmp_path, find=False)
    growth = next(c for c in out.checks if c.name == "growth")
    assert growth.status is CheckStatus.UNJUDGED and "server memory n/a" in growth.reason
    assert out.failures == ()


@pytest.mark.parametrize(
    ("ys", "verdict"),
    [
        ([100 * MIB] * 10, GrowthVerdict.WITHIN),
        ([100 * MIB + i * MIB for i in range(10)], GrowthVerdict.BEYOND),
        ([100 * MIB + (i % 2) * 300 * MIB for i in range(10)], GrowthVerdict.INCONCLUSIVE),
    ],
)
def test_growth_verdicts(ys: list[int], verdict: GrowthVerdict) -> None:
    growth = fit_growth([10 * i for i in range(10)], ys, 0)
    assert growth is not None and growth.verdict(64 * MIB / 1000) is verdict


def test_growth_leaves_out_the_settle_share_and_needs_samples() -> None:
    xs = list(range(10))
    ys = [0, 50 * MIB, 90 * MIB] + [90 * MIB] * 7  # a cache filling at the start
    growth = fit_growth(xs, ys, 3)
    assert growth is not None and growth.bytes_per_request == 0 and growth.from_request == 3
    assert fit_growth([1, 2, 3], [1, 2, 3], 0) is None  # too few readings
    assert fit_growth([5] * 6, [1, 2, 3, 4, 5, 6], 0) is None  # one request count


def test_growth_check_words() -> None:
    assert growth_check(None, 64, "rss", "remote server").status is CheckStatus.UNJUDGED
    assert "too few" in growth_check(None, 64, "rss", None).reason
    # a steep climb over a few requests is caches filling, not yet a verdict
    short = fit_growth(list(range(2, 13)), [i * 13 * MIB for i in range(11)], 0)
    verdict = growth_check(short, 64, "rss", None)
    assert verdict.status is CheckStatus.UNJUDGED and "spans 10 requests" in verdict.reason
    long = fit_growth(list(range(0, 200, 10)), [i * MIB for i in range(20)], 0)
    assert growth_check(long, 64, "rss", None).status is CheckStatus.FAIL


def test_windows_and_drift() -> None:
    e2e = [1.0] * 100 + [2.0] * 100
    found = windows(e2e, e2e, 2)
    assert [(w.first, w.last) for w in found] == [(0, 99), (100, 199)]
    drift = latency_drift(found)
    assert drift is not None and drift.quantile == 99 and drift.ratio == 2.0
    few = windows([1.0, 1.5, None, 2.0, 3.0, 4.0], [None] * 6, 2)
    small = latency_drift(few)
    assert small is not None and small.quantile == 50  # p90 and p99 need more requests
