"""A :class:`Case` for a model directory, as the planner would make it (tests build their own)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.core.types import Case, ModelRef, ModelSource


def path_case(
    path: Path,
    key: str,
    scenario: str,
    params: Mapping[str, Any],
    *,
    backend: str = "mlx_lm",
    suite: str = "t",
    point: Mapping[str, Any] | None = None,
    case_id: str | None = None,
    timeout_s: float = 300.0,
) -> Case:
    """One measured run (repeats 1, no warm-up) of ``scenario`` on the model at ``path``."""
    return Case(
        case_id=case_id or f"{suite}::{key}::{scenario}",
        suite=suite,
        suite_path=f"{suite}.suite.yaml",
        model=ModelRef(key, ModelSource.PATH, str(path), backend, (), str(path)),
        scenario=scenario,
        params=dict(params),
        point=dict(point or {}),
        repeats=1,
        warmup=0,
        timeout_s=timeout_s,
    )


def gated_throughput_case(
    path: Path, gate: str, *, prompt_tokens: int = 8, wait_for_quiet_s: float = 0.0
) -> Case:
    """The fake model's throughput case (2 repeats, no warm-up) with one gate on its decode
    speed (``throughput.decode_tps``), as a suite would give it."""
    from harness.spec.gates import parse_gate

    return Case(
        case_id="t::good::throughput",
        suite="t",
        suite_path="t.suite.yaml",
        model=ModelRef("good", ModelSource.PATH, str(path), "fake", (), str(path)),
        scenario="throughput",
        params={"prompt_tokens": prompt_tokens, "gen_tokens": 4, "ignore_eos": True},
        repeats=2,
        warmup=0,
        timeout_s=20.0,
        gates=(parse_gate("throughput.decode_tps", gate),),
        wait_for_quiet_s=wait_for_quiet_s,
    )
