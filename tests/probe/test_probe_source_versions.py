"""``installed_versions`` reads a version from its ``NAME-VERSION.dist-info`` folder name, and
from METADATA when the folder says nothing (egg-info, an odd name): the same as METADATA says."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import pytest

from harness.probe.source import _version_of, installed_versions

CASES = [
    # (folder, METADATA's version, the version read)
    ("mlx_lm-0.31.3.dist-info", "0.31.3", "0.31.3"),
    ("torch-2.5.1+cpu.dist-info", "2.5.1+cpu", "2.5.1+cpu"),
    ("mlx_harness-0.2.0.dist-info", "0.2.0", "0.2.0"),
    ("odd.dist-info", "1.0", "1.0"),  # no version in the name: METADATA
    ("pkg-1.0.egg-info", "1.0.post1", "1.0.post1"),  # not dist-info: METADATA
]


@pytest.mark.parametrize(("folder", "metadata", "expected"), CASES)
def test_the_version_comes_from_the_folder_or_metadata(
    tmp_path: Path, folder: str, metadata: str, expected: str
) -> None:
    path = tmp_path / folder
    path.mkdir()
    (path / "METADATA").write_text(f"Metadata-Version: 2.1\nName: x\nVersion: {metadata}\n")
    assert _version_of(importlib.metadata.PathDistribution(path)) == expected


def test_every_installed_distribution_reads_as_its_metadata_says() -> None:
    found = installed_versions()
    assert found["mlx-harness"] == importlib.metadata.version("mlx-harness")
    for dist in importlib.metadata.distributions():
        assert _version_of(dist) == dist.version, dist
