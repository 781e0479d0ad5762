"""``throughput`` with ``depth`` and the roofline, on a real tiny llama and on the fake."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from harness.backends import bandwidth
from harness.backends.bandwidth_conditions import Conditions
from harness.backends.fake import BACKEND as FAKE
from harness.backends.mlx_lm import BACKEND, MlxLmModel
from harness.core.types import Metric
from harness.models.cache_dir import CACHE_ENV
from harness.scenarios import throughput
from harness.scenarios.base import ScenarioContext
from harness.scenarios.throughput import SCENARIO, ThroughputParams


@pytest.fixture(scope="module")
def loaded(tiny_llama: Path):  # type: ignore[no-untyped-def]
    return BACKEND.load(tiny_llama)


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bandwidth goes to a cache of the test's own, measured on a small buffer in this
    process (a process of its own is tested in tests/backends/test_bandwidth.py)."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    real = bandwidth.measure
    monkeypatch.setattr(
        bandwidth, "measure_in_child", lambda reason, *_: (real(4 * 2**20, 2, reason), "")
    )


def context(model: object, info: object, repeats: int = 2) -> ScenarioContext:
    return ScenarioContext(model, info, repeats, 1, lambda: (model, info), "mlx_lm")  # type: ignore[arg-type]


def by_name(metrics: tuple[Metric, ...]) -> dict[str, Metric]:
    return {m.name: m for m in metrics}


@pytest.mark.parametrize("depth", [0, 16])
def test_roofline_at_depth(loaded, depth: int) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    params = ThroughputParams(prompt_tokens=8, gen_tokens=5, depth=depth)
    out = SCENARIO.run(context(model, info), params)
    assert out.skip_reason is None and not out.failures
    found = by_name(out.metrics)
    assert set(found) == {spec.name for spec in SCENARIO.metrics}
    assert out.artifacts["depth_tokens"] == depth
    assert out.artifacts["prompt_tokens"] == 8
    assert out.artifacts["generated_tokens"] == [5, 5]
    traffic = model.decode_traffic()
    mean_context = depth + 8 + 2.5  # decode steps 1..4 after depth + prompt
    per_token = found[throughput.BYTES_PER_TOKEN.name].samples[0]
    assert per_token == pytest.approx(traffic.bytes_per_token(mean_context))
    assert out.artifacts["decode_traffic"]["mean_context_tokens"] == mean_context
    rate = out.artifacts["bandwidth"]["bytes_per_s"]
    ceiling = found[throughput.CEILING.name].samples[0]
    assert ceiling == pytest.approx(rate / per_token)
    decode = found[throughput.DECODE.name].samples
    share = found[throughput.SHARE.name].samples
    assert share == pytest.approx([d / ceiling for d in decode])
    assert len(found[throughput.SHARE.name].warmup_samples) == 1
    flops = out.artifacts["bandwidth"]["flops_per_s"]
    compute = found[throughput.PREFILL_CEILING.name].samples[0]
    assert compute == pytest.approx(flops / traffic.prefill_flops_per_token)
    prefill = found[throughput.PREFILL.name].samples
    assert found[throughput.PREFILL_SHARE.name].samples == pytest.approx(
        [p / compute for p in prefill]
    )
    gemv = out.artifacts["bandwidth"]["mlx_kernels_bytes_per_s"]["gemv"]
    assert found[throughput.KERNEL_EFFICIENCY.name].samples == pytest.approx(
        [d * per_token / gemv for d in decode]
    )
    assert "remeasured" not in out.artifacts and "ceiling_invalid" not in out.artifacts


def test_deeper_context_reads_more(loaded) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    figures = []
    for depth in (0, 64):
        out = SCENARIO.run(context(model, info, 1), ThroughputParams(prompt_tokens=4, depth=depth))
        figures.append(by_name(out.metrics)[throughput.BYTES_PER_TOKEN.name].samples[0])
    kv = sum(layer.bytes_per_token for layer in model.decode_traffic().layers)
    assert figures[1] - figures[0] == pytest.approx(64 * kv)


def test_depth_generates_what_the_whole_context_would(loaded) -> None:  # type: ignore[no-untyped-def]
    """The cache copy at depth holds the context: greedy tokens equal those of one long prompt,
    and a run on a copy leaves the filled cache as it was."""
    model, _ = loaded
    assert isinstance(model, MlxLmModel)
    text = model.encode("one two three four five six seven eight nine ten eleven twelve")
    head, tail = text[:8], text[8:]
    base = throughput.filled_cache(model, head)
    cache = throughput.fresh_copy(model, base, head)
    at_depth = list(model.generate_cached(cache, tail, max_tokens=6))
    assert at_depth == list(model.stream_tokens(text, max_tokens=6))
    assert model.cache_offset(base) == 8
    assert model.cache_offset(cache) > 8


def test_fake_has_no_roofline_and_no_depth(fake_model: Path) -> None:
    model, info = FAKE.load(fake_model)
    ctx = ScenarioContext(model, info, 2, 0, lambda: (model, info), "fake")
    out = SCENARIO.run(ctx, ThroughputParams(prompt_tokens=8, gen_tokens=4))
    names = {m.name for m in out.metrics}
    assert throughput.DECODE.name in names and throughput.SHARE.name not in names
    assert str(out.artifacts["roofline"]).startswith("not available")
    deep = SCENARIO.run(ctx, ThroughputParams(prompt_tokens=8, gen_tokens=4, depth=32))
    assert deep.skip_reason == "capability_missing: backend fake has no prompt cache"
    assert deep.metrics == ()


def test_workload_counts_depth() -> None:
    params = ThroughputParams(prompt_tokens=128, gen_tokens=32, depth=1024)
    assert SCENARIO.workload(params).context_tokens == 1024 + 128 + 32


def test_peaks_reset_after_a_fresh_measurement_only(
    loaded, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    """The bandwidth buffer must not count in the first case's memory peak."""
    model, info = loaded
    resets: list[int] = []
    monkeypatch.setattr(throughput, "reset_peaks", lambda: resets.append(1) or "since case start")
    params = ThroughputParams(prompt_tokens=4, gen_tokens=2)
    first = SCENARIO.run(context(model, info, 1), params)
    second = SCENARIO.run(context(model, info, 1), params)
    assert first.artifacts["bandwidth"]["source"] == "measured"
    assert first.artifacts["bandwidth"]["measured_in"] == "worker"
    assert second.artifacts["bandwidth"]["source"] == "cached"
    assert resets == [1]


