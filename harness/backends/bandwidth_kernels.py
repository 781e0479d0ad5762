"""The kernels that measure a device's memory read bandwidth and float32 matmul FLOP rate, and
MLX's own decode kernels beside them.

Each kernel runs once to warm up, then ``bursts`` timed times; its figure is the best burst
(the least disturbed run is the nearest the hardware's limit: a median would count a busy
neighbour in). Bytes counted are bytes read.

- A CPU device (mlx's default device is the CPU): the read ceiling streams a float32 buffer far
  larger than the caches on every core: numpy reductions (``np.add.reduce``) over one slice per
  thread from a thread pool of ``os.cpu_count()`` threads (numpy releases the GIL in them), one
  thread's reduction of the whole buffer, and a BLAS gemv through numpy. The FLOP ceiling is
  the best of a BLAS sgemm through numpy and MLX's matmul.
- A GPU device (Metal or CUDA): MLX kernels on it, ``GPU_PASSES`` passes a burst (one pass over
  the buffer is too short to time against a launch): full reductions and a chain of
  elementwise copies; MLX's matmul on a larger matrix for the FLOP ceiling.
- MLX's own decode kernels on its default device, ``gemv`` (``vector @ matrix.T``, what a decode
  step's linear layers are) and ``sum``: their speed is MLX's, not the memory's. A report
  shows decode against them as kernel efficiency, never as the ceiling.

mlx is the caller's module (``mx``): this module never imports it; numpy is imported when a
CPU kernel runs.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

FLOAT32_BYTES = 4
GEMM_SIDE_CPU = 1024  # 2 GFLOP: tens of ms on a CPU
GEMM_SIDE_GPU = 4096  # 137 GFLOP: milliseconds on a GPU
GPU_PASSES = 8  # passes over the buffer in one GPU burst

# the kernels' names, as records and reports carry them
NUMPY_SUM = "numpy_sum"  # one thread
NUMPY_SUM_THREADS = "numpy_sum_threads"  # one slice per thread
NUMPY_GEMV = "numpy_gemv"  # BLAS sgemv
NUMPY_SGEMM = "numpy_sgemm"
MLX_SUM = "mlx_sum"
MLX_COPY = "mlx_copy"
MLX_MATMUL = "mlx_matmul"
MLX_GEMV = "gemv"  # MLX's own decode kernels keep the names older records gave them
MLX_REDUCE = "sum"


@dataclass(frozen=True)
class KernelFigures:
    """Each kernel's best burst: read ceilings and MLX's own kernels in bytes/s, FLOP/s."""

    read_bytes_per_s: dict[str, float]  # the ceiling's candidates
    mlx_bytes_per_s: dict[str, float]  # MLX's own decode kernels (kernel efficiency)
    flops_per_s: dict[str, float]  # the FLOP ceiling's candidates
    buffer_bytes: int
    threads: int  # threads the CPU streaming kernel used (1 on a GPU device)


def best_rate(
    run: Callable[[], object],
    amount: float,
    bursts: int,
    *,
    wait: Callable[[object], None] = lambda _: None,
    clock: Callable[[], float] = time.perf_counter,
) -> float:
    """``amount`` (bytes or FLOPs) / seconds of the fastest of ``bursts`` timed runs of ``run``
    after one warm-up; ``wait`` blocks until a run's result is computed (``mx.eval``)."""
    wait(run())
    best = 0.0
    for _ in range(max(1, bursts)):
        start = clock()
        wait(run())
        elapsed = clock() - start
        if elapsed > 0:
            best = max(best, amount / elapsed)
    return best


