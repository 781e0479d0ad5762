"""Pin sets in a suite: good ones load; each bad one is one line with file:line:col and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.pin_sets import exact_pin

HEAD = (
    "schema_version: 1\nmodels:\n  - {{name: m, path: {model}, backend: fake}}\n"
    "scenarios:\n  - scenario: load\npin_sets:\n"
)

# (id, pin_sets lines, expected "line:col", fragments of the one error line)
BAD = [
    ("not_exact", '  - {name: a, pins: ["mlx-lm>=0.31"]}\n', "7:", ["is not exact", "e.g. pins:"]),
    ("wildcard", '  - {name: a, pins: ["mlx-lm==0.31.*"]}\n', "7:", ["wildcard", "e.g. pins:"]),
    ("not_a_req", '  - {name: a, pins: ["mlx lm 1"]}\n', "7:", ["not a requirement"]),
    ("twice", '  - {name: a, pins: ["mlx==1", "MLX==2"]}\n', "7:", ["pinned twice"]),
    ("empty", "  - {name: a, pins: []}\n", "7:", ["pin set 'a' has no pins", "track: lock"]),
    ("no_pins", "  - {name: a}\n", "7:", ["pin set 'a' has no pins", "e.g. pins:"]),
    (
        "lock_and_pins",
        '  - {name: a, track: lock, pins: ["mlx==1"]}\n',
        "7:",
        ["tracks the lock and has pins", "drop the pins"],
    ),
    ("bad_track", "  - {name: a, track: newest}\n", "7:", ["track", "'lock' or 'latest'"]),
    ("bad_extra", "  - {name: a, track: latest, extras: [cuda]}\n", "7:", ["extras"]),
    ("bad_name", '  - {name: "a b", pins: ["mlx==1"]}\n', "7:", ["name"]),
    ("typo_key", '  - {name: a, pinz: ["mlx==1"]}\n', "7:", ["unknown key 'pinz'"]),
    (
        "dup_name",
        '  - {name: a, pins: ["mlx==1"]}\n  - {name: a, pins: ["mlx==2"]}\n',
        "",
        ["pin set 'a' is named twice", "give each a new name"],
    ),
]


@pytest.mark.parametrize(
    ("text", "where", "fragments"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_pin_sets_are_one_line(
    tmp_path: Path, text: str, where: str, fragments: list[str]
) -> None:
    model = write_fake_model(tmp_path / "m")
    path = tmp_path / "p.suite.yaml"
    path.write_text(HEAD.format(model=model) + text)
    with pytest.raises(SuiteInvalid) as info:
        load_suite(path)
    assert all("\n" not in str(e) for e in info.value.errors)
    line = " | ".join(str(e) for e in info.value.errors)
    assert line.startswith(f"{path}:{where}")
    for fragment in fragments:
        assert fragment in line


def test_good_pin_sets_load(tmp_path: Path) -> None:
    model = write_fake_model(tmp_path / "m")
    path = tmp_path / "p.suite.yaml"
    text = '  - {name: old, pins: ["mlx-lm==0.31.3"]}\n  - {name: new, pins: ["mlx-lm==0.32.2"]}\n'
    path.write_text(HEAD.format(model=model) + text)
    suite = load_suite(path).suite
    assert [(p.name, p.pins) for p in suite.pin_sets] == [
        ("old", ["mlx-lm==0.31.3"]),
        ("new", ["mlx-lm==0.32.2"]),
    ]


def test_tracking_pin_sets_load(tmp_path: Path) -> None:
    model = write_fake_model(tmp_path / "m")
    path = tmp_path / "p.suite.yaml"
    text = (
        "  - {name: locked, track: lock, extras: [all]}\n"
        '  - {name: latest, track: latest, pins: ["mlx-lm==0.32.2"]}\n'
    )
    path.write_text(HEAD.format(model=model) + text)
    suite = load_suite(path).suite
    assert [(p.name, p.track, p.pins, p.extras) for p in suite.pin_sets] == [
        ("locked", "lock", [], ["all"]),
        ("latest", "latest", ["mlx-lm==0.32.2"], []),
    ]


@pytest.mark.parametrize(
    ("pin", "parsed"),
    [
        ("mlx-lm==0.31.3", ("mlx-lm", "0.31.3")),
        ("harness_fake_dep == 1.6", ("harness_fake_dep", "1.6")),
    ],
)
def test_exact_pin(pin: str, parsed: tuple[str, str]) -> None:
    assert exact_pin(pin) == parsed


def test_read_pin_sets_alone_is_one_line_with_the_position(tmp_path: Path) -> None:
    from harness.spec.pin_sets import PinSetsInvalid, read_pin_sets

    path = tmp_path / "p.suite.yaml"
    path.write_text(
        "schema_version: 1\nmodels: [{path: x, backend: only_in_the_pin_set}]\n"
        'pin_sets:\n  - {name: a, pins: ["mlx-lm==1"]}\n  - {name: b, pins: ["mlx-lm>1"]}\n'
    )
    with pytest.raises(PinSetsInvalid) as info:
        read_pin_sets(path)
    assert str(info.value).startswith(f"{path}:5:")
    assert "pin 'mlx-lm>1' is not exact" in str(info.value) and "e.g. pins:" in str(info.value)
    path.write_text(path.read_text().replace("mlx-lm>1", "mlx-lm==2"))
    assert [p.name for p in read_pin_sets(path)] == ["a", "b"]