def test_a_measurement_of_its_own_process_leaves_the_peaks(
    loaded, monkeypatch: pytest.MonkeyPatch
) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    resets: list[int] = []
    monkeypatch.setattr(throughput, "reset_peaks", lambda: resets.append(1) or "since case start")
    monkeypatch.setattr(bandwidth, "measure_in_child", lambda reason, *_: (figure(1e12), ""))
    out = SCENARIO.run(context(model, info, 1), ThroughputParams(prompt_tokens=4, gen_tokens=2))
    assert out.artifacts["bandwidth"]["measured_in"] == "child"
    assert resets == []


def figure(bytes_per_s: float, flops_per_s: float = 1e15) -> bandwidth.Bandwidth:
    """A measured figure of these ceilings (MLX's gemv at a tenth of the read ceiling)."""
    return bandwidth.Bandwidth(
        bytes_per_s=bytes_per_s,
        kernel="numpy_sum_threads",
        kernels_bytes_per_s={"numpy_sum_threads": bytes_per_s},
        mlx_kernels_bytes_per_s={"gemv": bytes_per_s / 10},
        flops_per_s=flops_per_s,
        flops_kernel="numpy_sgemm",
        flops_kernels_per_s={"numpy_sgemm": flops_per_s},
        device="cpu",
        threads=2,
        buffer_bytes=4 * 2**20,
        bursts=2,
        conditions=Conditions(None, None, (), 2, 0.1),
        fingerprint=bandwidth.fingerprint(bandwidth.machine_facts()),
        machine=bandwidth.machine_facts(),
        measured_unix_s=time.time(),
        reason="a test",
        measured_in="child",
    )


