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

INVALID = "ceiling invalid"
HARDWARE_FORMAT = 3  # the bandwidth artifact's format from which the ceiling is the hardware's
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


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _rate(value: object) -> str:
    number = _number(value)
    return f"{number / GB:.2f} GB/s" if number is not None else "?"


def _flops(value: object) -> str:
    number = _number(value)
    return f"{number / GFLOP:.1f} GFLOP/s" if number is not None else "?"


def _when(value: object) -> str:
    number = _number(value)
    if number is None:
        return "at an unknown time"
    moment = datetime.datetime.fromtimestamp(number, tz=datetime.UTC)
    return moment.strftime("%Y-%m-%d %H:%M UTC")


def _others(rates: object, best: object, show: Any) -> str:
    """``b 2.90 GB/s, c 1.00 GB/s``: every kernel of ``rates`` but the best one."""
    if not isinstance(rates, dict):
        return ""
    return ", ".join(f"{k} {show(v)}" for k, v in rates.items() if k != best)


def is_hardware(found: Mapping[str, Any]) -> bool:
    """Whether a bandwidth artifact's ceiling is the hardware's (else MLX's kernel speed)."""
    version = _number(found.get("format"))
    return version is not None and version >= HARDWARE_FORMAT


def _conditions(found: Mapping[str, Any]) -> str:
    conditions = found.get("conditions")
    if not isinstance(conditions, dict):
        return "conditions not recorded"
    parts = []
    load = conditions.get("load_average")
    if isinstance(load, list) and load:
        parts.append(f"load average {load[0]}")
    share = _number(conditions.get("others_cpu_share"))
    if share is not None:
        busy = conditions.get("busy_processes")
        named = (
            "; ".join(
                f"{p.get('name')} {p.get('cpu_percent')}%" for p in busy if isinstance(p, dict)
            )
            if isinstance(busy, list)
            else ""
        )
        parts.append(f"other processes {share:.0%} of the CPUs" + (f" ({named})" if named else ""))
    return ", ".join(parts) or "conditions not recorded"


def _hardware_line(found: Mapping[str, Any]) -> str:
    """``memory read ceiling 29.81 GB/s (numpy_gemv; numpy_sum_threads 26.10 GB/s), best of 9
    bursts over a 256 MiB buffer on cpu, 2 threads; MLX's own kernels ...; measured ...``"""
    others = _others(found.get("kernels_bytes_per_s"), found.get("kernel"), _rate)
    buffer = _number(found.get("buffer_bytes"))
    size = f" over a {int(buffer) // 2**20} MiB buffer" if buffer is not None else ""
    own = found.get("mlx_kernels_bytes_per_s")
    mlx = (
        "; MLX's own kernels (kernel efficiency, not the ceiling): "
        + ", ".join(f"{k} {_rate(v)}" for k, v in own.items())
        if isinstance(own, dict) and own
        else ""
    )
    flops_others = _others(found.get("flops_kernels_per_s"), found.get("flops_kernel"), _flops)
    compute = (
        f"; float32 matmul ceiling {_flops(found.get('flops_per_s'))} "
        f"({found.get('flops_kernel')}{'; ' + flops_others if flops_others else ''})"
        if (_number(found.get("flops_per_s")) or 0) > 0
        else ""
    )
    return (
        f"memory read ceiling {_rate(found.get('bytes_per_s'))} ({found.get('kernel')}"
        f"{'; ' + others if others else ''}), best of {found.get('bursts')} bursts{size} on "
        f"{found.get('device')}, {found.get('threads')} threads{mlx}{compute}; measured "
        f"{_when(found.get('measured_unix_s'))} ({found.get('reason')}), {found.get('source')}; "
        f"{_conditions(found)}; machine {found.get('fingerprint')}"
    )


def _older_line(found: Mapping[str, Any]) -> str:
    """An older record's figure (MLX's own kernels, median), labelled by its kernel."""
    kernels = found.get("kernels_bytes_per_s")
    others = (
        "; ".join(f"{k} {_rate(v)}" for k, v in kernels.items() if k != found.get("kernel"))
        if isinstance(kernels, dict)
        else ""
    )
    buffer = _number(found.get("buffer_bytes"))
    size = f"{int(buffer) // 2**20} MiB buffer, " if buffer is not None else ""
    flops = _number(found.get("flops_per_s"))
    compute = f"; float32 matmul {flops / GFLOP:.1f} GFLOP/s" if flops else ""
    return (
        f"read bandwidth {_rate(found.get('bytes_per_s'))} by MLX's own {found.get('kernel')} "
        f"kernel{' (' + others + ')' if others else ''}, {size}median of "
        f"{found.get('repeats')}{compute}, {found.get('source')}, machine "
        f"{found.get('fingerprint')}: an older record, whose ceiling is MLX's kernel speed, "
        "not the hardware's"
    )


def ceiling_line(found: Mapping[str, Any]) -> str:
    """One bandwidth artifact as a line for people, whichever format it is."""
    return _hardware_line(found) if is_hardware(found) else _older_line(found)


def ceiling_lines(run: RunRecord) -> tuple[str, ...]:
    """One line per machine and measurement the cases were judged against, in case order."""
    seen: dict[tuple[str, str], str] = {}
    for result in run.results:
        found = result.artifacts.get("bandwidth")
        if not isinstance(found, dict):
            continue
        key = (str(found.get("fingerprint")), str(found.get("measured_unix_s")))
        if key not in seen:
            seen[key] = ceiling_line(found)
    return tuple(seen.values())


def invalid_shares(result: CaseResult) -> dict[str, str]:
    """The case's share metrics whose ceiling is invalid, each with why."""
    found: dict[str, str] = {}
    recorded = result.artifacts.get("ceiling_invalid")
    if isinstance(recorded, dict):
        for kind, name in SHARES.items():
            entry = recorded.get(kind)
            if entry is not None:
                reason = entry.get("reason") if isinstance(entry, dict) else None
                found[name] = str(reason or f"a {kind} run passed the measured ceiling")
    bandwidth = result.artifacts.get("bandwidth")
    older = isinstance(bandwidth, dict) and not is_hardware(bandwidth)
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
