"""The inference-perf export: a serving run (against the planted OpenAI-compatible server) as
inference-perf's stage and summary reports, with the keys its ``--analyze`` reads and figures
that agree with the record's own metrics."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from harness.cli import main
from harness.results.inference_perf import PERCENTILES, SUMMARY_FILE, stage_file, summarize
from harness.results.store import load_run
from tests.servers.planted_process import planted_server

LATENCIES = (
    "request_latency",
    "normalized_time_per_output_token",
    "time_per_output_token",
    "time_to_first_token",
    "inter_token_latency",
)


def test_summarize_is_inference_perfs() -> None:
    values = [0.5, 0.1, 0.3, 0.2, 0.4]
    out = summarize(values)
    assert out is not None
    assert (out["mean"], out["min"], out["max"]) == (pytest.approx(0.3), 0.1, 0.5)
    assert out["median"] == 0.3 and out["p90"] == pytest.approx(np.percentile(values, 90))
    assert set(out) == {"mean", "min", "max", "median"} | {
        f"p{p:g}" for p in PERCENTILES if p != 50
    }
    assert summarize([]) is None  # as inference-perf: an empty metric is null


def test_a_serving_run_exports_one_stage_per_load_point(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "load.suite.yaml"
    reports, out = tmp_path / "reports", tmp_path / "ip"
    with planted_server(model_dir=tmp_path / "toy") as url:
        suite.write_text(
            "schema_version: 1\ndefaults: {warmup: 1, timeout_s: 120}\nmodels:\n"
            f"  - {{name: toy, url: '{url}'}}\n"
            "scenarios:\n  - scenario: serving\n"
            "    params: {concurrency: [1, 2], request_rates: [20], requests_per_point: 10,"
            " max_tokens: 8, prompt_tokens: 32, slo: {e2e_p90_s: 60}}\n"
        )
        assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"]) == 0
    assert main(["export", str(reports / "r"), "--inference-perf", str(out)]) == 0
    assert "(3 stages)" in capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir()) == [
        stage_file(0),
        stage_file(1),
        stage_file(2),
        SUMMARY_FILE,
    ]
    (result,) = load_run(reports / "r").results
    metrics = {m.name: m.samples[0] for m in result.metrics}
    for index, key in enumerate(("c1", "c2", "r20")):
        stage = json.loads((out / stage_file(index)).read_text())
        load = stage["load_summary"]
        assert load["count"] == 10 and load["achieved_rate"] > 0  # --analyze skips a stage without
        assert load.get("concurrency") == {"c1": 1, "c2": 2}.get(key)
        assert load["requested_rate"] == (20 if key == "r20" else None)
        ok = stage["successes"]
        assert ok["count"] == metrics[f"serving.{key}.completed"] == 10
        for name in LATENCIES:
            assert ok["latency"][name]["mean"] > 0, name
        throughput = ok["throughput"]
        # the same figures, over the duration the record keeps to the microsecond
        assert throughput["output_tokens_per_sec"] == pytest.approx(
            metrics[f"serving.{key}.output_tps"], rel=1e-3
        )
        assert throughput["requests_per_sec"] == pytest.approx(
            metrics[f"serving.{key}.request_rps"], rel=1e-3
        )
        assert throughput["total_tokens_per_sec"] > throughput["output_tokens_per_sec"]
        assert ok["goodput_metrics"]["goodput_percentage"] == 100.0
        assert stage["failures"]["count"] == 0 and stage["failures"]["by_label"] == {}
        # percentiles over the same requests as ours: the largest TTFT is the same request's
        assert ok["latency"]["time_to_first_token"]["max"] >= metrics[f"serving.{key}.ttft_p50_s"]
    total = json.loads((out / SUMMARY_FILE).read_text())
    assert total["successes"]["count"] == 30 and "concurrency" not in total["load_summary"]


def test_a_run_without_serving_cases_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.backends.fake import write_fake_model

    write_fake_model(tmp_path / "m", per_token_s=0.0)
    (tmp_path / "s.suite.yaml").write_text(
        "schema_version: 1\ndefaults: {repeats: 1, warmup: 0}\n"
        "models:\n  - {name: m, path: m, backend: fake}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 4, prompt_tokens: 8}\n"
    )
    reports = tmp_path / "r"
    args = ["run", str(tmp_path / "s.suite.yaml"), "--report-dir", str(reports)]
    assert main([*args, "--run-id", "x"]) == 0
    capsys.readouterr()
    assert main(["export", str(reports / "x"), "--inference-perf", str(tmp_path / "ip")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no serving case" in err


def _point(sent: int, starts: list[float], ok: list[bool]) -> dict[str, object]:
    n = len(starts)
    return {
        "key": "c2",
        "kind": "concurrency",
        "value": 2.0,
        "label": "concurrency 2",
        "sent": sent,
        "completed": sum(ok),
        "errors": n - sum(ok),
        "cut": sent - n,
        "duration_s": 4.0,
        "output_tokens": 8 * sum(ok),
        "good": None,
        "error_kinds": [["HTTP 500: 'boom'", n - sum(ok)]] if n - sum(ok) else [],
        "requests": {
            "start_s": starts,
            "ttft_s": [0.1] * n,
            "e2e_s": [1.0] * n,
            "output_tokens": [8] * n,
            "usage_tokens": [8] * n,
            "ok": ok,
            "of": n,
        },
        "itl_gaps_s": [0.1] * (7 * sum(ok)),
    }


@pytest.mark.parametrize(
    ("point", "achieved", "failures"),
    [
        (_point(3, [0.0, 1.0, 2.0], [True, True, True]), 1.5, 0),  # 3 sent over 2 s
        (_point(3, [0.0, 1.0, 2.0], [True, False, False]), 1.5, 2),
        (_point(5, [0.0, 1.0, 2.0], [True, True, True]), None, 0),  # 2 cut: sends unknown
        (_point(1, [0.0], [True]), None, 0),  # one send: no span
    ],
)
def test_achieved_rate_only_from_sends_the_record_holds(
    point: dict[str, object], achieved: float | None, failures: int
) -> None:
    from harness.core.types import CaseResult, Status
    from harness.results.inference_perf import benchmark

    result = CaseResult(
        "s::m::serving", "s", "m", "serving", Status.PASSED, artifacts={"points": [point]}
    )
    bench = benchmark(result)
    assert bench is not None
    stage = bench.files[stage_file(0)]
    assert stage["load_summary"]["achieved_rate"] == achieved
    assert stage["failures"]["count"] == failures
    labels = stage["failures"]["by_label"]
    assert sum(v["count"] for v in labels.values()) == failures
    assert stage["successes"]["latency"]["normalized_time_per_output_token"]["mean"] == 1.0 / 8