FAST, SLOW = 1e15, 1.0  # bytes/s (or FLOP/s): no run can pass the first, every run the second


@pytest.mark.parametrize(
    ("first", "again", "invalid", "remeasured"),
    [
        ((FAST, FAST), [], set(), False),  # under both ceilings: measured once
        ((SLOW, FAST), [(FAST, FAST)], set(), True),  # re-measured, now under: valid
        ((SLOW, FAST), [(SLOW, FAST)], {"decode"}, True),  # still over: invalid
        ((FAST, SLOW), [(FAST, SLOW)], {"prefill"}, True),
        ((SLOW, SLOW), [(SLOW, SLOW)], {"decode", "prefill"}, True),
        ((SLOW, FAST), [None], {"decode"}, True),  # re-measuring failed: still invalid
    ],
    ids=["under", "remeasured-valid", "decode-invalid", "prefill-invalid", "both", "failed"],
)
def test_a_share_above_100_percent_remeasures_once_then_is_invalid(
    loaded,  # type: ignore[no-untyped-def]
    monkeypatch: pytest.MonkeyPatch,
    first: tuple[float, float],
    again: list[tuple[float, float] | None],
    invalid: set[str],
    remeasured: bool,
) -> None:
    model, info = loaded
    figures = [figure(*first), *(figure(*f) if f else None for f in again)]
    reasons: list[str] = []

    def measure_in_child(reason: str, *_: object) -> tuple[bandwidth.Bandwidth | None, str]:
        reasons.append(reason)
        found = figures[len(reasons) - 1]
        return found, "" if found else "it crashed"

    monkeypatch.setattr(bandwidth, "measure_in_child", measure_in_child)
    out = SCENARIO.run(context(model, info), ThroughputParams(prompt_tokens=4, gen_tokens=3))
    assert len(reasons) == 1 + len(again)
    assert all(r.startswith(throughput.SHARE_REASON) for r in reasons[1:])
    found = by_name(out.metrics)
    shares = {"decode": throughput.SHARE.name, "prefill": throughput.PREFILL_SHARE.name}
    assert {kind for kind, name in shares.items() if name not in found} == invalid
    assert set(out.artifacts.get("ceiling_invalid", {})) == invalid
    assert ("remeasured" in out.artifacts) == remeasured
    for name in shares.values():
        if name in found:
            assert all(s <= 1.0 for s in found[name].samples + found[name].warmup_samples)
    assert throughput.CEILING.name in found  # the ceiling is kept: it is what was measured
    if again and again[-1] is None:
        assert out.artifacts["remeasured"]["done"] is False
        assert "re-measuring it failed" in out.artifacts["ceiling_invalid"]["decode"]["reason"]


class StubCaching:
    eos_token_ids = frozenset({7})

    def generate_cached(self, cache: object, tokens: list[int], *, max_tokens: int):  # type: ignore[no-untyped-def]
        yield from [3, 5, 7, 9][:max_tokens]


@pytest.mark.parametrize(("ignore_eos", "count"), [(True, 4), (False, 2)])
def test_depth_run_stops_at_eos_only_when_asked(ignore_eos: bool, count: int) -> None:
    stamps = throughput.timed_run_at_depth(StubCaching(), None, [1], 4, ignore_eos)  # type: ignore[arg-type]
    assert len(stamps) == count


def test_unset_depth_keeps_runs_from_before_comparable() -> None:
    """compare reads a key a record lacks as None: an unset depth must dump as None."""
    dumped = ThroughputParams(prompt_tokens=8).model_dump()
    before = {k: v for k, v in dumped.items() if k != "depth"}
    assert [k for k in dumped if before.get(k) != dumped[k]] == []
    assert ThroughputParams(prompt_tokens=8).depth_tokens == 0
