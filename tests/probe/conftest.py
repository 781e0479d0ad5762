"""Session fixtures for the probe tests: the zoo built once, the installed stack, the table rows."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
from probe_rows import ROWS

from harness.models.zoo.families import FAMILIES
from harness.probe.installed import Stack, detect_stack
from tests.zoo_shared import zoo_family


@pytest.fixture(scope="session")
def zoo_dirs(tmp_path_factory: pytest.TempPathFactory) -> Mapping[str, Path]:
    """Every zoo family, built once for the run (about 9 s of CPU): :mod:`tests.zoo_shared`."""
    return {name: zoo_family(tmp_path_factory, name) for name in FAMILIES}


@pytest.fixture(scope="session")
def stack() -> Stack:
    return detect_stack()


@pytest.fixture(scope="session")
def row_paths(
    tmp_path_factory: pytest.TempPathFactory, zoo_dirs: Mapping[str, Path]
) -> Mapping[str, Path]:
    """Each table row's model path (zoo rows point into ``zoo_dirs``)."""
    root = tmp_path_factory.mktemp("probe-fixtures")
    return {row.name: row.build(root, zoo_dirs) for row in ROWS}
