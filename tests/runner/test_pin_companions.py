"""The mlx (and transformers) chosen for a pinned mlx-lm: its Requires-Dist bound, the newest
release uploaded no later than it, pinned only when the companion has moved to a later series;
pins win; mlx-cpu follows mlx on Linux. Against recorded PyPI facts (no network)."""

from __future__ import annotations

import pytest
from packaging.version import Version

from harness.runner.pin_companions import choose, required_range, series
from tests.runner.recorded_releases import REQUIRES, all_releases


@pytest.mark.parametrize(
    ("version", "pinned", "platform", "added"),
    [
        # measured: 0.31.x needs an mlx before 0.32 (0.32.4 breaks every served request)
        ("0.31.1", {}, "linux", ["mlx==0.31.0", "mlx-cpu==0.31.0"]),
        ("0.31.3", {}, "linux", ["mlx==0.31.2", "mlx-cpu==0.31.2"]),
        # a yanked release pinned exactly is dated like any
        ("0.31.0", {}, "linux", ["mlx==0.31.0", "mlx-cpu==0.31.0"]),
        # 0.27 also needs transformers 4 (the release before 5 existed); 4.57.0 yanked
        ("0.27.1", {}, "linux", ["mlx==0.29.0", "transformers==4.56.0", "mlx-cpu==0.29.0"]),
        ("0.27.1", {}, "darwin", ["mlx==0.29.0", "transformers==4.56.0"]),
        # today's series: nothing to add
        ("0.32.2", {}, "linux", []),
        # pins win; mlx-cpu follows a pinned mlx
        ("0.31.1", {"mlx": "0.31.2"}, "linux", ["mlx-cpu==0.31.2"]),
        ("0.31.3", {"mlx": "0.31.2", "mlx-cpu": "0.31.2"}, "linux", []),
        ("0.27.1", {"transformers": "4.56.1"}, "darwin", ["mlx==0.29.0"]),
    ],
)
def test_companions_of_a_pinned_mlx_lm(
    version: str, pinned: dict[str, str], platform: str, added: list[str]
) -> None:
    choices, notes = choose(
        Version(version), REQUIRES[version], all_releases(), {"mlx-lm": version, **pinned}, platform
    )
    assert [c.pin for c in choices] == added
    assert all(c.why for c in choices)
    assert len(notes) + len([c for c in choices if not c.pin.startswith("mlx-cpu")]) == 2


def test_the_reason_names_the_bound_and_the_dates() -> None:
    choices, _ = choose(Version("0.31.1"), REQUIRES["0.31.1"], all_releases(), {}, "linux")
    assert choices[0].line() == (
        "mlx==0.31.0 (mlx-lm 0.31.1 (2026-03-11) requires mlx>=0.30.4; newest mlx released no "
        "later: 0.31.0 (2026-02-27); 0.32.4 is a later series)"
    )


def test_a_release_the_index_lacks_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"0\.30\.9 is not on the index"):
        choose(Version("0.30.9"), [], all_releases(), {}, "linux")


@pytest.mark.parametrize(
    ("version", "expected"),
    [("0.31.2", (0, 31)), ("0.32", (0, 32)), ("4.56.0", (4,)), ("5", (5,))],
)
def test_series(version: str, expected: tuple[int, ...]) -> None:
    assert series(Version(version)) == expected


def test_the_bound_is_read_whatever_the_marker() -> None:
    assert str(required_range(REQUIRES["0.31.1"], "mlx")) == ">=0.30.4"
    assert str(required_range(["numpy", "not a requirement !"], "mlx")) == ""
