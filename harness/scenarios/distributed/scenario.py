"""``distributed``: the model sharded over an ``mx.distributed`` group against the same model in
one process.

One case is one world size and split (``tensor``: ``model.shard(group)``; ``pipeline``:
``model.model.pipeline(group)``; ``none``: a group of one). The world is launched as its own
``mlx.launch`` process group (:mod:`harness.backends.distributed_launch`: ring over loopback
here, the suite's hostfile on a cluster), whose ranks (:mod:`harness.backends.distributed_rank`)
time the link first (all_sum and send/recv of a few buffer sizes), then load and split the
model and run two prompts greedily (EOS ignored), ``warmup`` + ``repeats`` times. The worker runs
the same prompts on the model it loaded, in one process, before the launch. Measured: prefill,
decode and TTFT (rank 0's clock) beside the one process's and their ratios, each rank's MLX
peak memory and RSS, and the link's bytes/s per size (artifacts). Checked: every rank's greedy
tokens are the one process's, token by token (``identical_output``; not judged on a model whose
answer does not depend on its prompt).

A split the model cannot do is skipped ``n/a: why``, never an error; a rank that died or hung
fails the case in one line naming it; a rank's own error errors it.
"""

from __future__ import annotations

import json
import os
import socket
import tempfile
import time
from pathlib import Path
from typing import Any, ClassVar

from harness.backends.base import BackendCapability, BackendError, LoadedModel
from harness.backends.distributed_launch import LaunchOutcome, LaunchPlan, launch
from harness.backends.distributed_types import PromptRun, RankJob, RankResult, RankStatus
from harness.core.check_types import CheckStatus
from harness.core.metrics import MetricSpec
from harness.core.types import Metric
from harness.probe.types import Capability
from harness.scenarios.base import (
    BaseScenario,
    ScenarioContext,
    ScenarioOutput,
    Workload,
    lacks,
    metric,
)
from harness.scenarios.distributed import metrics as m
from harness.scenarios.distributed.outputs import identical_outputs
from harness.scenarios.distributed.params import DistributedParams
from harness.scenarios.prompt_dependence import foreign_prompt
from harness.scenarios.prompts import text_prompt

NOT_APPLICABLE = "n/a"
REPORT_MARGIN_S = 10.0  # kept back from the case's time limit to read the ranks' results


def hostfile_hosts(path: Path) -> int:
    """How many hosts ``path`` (mlx.launch's JSON hostfile) names; one line naming the file
    and the fix when it cannot be read."""
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise BackendError(
            f"hostfile {path}: cannot be read ({type(exc).__name__}); give mlx.launch's JSON "
            "hostfile (a list of {ssh, ips} hosts)"
        ) from None
    hosts = data.get("hosts") if isinstance(data, dict) else data
    if not isinstance(hosts, list) or not hosts:
        raise BackendError(f"hostfile {path}: no hosts; list the hosts as {{ssh, ips}} entries")
    return len(hosts)


def _model_folder(model: object) -> Path | None:
    path = getattr(model, "path", None)
    return Path(path) if isinstance(path, str | Path) else None


def _single(
    model: LoadedModel, prompt: list[int], max_tokens: int
) -> tuple[list[int], float, float]:
    tokens: list[int] = []
    start = time.perf_counter()
    first = 0.0
    for token in model.stream_tokens(prompt, max_tokens=max_tokens, ignore_eos=True):
        tokens.append(token)
        if len(tokens) == 1:
            first = time.perf_counter() - start
    return tokens, first, time.perf_counter() - start


def _samples(runs: list[PromptRun]) -> dict[str, tuple[list[float], list[float]]]:
    """(measured, warm-up) prefill, decode and TTFT samples of ``runs``."""
    found: dict[str, tuple[list[float], list[float]]] = {
        k: ([], []) for k in ("prefill", "decode", "ttft")
    }
    for run in runs:
        slot = 0 if run.measured else 1
        found["prefill"][slot].append(run.prefill_tps)
        found["decode"][slot].append(run.decode_tps)
        found["ttft"][slot].append(run.ttft_s)
    return found


def _ratio(a: list[float], b: list[float]) -> list[float]:
    return [x / y for x, y in zip(a, b, strict=False) if y > 0]


