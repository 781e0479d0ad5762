"""Timing metrics in pytest-benchmark's JSON format, so its users keep their workflows
(``pytest-benchmark compare``, dashboards that read its files)."""

from __future__ import annotations

import statistics
from typing import Any

from harness.core.types import Metric, RunRecord, Unit


def _quartiles(data: list[float]) -> tuple[float, float]:
    if len(data) < 2:
        return data[0], data[0]
    q = statistics.quantiles(data, n=4, method="inclusive")
    return q[0], q[2]


def _stats(metric: Metric) -> dict[str, Any]:
    data = sorted(metric.samples)
    q1, q3 = _quartiles(data)
    iqr = q3 - q1
    mean = statistics.fmean(data)
    stddev = statistics.stdev(data) if len(data) > 1 else 0.0
    low, high = q1 - 1.5 * iqr, q3 + 1.5 * iqr
    return {
        "min": data[0],
        "max": data[-1],
        "mean": mean,
        "stddev": stddev,
        "rounds": len(data),
        "median": statistics.median(data),
        "iqr": iqr,
        "q1": q1,
        "q3": q3,
        "iqr_outliers": sum(1 for v in data if v < low or v > high),
        "stddev_outliers": sum(1 for v in data if abs(v - mean) > stddev) if stddev else 0,
        "outliers": "0;0",
        "ld15iqr": min(v for v in data if v >= low),
        "hd15iqr": max(v for v in data if v <= high),
        "ops": 1 / mean if mean else 0.0,
        "total": sum(data),
        "iterations": 1,
        "data": list(metric.samples),
    }


def pytest_benchmark_json(run: RunRecord) -> dict[str, Any]:
    """One pytest-benchmark entry per (case, timing metric in seconds)."""
    benchmarks = []
    for result in run.results:
        for metric in result.metrics:
            if metric.unit is not Unit.SECONDS or not metric.samples:
                continue
            benchmarks.append(
                {
                    "group": f"{result.scenario}:{metric.name}",
                    "name": f"{result.case_id}::{metric.name}",
                    "fullname": f"{result.case_id}::{metric.name}",
                    "params": dict(result.point) or None,
                    "param": None,
                    "extra_info": {"model": result.model, "status": result.status.value},
                    "options": {
                        "disable_gc": False,
                        "timer": "perf_counter",
                        "min_rounds": 1,
                        "max_time": 0,
                        "min_time": 0,
                        "warmup": bool(metric.warmup_samples),
                    },
                    "stats": _stats(metric),
                }
            )
    machine = run.machine
    return {
        "machine_info": {
            "node": machine.hostname,
            "processor": machine.cpu,
            "machine": machine.arch,
            "system": machine.os,
            "release": machine.os_release,
            "python_version": machine.python,
            "cpu": {"brand_raw": machine.cpu, "count": machine.cores},
            "mlx_device": machine.mlx_device,
            "blas": machine.blas,
        },
        "commit_info": {
            "id": run.git_sha,
            "dirty": bool(run.git_sha and run.git_sha.endswith("-dirty")),
        },
        "benchmarks": benchmarks,
        "datetime": run.started_at,
        "version": "5.1.0",
    }
