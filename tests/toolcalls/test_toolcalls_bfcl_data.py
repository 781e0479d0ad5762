"""The pinned bfcl-eval data in the cache: `data: bfcl[:stems]` parsed, the imported folder
made once (atomically, with a stamp), rebuilt when stale, and the CLI's no-argument form."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.cli.toolcalls import add_parser
from harness.models.fetch import FetchError
from harness.toolcalls import bfcl_data
from harness.toolcalls.bfcl_import import CATEGORIES


@pytest.mark.parametrize(
    ("data", "stems"),
    [
        ("bfcl", tuple(CATEGORIES)),
        ("bfcl:", tuple(CATEGORIES)),
        ("bfcl:simple_python", ("simple_python",)),
        ("bfcl: simple_python , parallel", ("simple_python", "parallel")),
        ("bfcl:parallel,parallel", ("parallel",)),
        ("bfclx", None),
        ("suites/data/toolcalls/live", None),
        ("/data/bfcl", None),
    ],
)
def test_source_stems(data: str, stems: tuple[str, ...] | None) -> None:
    assert bfcl_data.source_stems(data) == stems


def test_an_unknown_stem_names_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown BFCL category 'simple'.*simple_python"):
        bfcl_data.source_stems("bfcl:simple")


def test_file_patterns_keep_parallel_apart_from_parallel_multiple(tmp_path: Path) -> None:
    for name in (
        "parallel",
        "parallel_01",
        "parallel_02",
        "parallel_multiple",
        "parallel_multiple_01",
    ):
        (tmp_path / f"bfcl_{name}.yaml").write_text("")
    found = {
        p.name for pattern in bfcl_data.file_patterns(("parallel",)) for p in tmp_path.glob(pattern)
    }
    assert found == {"bfcl_parallel.yaml", "bfcl_parallel_01.yaml", "bfcl_parallel_02.yaml"}


@pytest.fixture(scope="module")
def wheel() -> Path:
    try:
        return bfcl_data.fetch_bfcl()
    except FetchError as exc:  # only where PyPI cannot be reached; `make test` fetches it
        pytest.skip(f"bfcl-eval wheel not available: {exc}")


@pytest.fixture()
def cache(wheel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache for the import; the wheel's files come from the real cache."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(bfcl_data, "fetch_bfcl", lambda: wheel)
    return tmp_path / "cache"


@pytest.mark.nightly  # the whole wheel imported again into an empty cache: 20-55 s of CPU here
def test_imported_once_with_a_stamp(cache: Path) -> None:
    assert not bfcl_data.is_imported()
    folder = bfcl_data.ensure_imported()
    assert folder == bfcl_data.imported_dir() and folder.is_relative_to(cache)
    stamp = folder / bfcl_data.STAMP
    counts = bfcl_data.imported_counts()
    assert sum(c[0] for c in counts.values()) == 3313
    assert sum(c[1] for c in counts.values()) == 162
    assert len((folder / "skipped.txt").read_text().splitlines()) == 162
    before = stamp.stat().st_mtime_ns
    assert bfcl_data.ensure_imported() == folder
    assert stamp.stat().st_mtime_ns == before  # kept, not imported again
    data = json.loads(stamp.read_text())
    stamp.write_text(json.dumps({**data, "importer": data["importer"] - 1}))
    assert not bfcl_data.is_imported()  # an older importer's folder is rebuilt


def test_a_failed_import_leaves_no_half_folder(
    cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: Any) -> Any:
        raise OSError("disk full")

    monkeypatch.setattr(bfcl_data, "write", broken)
    with pytest.raises(OSError, match="disk full"):
        bfcl_data.ensure_imported()
    parent = bfcl_data.imported_dir().parent
    assert not bfcl_data.imported_dir().exists()
    assert list(parent.iterdir()) == []


@pytest.mark.nightly  # a second whole import (20 s); test_imported_once_with_a_stamp does one
def test_cli_without_arguments_fills_the_cache(
    cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser(prog="mlx-harness")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["toolcalls", "import-bfcl"])
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "simple_python: 398 imported, 2 skipped" in printed
    assert f"3313 prompts in {bfcl_data.imported_dir()}" in printed
    assert main(["toolcalls", "import-bfcl", "--categories", "parallel"]) == 2
    assert "need --out DIR" in capsys.readouterr().err
