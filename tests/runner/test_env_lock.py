"""The run's environment against the harness's uv.lock: every installed distribution the lock
names at a version it holds, none it lacks; the record keeps the check and the report says it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from harness.core.types import LockCheck
from harness.report import render_markdown
from harness.results.store import load_run, write_record
from harness.runner.env_lock import check_against, environment_lock, lock_versions
from tests.report.report_fixtures import case, make_run

CHECKOUT = Path(__file__).resolve().parents[2]
LOCK = frozenset
LOCKED = {
    "mlx": LOCK({"0.32.4"}),
    "numpy": LOCK({"2.4.6", "2.5.5"}),
    "transformers": LOCK({"5.23.0"}),
}

# installed -> differences (in name order)
CHECKS = [
    ({"mlx": "0.32.4", "numpy": "2.5.5", "transformers": "5.23.0"}, ()),
    ({"mlx": "0.32.4", "numpy": "2.4.6"}, ()),  # one of a universal lock's versions
    (
        {"mlx": "0.32.4", "transformers": "5.24.0"},
        ("transformers 5.24.0 (lock: 5.23.0)",),
    ),
    ({"mlx": "0.32.4", "six": "1.16.0"}, ("six 1.16.0 (not in the lock)",)),
    # the installers' tools and the harness itself are not the environment under test
    ({"mlx": "0.32.4", "pip": "23.2.1", "setuptools": "68", "mlx-harness": "0.1.0"}, ()),
    (
        {"numpy": "1.26.4", "mlx": "0.31.2"},
        ("mlx 0.31.2 (lock: 0.32.4)", "numpy 1.26.4 (lock: 2.4.6, 2.5.5)"),
    ),
]


@pytest.mark.parametrize(("installed", "differences"), CHECKS)
def test_installed_versions_against_the_lock(
    installed: dict[str, str], differences: tuple[str, ...]
) -> None:
    check = check_against(LOCKED, installed, Path("uv.lock"), "0" * 64)
    assert check.differences == differences
    assert check.matched is (not differences)


@pytest.mark.parametrize(
    ("differences", "line"),
    [
        ((), "matches uv.lock (5 packages)"),
        (("a 1 (lock: 2)",), "differs from uv.lock: a 1 (lock: 2)"),
        (
            tuple(f"p{i} 1 (lock: 2)" for i in range(5)),
            "differs from uv.lock: p0 1 (lock: 2), p1 1 (lock: 2), p2 1 (lock: 2), +2 more",
        ),
    ],
)
def test_the_line_people_read(differences: tuple[str, ...], line: str) -> None:
    assert LockCheck("/repo/uv.lock", "0" * 64, 5, differences).line() == line


def test_the_set_up_environment_is_the_lock() -> None:
    """`make setup` installs exactly uv.lock: the environment these tests run in matches it."""
    check = environment_lock(CHECKOUT)
    assert check is not None
    assert check.differences == (), check.differences
    assert check.checked > 50


def test_the_lock_pins_the_stack() -> None:
    locked = lock_versions((CHECKOUT / "uv.lock").read_text(), CHECKOUT / "uv.lock")
    for name in (
        "mlx",
        "mlx-cpu",
        "mlx-metal",
        "mlx-lm",
        "mlx-vlm",
        "mlx-audio",
        "transformers",
        "tokenizers",
        "huggingface-hub",
        "numpy",
    ):
        assert locked.get(name), f"{name} is not in uv.lock"


def test_no_lock_records_nothing_and_a_broken_lock_is_a_difference(tmp_path: Path) -> None:
    assert environment_lock(tmp_path) is None  # an installed harness: no checkout, no lock
    (tmp_path / "uv.lock").write_text("[[package]\nname = ")
    check = environment_lock(tmp_path)
    assert check is not None and not check.matched
    (line,) = check.differences
    assert line.startswith(f"{tmp_path / 'uv.lock'}: not a TOML lock (") and "make lock" in line


def test_the_record_keeps_the_check_and_the_report_says_it(tmp_path: Path) -> None:
    check = LockCheck("/repo/uv.lock", "a" * 64, 103, ("transformers 5.24.0 (lock: 5.23.0)",))
    run = dataclasses.replace(make_run([case("m", "load")]), lock=check)
    back = write_record(run, tmp_path / "run")
    assert back.lock == check
    assert "differs from uv.lock: transformers 5.24.0 (lock: 5.23.0)" in render_markdown(back)
    plain = write_record(
        make_run([case("m", "load")]), tmp_path / "plain"
    )  # no lock: no key written
    first = json.loads((tmp_path / "plain" / "run.jsonl").read_text().splitlines()[0])
    assert "lock" not in first and plain.lock is None
    assert load_run(tmp_path / "run").lock == check


def test_the_quick_read_of_the_lock_is_the_toml_read() -> None:
    """uv.lock is read by the pattern uv writes; on the real lock it gives what TOML gives, and
    a lock in another layout falls back to the TOML."""
    import tomllib

    text = (CHECKOUT / "uv.lock").read_text()
    expected: dict[str, set[str]] = {}
    for package in tomllib.loads(text)["package"]:
        expected.setdefault(package["name"], set()).add(package["version"])
    got = lock_versions(text, CHECKOUT / "uv.lock")
    assert {k: set(v) for k, v in got.items()} == expected
    reordered = '[[package]]\nversion = "1.0"\nname = "six"\n'  # valid TOML, another order
    assert lock_versions(reordered, Path("uv.lock")) == {"six": frozenset({"1.0"})}
