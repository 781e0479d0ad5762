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
