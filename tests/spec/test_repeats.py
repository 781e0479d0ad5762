"""``repeats``: a number, ``auto`` or ``{auto: {...}}``, in defaults and per scenario."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.core.types import AutoRepeats
from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.plan import plan

HEAD = "schema_version: 1\nmodels:\n  - {{name: m, path: {model}, backend: fake}}\n"

# (defaults' repeats, the scenario's own, expected (first batch, auto settings) of its case)
CASES = [
    ("5", None, (5, None)),
    ("auto", None, (6, AutoRepeats(6, 30, 0.02, 120.0))),
    ("AUTO", None, (6, AutoRepeats())),
    (
        "{auto: {min: 4, max: 20, rel_ci: 0.05, budget_s: 60}}",
        None,
        (4, AutoRepeats(4, 20, 0.05, 60.0)),
    ),
    ("{auto: {max: 8}}", None, (6, AutoRepeats(max_repeats=8))),
    ("{auto: }", None, (6, AutoRepeats())),
    ("auto", "3", (3, None)),  # a scenario's own count wins over the defaults' auto
    ("4", "auto", (6, AutoRepeats())),
]


@pytest.mark.parametrize(("default", "own", "expected"), CASES)
def test_repeats_forms(write_suite, tmp_path: Path, default, own, expected) -> None:  # type: ignore[no-untyped-def]
    model = write_fake_model(tmp_path / "m")
    scenario = "  - scenario: throughput\n    params: {gen_tokens: 4}\n"
    if own is not None:
        scenario += f"    repeats: {own}\n"
    text = HEAD.format(model=model) + f"defaults:\n  repeats: {default}\nscenarios:\n{scenario}"
    (case,) = plan(load_suite(write_suite(text)))
    assert (case.repeats, case.auto_repeats) == expected


# (repeats as written, fragments of the one error line)
BAD = [
    ("many", ["defaults.repeats: expected a whole number, got 'many'", "e.g. repeats: 3"]),
    ("0", ["defaults.repeats: repeats must be at least 1, got 0"]),
    ("2.5", ["defaults.repeats"]),
    ("{auto: {min: 10, max: 5}}", ["max 5 is below min 10", "make max at least min"]),
    ("{auto: {rel_ci: 2}}", ["rel_ci"]),
    ("{auto: {min: 1}}", ["min"]),
    ("{auto: {tries: 3}}", ["tries"]),
    ("{min: 4}", ["takes a number, 'auto' or {auto: {...}}", "repeats: {auto: {min: 6"]),
]


@pytest.mark.parametrize(("written", "fragments"), BAD)
def test_bad_repeats_give_one_line(write_suite, tmp_path: Path, written, fragments) -> None:  # type: ignore[no-untyped-def]
    model = write_fake_model(tmp_path / "m")
    text = HEAD.format(model=model) + f"defaults:\n  repeats: {written}\nscenarios:\n"
    text += "  - scenario: load\n"
    with pytest.raises(SuiteInvalid) as info:
        load_suite(write_suite(text))
    (line,) = [str(e) for e in info.value.errors]
    assert "\n" not in line
    assert ":5:" in line  # the line of repeats
    for fragment in fragments:
        assert fragment in line, line