def cpu_read_kernels(buffer_bytes: int, bursts: int, threads: int) -> dict[str, float]:
    """numpy's streaming reads of a ``buffer_bytes`` float32 buffer: one thread, one slice per
    thread, and a BLAS gemv."""
    import numpy as np

    buffer = np.ones(max(1, buffer_bytes // FLOAT32_BYTES), dtype=np.float32)
    nbytes = float(buffer.nbytes)
    rates = {NUMPY_SUM: best_rate(lambda: np.add.reduce(buffer), nbytes, bursts)}
    if threads > 1:
        slices = np.array_split(buffer, threads)
        with ThreadPoolExecutor(threads) as pool:
            rates[NUMPY_SUM_THREADS] = best_rate(
                lambda: list(pool.map(np.add.reduce, slices)), nbytes, bursts
            )
    side = max(1, int(buffer.size**0.5))
    matrix = buffer[: side * side].reshape(side, side)
    vector = np.ones(side, dtype=np.float32)
    rates[NUMPY_GEMV] = best_rate(lambda: matrix @ vector, float(matrix.nbytes), bursts)
    return rates


def gpu_read_kernels(mx: Any, buffer_bytes: int, bursts: int) -> dict[str, float]:
    """MLX's reads on its (GPU) device: ``GPU_PASSES`` full reductions a burst, and a chain of
    as many elementwise copies (each reads the buffer once; bytes written not counted)."""
    buffer = mx.ones((max(1, buffer_bytes // FLOAT32_BYTES),), dtype=mx.float32)
    mx.eval(buffer)
    nbytes = float(buffer.nbytes) * GPU_PASSES

    def sums() -> list[Any]:
        return [mx.sum(buffer) for _ in range(GPU_PASSES)]

    def copies() -> Any:
        out = buffer
        for _ in range(GPU_PASSES):
            out = out * 1.0
        return out

    wait = _waiter(mx)
    rates = {
        MLX_SUM: best_rate(sums, nbytes, bursts, wait=wait),
        MLX_COPY: best_rate(copies, nbytes, bursts, wait=wait),
    }
    return rates


def mlx_own_kernels(mx: Any, buffer_bytes: int, bursts: int, passes: int) -> dict[str, float]:
    """MLX's own decode kernels on its default device over a square float32 matrix, ``passes``
    of each a burst."""
    side = max(64, int((buffer_bytes // FLOAT32_BYTES) ** 0.5))
    matrix = mx.ones((side, side), dtype=mx.float32)
    vector = mx.ones((1, side), dtype=mx.float32)
    mx.eval(matrix, vector)
    nbytes = float(matrix.nbytes) * passes
    wait = _waiter(mx)
    rates = {
        MLX_GEMV: best_rate(
            lambda: [vector @ matrix.T for _ in range(passes)], nbytes, bursts, wait=wait
        ),
        MLX_REDUCE: best_rate(
            lambda: [mx.sum(matrix) for _ in range(passes)], nbytes, bursts, wait=wait
        ),
    }
    return rates


def cpu_flops(bursts: int) -> dict[str, float]:
    """A BLAS sgemm through numpy (every core BLAS uses) on ``GEMM_SIDE_CPU``-square matrices."""
    import numpy as np

    a = np.ones((GEMM_SIDE_CPU, GEMM_SIDE_CPU), dtype=np.float32)
    return {NUMPY_SGEMM: best_rate(lambda: a @ a, 2.0 * GEMM_SIDE_CPU**3, bursts)}


def mlx_flops(mx: Any, side: int, bursts: int) -> dict[str, float]:
    """MLX's float32 matmul on its default device (2 n^3 FLOPs)."""
    a = mx.ones((side, side), dtype=mx.float32)
    mx.eval(a)
    rate = best_rate(lambda: a @ a, 2.0 * side**3, bursts, wait=_waiter(mx))
    return {MLX_MATMUL: rate}


def _waiter(mx: Any) -> Callable[[object], None]:
    def wait(result: object) -> None:
        if isinstance(result, list):
            mx.eval(*result)
        else:
            mx.eval(result)

    return wait


def measure_kernels(mx: Any, on_gpu: bool, buffer_bytes: int, bursts: int) -> KernelFigures:
    """Every kernel for a device: its read and FLOP ceilings' candidates and MLX's own (MLX's
    cache emptied after each, so one kernel's buffers never crowd the next)."""
    if on_gpu:
        threads, passes = 1, GPU_PASSES
        read = gpu_read_kernels(mx, buffer_bytes, bursts)
        mx.clear_cache()
        flops = mlx_flops(mx, GEMM_SIDE_GPU, bursts)
    else:
        threads, passes = os.cpu_count() or 1, 1
        read = cpu_read_kernels(buffer_bytes, bursts, threads)
        flops = {**cpu_flops(bursts), **mlx_flops(mx, GEMM_SIDE_CPU, bursts)}
    mx.clear_cache()
    own = mlx_own_kernels(mx, buffer_bytes, bursts, passes)
    mx.clear_cache()
    return KernelFigures(
        read_bytes_per_s=read,
        mlx_bytes_per_s=own,
        flops_per_s=flops,
        buffer_bytes=max(1, buffer_bytes // FLOAT32_BYTES) * FLOAT32_BYTES,
        threads=threads,
    )
