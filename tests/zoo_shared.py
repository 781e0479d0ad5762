"""Zoo families built once per test run and shared by its pytest-xdist workers.

A session fixture runs once per worker: the probe tests' whole zoo (about 9 s of CPU) was built
three times in `make test`, and modules building the same family into their own folders built
it again. Here the first worker to ask builds the family under the run's base folder (the
parent of the workers' own), holding a lock; the others wait and reuse it. A folder is reused
only when its build marker matches the family as now defined (``is_current``), and tests only
read it (a test that changes a model copies or links it first, as ``doctored_copy`` does).
"""

from __future__ import annotations

import fcntl
from pathlib import Path

import pytest

from harness.models.zoo.build import build, is_current
from harness.models.zoo.families import FAMILIES


def run_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder all of this run's workers share (``pytest-N``, above ``popen-gwK``)."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if base.name.startswith("popen-gw") else base


def zoo_family(tmp_path_factory: pytest.TempPathFactory, name: str, *, seed: int = 0) -> Path:
    """The zoo family ``name`` (seed ``seed``), built by the first worker that asks."""
    family = FAMILIES[name]
    folder = run_folder(tmp_path_factory) / "zoo-shared"
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / (name if seed == 0 else f"{name}-seed{seed}")
    with (folder / f"{target.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not is_current(target, family, seed=seed):
            build(family, target, seed=seed)
    return target
