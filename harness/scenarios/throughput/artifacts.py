"""What a ``throughput`` case records beside its metrics that the report reads, typed: the
bandwidth and FLOP ceilings its roofline was judged against (``harness.backends.bandwidth``
writes the figure) and which shares of them could not stand.

The figure has had two formats: from format 3 the ceiling is the hardware's (each kernel's best
burst); records before it (format 2) judged decode against MLX's own kernels, median of
``repeats``. Both read through :class:`RecordedBandwidth`; :attr:`RecordedBandwidth.is_hardware`
says which it is.
"""

from __future__ import annotations

from dataclasses import dataclass

from harness.scenarios.artifacts import ScenarioArtifacts

HARDWARE_FORMAT = 3  # the bandwidth figure's format from which the ceiling is the hardware's


@dataclass(frozen=True)
class BusyProcess:
    name: str | None = None
    cpu_percent: float | None = None


@dataclass(frozen=True)
class RecordedConditions:
    """The machine while the ceiling was measured."""

    load_average: tuple[float, ...] = ()
    others_cpu_share: float | None = None  # of all CPUs, 0..1
    busy_processes: tuple[BusyProcess, ...] = ()


@dataclass(frozen=True)
class RecordedBandwidth:
    format: int | None = None  # None: an older record's (2)
    bytes_per_s: float | None = None
    kernel: str | None = None
    kernels_bytes_per_s: dict[str, float] | None = None
    mlx_kernels_bytes_per_s: dict[str, float] | None = None
    flops_per_s: float | None = None
    flops_kernel: str | None = None
    flops_kernels_per_s: dict[str, float] | None = None
    device: str | None = None
    threads: int | None = None
    buffer_bytes: int | None = None
    bursts: int | None = None
    repeats: int | None = None  # an older record's: median of this many
    conditions: RecordedConditions | None = None
    fingerprint: str | None = None
    measured_unix_s: float | None = None
    reason: str | None = None
    source: str | None = None

    @property
    def is_hardware(self) -> bool:
        """Whether the ceiling is the hardware's (else MLX's kernel speed)."""
        return self.format is not None and self.format >= HARDWARE_FORMAT


@dataclass(frozen=True)
class InvalidShare:
    max_share: float | None = None
    reason: str | None = None


@dataclass(frozen=True)
class ThroughputArtifacts(ScenarioArtifacts):
    bandwidth: RecordedBandwidth | None = None
    # by kind (decode, prefill): a share the scenario found past its ceiling after re-measuring
    ceiling_invalid: dict[str, InvalidShare] | None = None
