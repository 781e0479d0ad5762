"""Generated nightly run records for the history and site tests and the scale benchmark.

Each night is one run folder (``night-0000/run.jsonl``) written by the real
:class:`~harness.results.store.RunWriter`, all under the fixed run id ``nightly`` (as a nightly
job with ``--run-id`` writes them). What a test plants is data: a step from some night on (with
a package bump), a stretch of nights flagged as measured on a busy machine (and noisy), a single
dipped night, a model revision change.
"""

from __future__ import annotations

import contextlib
import datetime
import random
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from unittest import mock

from harness.core.types import CaseResult, Machine, Metric, ModelIdentity, Status, Unit
from harness.results.store import RUN_FILE, RunWriter

MACHINE = Machine("Linux", "6", "x86_64", "Apple M2 Max", 12, 64 * 2**30, "3.11", "mac-1")
BUSY = "machine busy (load 3.1, 45% CPU in other processes)"
DECODE = "throughput.decode_tps"
TTFT = "throughput.ttft_s"
START = datetime.datetime(2024, 1, 1, 2, 0, tzinfo=datetime.UTC)


@dataclass(frozen=True)
class Plan:
    nights: int
    cases: int = 4
    models: tuple[str, ...] = ("m",)
    step_at: int | None = None  # from this night on, decode is ``step`` slower ...
    step: float = 0.2
    bump: tuple[str, str] = ("0.32.4", "0.33.0")  # ... and mlx moved from -> to
    flagged: range = range(0)  # nights measured on a busy machine: flagged, noisy, slow
    dip_at: int | None = None  # one night 7% slow, nothing flagged
    revision_at: int | None = None  # from this night on, the model's files are another revision
    noise: float = 0.01  # relative spread of the samples
    seed: int = 0
    case_names: Mapping[int, str] = field(default_factory=dict)  # case index -> case id


def night_dir(root: Path, night: int) -> Path:
    return root / f"night-{night:04d}"


def case_id(plan: Plan, index: int) -> str:
    model = plan.models[index % len(plan.models)]
    return plan.case_names.get(index, f"nightly::{model}::throughput[prompt_tokens={index}]")


def _identity(plan: Plan, model: str, night: int) -> ModelIdentity:
    new = plan.revision_at is not None and night >= plan.revision_at
    return ModelIdentity(
        model,
        f"/models/{model}",
        "mlx_lm",
        revision=("b" if new else "a") * 40,
        weights_bytes=98_000_000 if new else 538_000_000,
    )


def _case(plan: Plan, night: int, index: int, rng: random.Random) -> CaseResult:
    factor = 1.0
    if plan.step_at is not None and night >= plan.step_at:
        factor *= 1 - plan.step
    if night == plan.dip_at:
        factor *= 0.93
    dirty = night in plan.flagged
    spread = plan.noise * (8 if dirty else 1)
    if dirty:
        factor *= rng.uniform(0.6, 1.0)
    base = 20.0 + index

    def samples(center: float) -> tuple[float, ...]:
        return tuple(center * rng.lognormvariate(0, spread) for _ in range(5))

    artifacts: dict[str, object] = {
        "prompt_tokens": index,
        "repeats": {"mode": "fixed", "taken": 5, "cv": {DECODE: spread, TTFT: spread}},
        "timing": {"load_s": 0.0, "scenario_s": 1.5},
    }
    if dirty:
        artifacts["machine_state"] = {"dirty": [BUSY]}
    model = plan.models[index % len(plan.models)]
    return CaseResult(
        case_id(plan, index),
        "nightly",
        model,
        "throughput",
        Status.PASSED,
        params={"prompt_tokens": index, "gen_tokens": 128},
        point={"prompt_tokens": index},
        metrics=(
            Metric(DECODE, Unit.TOKENS_PER_SECOND, samples(base * factor), (base,)),
            Metric(TTFT, Unit.SECONDS, samples(0.05 / factor), (0.05,)),
            Metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, samples(500.0), (500.0,)),
        ),
        artifacts=artifacts,
        duration_s=2.0,
        started_at=(START + datetime.timedelta(days=night)).isoformat(),
    )


@contextlib.contextmanager
def _no_fsync() -> Iterator[None]:
    """Generating thousands of nights need not wait for the disk each line."""
    with mock.patch("harness.results.store.os.fsync"):
        yield


def write_night(root: Path, plan: Plan, night: int) -> Path:
    """Night ``night`` of ``plan`` as its run folder under ``root``; returns the folder."""
    rng = random.Random(plan.seed * 1_000_003 + night)
    folder = night_dir(root, night)
    old, new = plan.bump
    mlx = new if plan.step_at is not None and night >= plan.step_at else old
    at = (START + datetime.timedelta(days=night)).isoformat()
    with _no_fsync():
        writer = RunWriter(folder / RUN_FILE)
        try:
            writer.start(
                run_id="nightly",
                started_at=at,
                machine=MACHINE,
                packages={"mlx": mlx, "mlx-lm": "0.32.2"},
                git_sha="a1b2c3d",
                suites=[],
            )
            for model in plan.models:
                writer.model(_identity(plan, model, night))
            for index in range(plan.cases):
                writer.case(_case(plan, night, index, rng))
            writer.finish(at)
        finally:
            writer.close()
    return folder


def write_nights(root: Path, plan: Plan, nights: range | None = None) -> Path:
    """Every night of ``plan`` (or those in ``nights``) under ``root``; returns ``root``."""
    for night in nights if nights is not None else range(plan.nights):
        write_night(root, plan, night)
    return root