class DistributedScenario(BaseScenario[DistributedParams]):
    name: ClassVar[str] = "distributed"
    version: ClassVar[int] = 1
    params_model = DistributedParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = m.ALL
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.TEXT})
    backend_needs: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.TEXT_GENERATION}
    )
    headline_metrics: ClassVar[tuple[str, ...]] = (m.PREFILL.name, m.DECODE.name)

    def workload(self, params: DistributedParams) -> Workload:
        return Workload(params.prompt_tokens, params.gen_tokens)

    def run(self, ctx: ScenarioContext, params: DistributedParams) -> ScenarioOutput:
        model = ctx.model
        if not isinstance(model, LoadedModel):
            return lacks(ctx, BackendCapability.TEXT_GENERATION)
        folder = _model_folder(model)
        if folder is None:
            return ScenarioOutput(
                (), skip_reason=f"{NOT_APPLICABLE}: backend {ctx.backend} gives no model folder"
            )
        hostfile = Path(params.hostfile) if params.hostfile else None
        if hostfile is not None:
            hosts = hostfile_hosts(hostfile)
            if hosts != params.world_size:
                raise BackendError(
                    f"hostfile {hostfile}: {hosts} hosts for world_size {params.world_size}; "
                    f"set world_size: {hosts} or name {params.world_size} hosts"
                )
        first = text_prompt(model, params.prompt_tokens)
        prompts = [first, foreign_prompt(first, len(first), model.vocab_size())]
        job = RankJob(
            model_path=str(folder),
            split=params.split_kind,
            prompts=tuple(tuple(p) for p in prompts),
            max_tokens=params.gen_tokens,
            warmup=ctx.warmup,
            repeats=ctx.repeats,
            link_sizes_bytes=params.link_sizes_bytes,
            link_iterations=params.link_iterations,
            watch_pid=os.getpid(),
            watch_host=socket.gethostname(),
        )
        plan = LaunchPlan(params.world_size, params.backend, hostfile)
        limit = params.launch_timeout_s
        left = ctx.time_left_s()
        if left is not None:
            limit = max(1.0, min(limit, left - REPORT_MARGIN_S))
        shared = Path(params.shared_dir) if params.shared_dir else None
        if shared is not None:
            shared.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="mlx-harness-dist-", dir=shared) as tmp:
            job_dir = Path(tmp)
            outcome = launch(plan, job, job_dir, job_dir / "launch.log", limit)
        artifacts = _artifacts(params, outcome)
        settled = _settled(params, outcome, artifacts)
        if settled is not None:  # n/a, a rank's error, or a rank that died: no reference needed
            return settled
        reference, single = self._single(ctx, model, prompts, params)
        return self._judge(reference, single, outcome, artifacts)

    def _single(
        self,
        ctx: ScenarioContext,
        model: LoadedModel,
        prompts: list[list[int]],
        params: DistributedParams,
    ) -> tuple[list[list[int]], list[PromptRun]]:
        """The prompts on the worker's model, one process: the reference tokens and runs."""
        reference: list[list[int]] = [[] for _ in prompts]
        runs = []
        for index in range(ctx.warmup + ctx.repeats):
            made = 0
            for p, prompt in enumerate(prompts):
                tokens, ttft, total = _single(model, prompt, params.gen_tokens)
                made += len(tokens)
                reference[p] = reference[p] or tokens
                runs.append(
                    PromptRun(p, index >= ctx.warmup, tuple(tokens), ttft, total, len(prompt))
                )
            ctx.run_done(made)  # one run: every prompt once
        return reference, runs

    def _judge(
        self,
        reference: list[list[int]],
        single: list[PromptRun],
        outcome: LaunchOutcome,
        artifacts: dict[str, Any],
    ) -> ScenarioOutput:
        results = [r for r in outcome.results if r is not None]
        artifacts["reference_tokens"] = reference
        verdict = identical_outputs(reference, results)
        rank0 = next(r for r in results if r.rank == 0)
        dist, one = _samples(list(rank0.runs)), _samples(single)
        metrics: list[Metric] = [
            metric(m.PREFILL, *dist["prefill"]),
            metric(m.DECODE, *dist["decode"]),
            metric(m.TTFT, *dist["ttft"]),
            metric(m.SINGLE_PREFILL, *one["prefill"]),
            metric(m.SINGLE_DECODE, *one["decode"]),
            metric(m.SINGLE_TTFT, *one["ttft"]),
            metric(m.PREFILL_RATIO, _ratio(dist["prefill"][0], one["prefill"][0])),
            metric(m.DECODE_RATIO, _ratio(dist["decode"][0], one["decode"][0])),
            metric(m.PEAK_MEMORY, [float(max(r.peak_memory_bytes for r in results))]),
            metric(m.RSS, [float(max(r.rss_bytes for r in results))]),
        ]
        artifacts["identical_output"] = verdict.reason
        failures = (verdict.reason,) if verdict.status is CheckStatus.FAIL else ()
        return ScenarioOutput(tuple(metrics), artifacts, failures=failures, checks=(verdict,))


def _artifacts(params: DistributedParams, outcome: LaunchOutcome) -> dict[str, Any]:
    return {
        "world_size": params.world_size,
        "split": params.split,
        "backend": params.backend,
        "hosts": "hostfile" if params.hostfile else "localhost",
        "launch_wall_s": round(outcome.wall_s, 3),
        "ranks": [_rank_facts(r) for r in outcome.results if r is not None],
    }


def _settled(
    params: DistributedParams, outcome: LaunchOutcome, artifacts: dict[str, Any]
) -> ScenarioOutput | None:
    """The case's end when the ranks decide it alone: a rank's own error (errored), a split
    the model lacks (n/a), a rank with no result (failed); None: every rank ran."""
    results = [r for r in outcome.results if r is not None]
    errors = [r for r in results if r.status is RankStatus.ERROR]
    if errors:
        raise BackendError(f"rank {errors[0].rank}: {errors[0].reason}")
    skipped = [r for r in results if r.status is RankStatus.NOT_APPLICABLE]
    if skipped:
        why = f"{NOT_APPLICABLE}: {params.split}: {skipped[0].reason}"
        return ScenarioOutput((), artifacts, skip_reason=why)
    if outcome.problem:
        return ScenarioOutput((), artifacts, failures=(outcome.problem,))
    return None


def _rank_facts(result: RankResult) -> dict[str, Any]:
    return {
        "rank": result.rank,
        "host": result.host,
        "status": result.status.value,
        "reason": result.reason,
        "load_s": round(result.load_s, 4),
        "peak_memory_bytes": result.peak_memory_bytes,
        "rss_bytes": result.rss_bytes,
        "link": [
            {
                "op": f.op,
                "size_bytes": f.size_bytes,
                "seconds": f.seconds,
                "bytes_per_s": f.bytes_per_s,
            }
            for f in result.link
        ],
    }


SCENARIO = DistributedScenario()
