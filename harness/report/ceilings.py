"""What the roofline's ceilings were, and which shares of them cannot stand.

A ceiling is the hardware's (``harness.backends.bandwidth``): the device's memory read
bandwidth and float32 FLOP rate, each the best burst of the fastest kernel. :func:`ceiling_line`
says, per machine and measurement, what each kernel gave, MLX's own kernels beside them (kernel
efficiency, not the ceiling), when and why it was measured and under what load. Records from
before (bandwidth format 2) judged decode against MLX's own kernels, median of 7: they still
render, labelled by that kernel as what they were.

No run can pass a hardware ceiling, so a share above 100% is never shown as a number:
:func:`invalid_shares` names the shares of a case whose ceiling is invalid, recorded so by the
throughput scenario (``ceiling_invalid``, after re-measuring) or, in an older record, above 1.
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from harness.backends.decode_traffic import share_over_limit
from harness.core.types import CaseResult, RunRecord
from harness.scenarios import throughput
from harness.scenarios.throughput.artifacts import RecordedBandwidth, ThroughputArtifacts

INVALID = "ceiling invalid"
GB = 1e9
GFLOP = 1e9
SHARES: Mapping[str, str] = {  # ceiling_invalid's kinds -> the share metric each invalidates
    "decode": throughput.SHARE.name,
    "prefill": throughput.PREFILL_SHARE.name,
}
# an older record's shares of MLX's kernel speed (no ceiling_invalid was recorded then)
KERNEL_SHARES: tuple[str, ...] = (
    throughput.KERNEL_SHARE.name,
    throughput.PREFILL_KERNEL_SHARE.name,
)


def _rate(value: float | None) -> str:
    return f"{value / GB:.2f} GB/s" if value is not None else "?"


def _flops(value: float | None) -> str:
    return f"{value / GFLOP:.1f} GFLOP/s" if value is not None else "?"


def _when(value: float | None) -> str:
    if value is None:
        return "at an unknown time"
    moment = datetime.datetime.fromtimestamp(value, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _others(rates: dict[str, float] | None, best: str | None, show: Any) -> str:
    """``b 2.90 GB/s, c 1.00 GB/s``: every kernel of ``rates`` but the best one."""
    return ", ".join(f"{k} {show(v)}" for k, v in (rates or {}).items() if k != best)


def _conditions(found: RecordedBandwidth) -> str:
    conditions = found.conditions
    if conditions is None:
        return "conditions not recorded"
    parts = []
    if conditions.load_average:
        parts.append(f"load average {conditions.load_average[0]}")
    share = conditions.others_cpu_share
    if share is not None:
        named = "; ".join(f"{p.name} {p.cpu_percent}%" for p in conditions.busy_processes)
        parts.append(f"other processes {share:.0%} of the CPUs" + (f" ({named})" if named else ""))
    return ", ".join(parts) or "conditions not recorded"


def _hardware_line(found: RecordedBandwidth) -> str:
    """``memory read ceiling 29.81 GB/s (numpy_gemv; numpy_sum_threads 26.10 GB/s), best of 9
    bursts over a 256 MiB buffer on cpu, 2 threads; MLX's own kernels ...; measured ...``"""
    others = _others(found.kernels_bytes_per_s, found.kernel, _rate)
    size = (
        f" over a {found.buffer_bytes // 2**20} MiB buffer"
        if found.buffer_bytes is not None
        else ""
    )
    own = found.mlx_kernels_bytes_per_s
    mlx = (
        "; MLX's own kernels (kernel efficiency, not the ceiling): "
        + ", ".join(f"{k} {_rate(v)}" for k, v in own.items())
        if own
        else ""
    )
    flops_others = _others(found.flops_kernels_per_s, found.flops_kernel, _flops)
    compute = (
        f"; float32 matmul ceiling {_flops(found.flops_per_s)} "
        f"({found.flops_kernel}{'; ' + flops_others if flops_others else ''})"
        if (found.flops_per_s or 0) > 0
        else ""
    )
    return (
        f"memory read ceiling {_rate(found.bytes_per_s)} ({found.kernel}"
        f"{'; ' + others if others else ''}), best of {found.bursts} bursts{size} on "
        f"{found.device}, {found.threads} threads{mlx}{compute}; measured "
        f"{_when(found.measured_unix_s)} ({found.reason}), {found.source}; "
        f"{_conditions(found)}; machine {found.fingerprint}"
    )


def _older_line(found: RecordedBandwidth) -> str:
    """An older record's figure (MLX's own kernels, median), labelled by its kernel."""
    others = "; ".join(
        f"{k} {_rate(v)}" for k, v in (found.kernels_bytes_per_s or {}).items() if k != found.kernel
    )
    size = f"{found.buffer_bytes // 2**20} MiB buffer, " if found.buffer_bytes is not None else ""
    flops = found.flops_per_s
    compute = f"; float32 matmul {flops / GFLOP:.1f} GFLOP/s" if flops else ""
    return (
        f"read bandwidth {_rate(found.bytes_per_s)} by MLX's own {found.kernel} "
        f"kernel{' (' + others + ')' if others else ''}, {size}median of "
        f"{found.repeats}{compute}, {found.source}, machine "
        f"{found.fingerprint}: an older record, whose ceiling is MLX's kernel speed, "
        "not the hardware's"
    )


def ceiling_line(found: RecordedBandwidth) -> str:
    """One bandwidth figure as a line for people, whichever format it is."""
    return _hardware_line(found) if found.is_hardware else _older_line(found)


def ceiling_lines(run: RunRecord) -> tuple[str, ...]:
    """One line per machine and measurement the cases were judged against, in case order."""
    seen: dict[tuple[str, str], str] = {}
    for result in run.results:
        found = ThroughputArtifacts.of(result).bandwidth
        if found is None:
            continue
        key = (str(found.fingerprint), str(found.measured_unix_s))
        if key not in seen:
            seen[key] = ceiling_line(found)
    return tuple(seen.values())


def invalid_shares(result: CaseResult) -> dict[str, str]:
    """The case's share metrics whose ceiling is invalid, each with why."""
    facts = ThroughputArtifacts.of(result)
    found: dict[str, str] = {}
    for kind, name in SHARES.items():
        entry = (facts.ceiling_invalid or {}).get(kind)
        if entry is not None:
            found[name] = entry.reason or f"a {kind} run passed the measured ceiling"
    older = facts.bandwidth is not None and not facts.bandwidth.is_hardware
    for name in (*SHARES.values(), *KERNEL_SHARES):
        metric = result.metric(name)
        top = share_over_limit([*metric.samples, *metric.warmup_samples]) if metric else None
        if top is not None and name not in found:
            found[name] = f"a run reached {top:.0%} of a ceiling no run can pass" + (
                ": an older record, whose ceiling was MLX's kernel speed, not the hardware's"
                if older or name in KERNEL_SHARES
                else ""
            )
    return found
