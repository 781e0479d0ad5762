"""``python -m harness.backends.distributed_rank JOB_DIR``: one rank of a distributed run,
started by ``mlx.launch`` (which sets the group's environment: ``MLX_RANK``, the hostfile).

The rank joins the group (``mx.distributed.init``), times the link (all_sum of buffers of a few
sizes, then a send from rank 0 to rank 1), loads the model from ``job.json``'s folder lazily,
splits it (``model.shard(group)``: tensor; ``model.model.pipeline(group)``: pipeline; what
mlx-lm's ``sharded_load`` does, without its need of a ``model.safetensors.index.json``), runs
each prompt greedily through ``generate_step`` (EOS ignored), and writes ``rank-<r>.json``
(:class:`~harness.backends.distributed_types.RankResult`). A split the model lacks is
``n.a.`` with the reason; an error is one line. The rank exits when its parent is gone (the
kernel's parent-death signal, and a watch on the harness's worker), so none outlives a run.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import socket
import statistics
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from harness.backends.distributed_types import (
    LinkFigure,
    PromptRun,
    RankJob,
    RankResult,
    RankStatus,
    Split,
    write_rank,
)
from harness.core.exception_line import exception_line

WATCH_POLL_S = 0.5


def _die_with_parent() -> None:
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG


def _watch(pid: int) -> None:
    """Exit at once when ``pid`` (the worker that asked for the run) is gone."""

    def loop() -> None:
        while True:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(3)
            except PermissionError:
                pass
            time.sleep(WATCH_POLL_S)

    threading.Thread(target=loop, daemon=True).start()


def _rss_bytes() -> int:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


def _timed(fn: Any, iterations: int) -> float:
    fn()  # warm: the first op sets the connection up
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_link(group: Any, sizes: tuple[int, ...], iterations: int) -> list[LinkFigure]:
    """All ranks: a timed all_sum per size; ranks 0 and 1: a timed send 0 -> 1 per size
    (exo's ``bench/test_mlx_bandwidth.py``, shortened). Nothing in a group of one."""
    import mlx.core as mx

    if group.size() < 2:
        return []
    found = []
    rank = group.rank()
    for size in sizes:
        buffer = mx.ones((max(size // 4, 1),), dtype=mx.float32)
        mx.eval(buffer)
        seconds = _timed(
            lambda b=buffer: mx.eval(mx.distributed.all_sum(b, group=group)), iterations
        )
        found.append(LinkFigure("all_sum", size, seconds, size / seconds if seconds > 0 else 0.0))
    for size in sizes:
        buffer = mx.ones((max(size // 4, 1),), dtype=mx.float32)
        mx.eval(buffer)
        if rank == 0:
            op = lambda b=buffer: mx.eval(mx.distributed.send(b, 1, group=group))  # noqa: E731
        elif rank == 1:
            op = lambda b=buffer: mx.eval(mx.distributed.recv_like(b, 0, group=group))  # noqa: E731
        else:
            continue
        seconds = _timed(op, iterations)
        found.append(LinkFigure("send_recv", size, seconds, size / seconds if seconds > 0 else 0.0))
    # the ranks past 1 wait here until the pair is done
    mx.eval(mx.distributed.all_sum(mx.array(1.0), group=group))
    return found


HEAD_FIELDS = ("num_attention_heads", "num_key_value_heads")


def _uneven_heads(model: Any, ranks: int) -> str | None:
    """Why ``model.shard`` would cut a head in two (its heads do not divide over the ranks:
    SmolLM2-135M's 9 and 3 over 2 gave queries of 72 against keys of 96); None: they divide."""
    args = getattr(model, "args", None)
    heads = {f: getattr(args, f, None) for f in HEAD_FIELDS}
    found = {f: n for f, n in heads.items() if isinstance(n, int) and n > 0}
    if all(n % ranks == 0 for n in found.values()):
        return None
    names = ", ".join(f"{n} {f.replace('num_', '').replace('_', ' ')}" for f, n in found.items())
    return f"{names} do not divide over {ranks} ranks (tensor parallelism splits by head)"


def split_model(model: Any, split: Split, group: Any) -> str | None:
    """Split ``model`` over ``group`` in place; the reason it cannot (None: done)."""
    if split is Split.NONE or group.size() < 2:
        return None
    kind = type(model).__module__.rsplit(".", 1)[-1]
    if split is Split.TENSOR:
        if not hasattr(model, "shard"):
            return f"mlx-lm's {kind} has no shard(group) (tensor parallelism)"
        uneven = _uneven_heads(model, group.size())
        if uneven is not None:
            return uneven
        model.shard(group)
        return None
    inner: Any = getattr(model, "model", None)
    if not hasattr(inner, "pipeline"):
        return f"mlx-lm's {kind} has no model.pipeline(group) (pipeline parallelism)"
    layers = len(inner.layers)
    if layers < group.size():
        return f"{layers} layers cannot make {group.size()} pipeline stages"
    inner.pipeline(group)
    return None


def _generate(
    model: Any, prompt: tuple[int, ...], max_tokens: int
) -> tuple[list[int], float, float]:
    import mlx.core as mx
    from mlx_lm.generate import generate_step

    tokens: list[int] = []
    start = time.perf_counter()
    first = 0.0
    for token, _ in generate_step(mx.array(list(prompt)), model, max_tokens=max_tokens):
        tokens.append(int(token))
        if len(tokens) == 1:
            first = time.perf_counter() - start
    return tokens, first, time.perf_counter() - start


def _drop_empty_hostfile() -> None:
    """mlx.launch gives a ring of one an empty hostfile, which ``mx.distributed.init`` cannot
    parse: a group of one needs none."""
    path = os.environ.get("MLX_HOSTFILE")
    with contextlib.suppress(OSError):
        if path is not None and not Path(path).read_text().strip():
            del os.environ["MLX_HOSTFILE"]


def run_rank(job: RankJob, out_dir: Path) -> RankResult:
    import mlx.core as mx

    backend = os.environ.get("MLX_HARNESS_DIST_BACKEND", "")
    rank = int(os.environ.get("MLX_RANK", "0"))
    try:
        _drop_empty_hostfile()
        group = mx.distributed.init()
    except Exception as exc:  # the group could not form: said in the rank's own result
        line = f"mx.distributed.init: {exception_line(exc)}"
        return RankResult(rank, 0, job.split, RankStatus.ERROR, line, backend, socket.gethostname())
    rank, size = group.rank(), group.size()
    base = RankResult(
        rank, size, job.split, RankStatus.OK, backend=backend, host=socket.gethostname()
    )
    try:
        link = measure_link(group, job.link_sizes_bytes, job.link_iterations)
        from mlx_lm.utils import load_model

        start = time.perf_counter()
        model, _config = load_model(Path(job.model_path), lazy=True, strict=False)
        why = split_model(model, job.split, group)
        if why is not None:
            return replace(base, status=RankStatus.NOT_APPLICABLE, reason=why, link=tuple(link))
        mx.eval(model.parameters())
        if size > 1:
            mx.eval(mx.distributed.all_sum(mx.array(1.0), group=group))
        load_s = time.perf_counter() - start
        mx.reset_peak_memory()
        runs = []
        for index in range(job.warmup + job.repeats):
            for p, prompt in enumerate(job.prompts):
                tokens, ttft, total = _generate(model, prompt, job.max_tokens)
                runs.append(
                    PromptRun(p, index >= job.warmup, tuple(tokens), ttft, total, len(prompt))
                )
        return replace(
            base,
            load_s=load_s,
            link=tuple(link),
            runs=tuple(runs),
            peak_memory_bytes=int(mx.get_peak_memory()),
            rss_bytes=_rss_bytes(),
        )
    except Exception as exc:
        return replace(base, status=RankStatus.ERROR, reason=exception_line(exc))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m harness.backends.distributed_rank JOB_DIR", file=sys.stderr)
        return 2
    _die_with_parent()
    out_dir = Path(args[0])
    job = RankJob.from_json(json.loads((out_dir / "job.json").read_text()))
    if job.watch_host in ("", socket.gethostname()):  # the pid means nothing on another host
        _watch(job.watch_pid)
    result = run_rank(job, out_dir)
    write_rank(out_dir, result)
    return 0 if result.status is not RankStatus.ERROR else 1


if __name__ == "__main__":
    raise SystemExit(main())
