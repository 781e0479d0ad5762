"""Validate-time warnings for repeats too few for any comparison to decide."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.spec.loader import load_suite
from harness.spec.power import repeat_warnings

HEAD = "schema_version: 1\nmodels:\n  - {name: m, path: MODEL, backend: fake}\n"
THROUGHPUT = "  - scenario: throughput\n    params: {gen_tokens: 4}\n"
FIX = "set repeats: 4 or more so compare and relative gates can decide"

# (name, text after the models, expected warnings as "line:column: message; fix")
CASES = [
    (
        "defaults_three",
        "defaults: {repeats: 3}\nscenarios:\n" + THROUGHPUT,
        [f"4:12: repeats: 3 cannot show a significant change (needs >= 4 a side); {FIX}"],
    ),
    ("defaults_four", "defaults: {repeats: 4}\nscenarios:\n" + THROUGHPUT, []),
    (
        "implicit_default",
        "scenarios:\n" + THROUGHPUT,
        [
            "1:1: repeats: 3 (the default) cannot show a significant change (needs >= 4 a side);"
            " add 'defaults: {repeats: 4}'"
        ],
    ),
    (
        "scenario_overrides_up",
        "defaults: {repeats: 3}\nscenarios:\n" + THROUGHPUT + "    repeats: 5\n",
        [],
    ),
    (
        "scenario_overrides_down",
        "defaults:\n  repeats: 5\nscenarios:\n" + THROUGHPUT + "    repeats: 2\n",
        [f"9:5: repeats: 2 cannot show a significant change (needs >= 4 a side); {FIX}"],
    ),
    (
        "one_warning_per_repeats",
        "defaults:\n  repeats: 2\nscenarios:\n"
        + THROUGHPUT
        + THROUGHPUT.replace("put\n", "put\n    id: t8\n"),
        [f"5:3: repeats: 2 cannot show a significant change (needs >= 4 a side); {FIX}"],
    ),
    # load's samples come from reloads; prompt_cache_lru measures counts and shares
    ("load_only", "defaults: {repeats: 1}\nscenarios:\n  - scenario: load\n", []),
    ("counts_only", "defaults: {repeats: 1}\nscenarios:\n  - scenario: prompt_cache_lru\n", []),
]


def _write(tmp_path: Path, name: str, body: str) -> Path:
    model = write_fake_model(tmp_path / "m")
    suite = tmp_path / f"{name}.suite.yaml"
    suite.write_text(HEAD.replace("MODEL", str(model)) + body)
    return suite


@pytest.mark.parametrize(("name", "body", "expected"), CASES, ids=[c[0] for c in CASES])
def test_repeat_warnings(tmp_path: Path, name: str, body: str, expected: list[str]) -> None:
    suite = _write(tmp_path, name, body)
    loaded = load_suite(suite)
    assert [str(w) for w in repeat_warnings(loaded)] == [f"{suite}:{e}" for e in expected]
    assert [str(w) for w in loaded.warnings] == [f"{suite}:{e}" for e in expected]


def test_a_stricter_alpha_needs_more_repeats(tmp_path: Path) -> None:
    loaded = load_suite(_write(tmp_path, "s", "defaults: {repeats: 4}\nscenarios:\n" + THROUGHPUT))
    (warning,) = repeat_warnings(loaded, alpha=0.01)
    assert "repeats: 4 cannot show a significant change (needs >= 5 a side)" in str(warning)


def test_validate_prints_the_warning_and_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _write(tmp_path, "s", "defaults: {repeats: 3}\nscenarios:\n" + THROUGHPUT)
    assert main(["validate", str(suite)]) == 0
    out, err = capsys.readouterr()
    assert "ok (1 models, 1 cases)" in out
    assert err.splitlines() == [
        f"{suite}:4:12: repeats: 3 cannot show a significant change (needs >= 4 a side); {FIX}"
    ]
