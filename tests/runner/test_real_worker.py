"""The throughput and load scenarios through a real mlx-lm worker subprocess."""

from __future__ import annotations

import dataclasses
import os
import signal
import threading
import time
from pathlib import Path

from harness.core.types import Case, ModelRef, ModelSource, Status
from harness.runner.active_run import ActiveRun


def _case(path: Path, scenario: str, params: dict, timeout_s: float = 120.0) -> Case:  # type: ignore[type-arg]
    return Case(
        case_id=f"t::llama::{scenario}",
        suite="t",
        suite_path="t.suite.yaml",
        model=ModelRef("llama", ModelSource.PATH, str(path), "mlx_lm", (), str(path)),
        scenario=scenario,
        params=params,
        repeats=3,
        warmup=1,
        timeout_s=timeout_s,
    )


def test_throughput_records_raw_samples_and_warmups_apart(tiny_llama: Path, tmp_path: Path) -> None:
    session = ActiveRun(tmp_path / "reports", [], run_id="r")
    try:
        result = session.run_case(
            _case(
                tiny_llama, "throughput", {"prompt_tokens": 64, "gen_tokens": 8, "ignore_eos": True}
            )
        )
    finally:
        session.close_worker()
    assert result.status is Status.PASSED, result.reason
    decode = result.metric("throughput.decode_tps")
    assert decode is not None and len(decode.samples) == 3 and len(decode.warmup_samples) == 1
    assert all(v > 0 for v in decode.samples)
    ttft = result.metric("throughput.ttft_s")
    prefill = result.metric("throughput.prefill_tps")
    assert ttft is not None and prefill is not None
    for t, p in zip(ttft.samples, prefill.samples, strict=True):
        assert abs(p - 64 / t) < 1e-6 * p
    assert result.artifacts["generated_tokens"] == [8, 8, 8]
    peak = result.metric("memory.mlx_peak_bytes")
    assert peak is not None and peak.view == "MLX peak" and peak.median > 0


def test_external_sigkill_mid_case_is_recorded_as_crashed(tiny_llama: Path, tmp_path: Path) -> None:
    session = ActiveRun(tmp_path / "reports", [], run_id="r")
    load = session.run_case(_case(tiny_llama, "load", {"reloads": 0}))
    assert load.status is Status.PASSED
    assert session._live is not None and session._live.client is not None
    pid = session._live.client.pid

    def kill_soon() -> None:
        time.sleep(1.0)
        os.kill(pid, signal.SIGKILL)

    killer = threading.Thread(target=kill_soon)
    killer.start()
    long_case = _case(
        tiny_llama, "throughput", {"prompt_tokens": 64, "gen_tokens": 100000, "ignore_eos": True}
    )
    result = session.run_case(long_case)
    killer.join()
    assert result.status is Status.CRASHED and "SIGKILL" in (result.reason or "")
    again = dataclasses.replace(
        _case(tiny_llama, "load", {"reloads": 0}), case_id="t::llama::again"
    )
    after = session.run_case(again)
    assert after.status is Status.PASSED  # a fresh worker took over
    run = session.finish()
    assert [r.status for r in run.results] == [Status.PASSED, Status.CRASHED, Status.PASSED]
