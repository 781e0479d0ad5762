"""Suite loading: every bad input is one line naming file:line:column, what, and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite

GOOD = """\
schema_version: 1
defaults: {{repeats: 2}}
models:
  - name: fake
    path: {model}
    backend: fake
scenarios:
  - scenario: throughput
    params: {{gen_tokens: 4}}
    sweep: {{prompt_tokens: [8, 16]}}
gates:
  throughput.decode_tps: ">= 1"
"""

# (name, suite text, expected line:col, fragments the message must contain)
BAD = [
    (
        "typo_key",
        "schema_version: 1\ndefaults:\n  repeets: 3\nmodels:\n  - path: {model}\n"
        "    backend: fake\nscenarios:\n  - scenario: load\n",
        "3:3",
        ["unknown key 'repeets' in defaults", "did you mean 'repeats'?"],
    ),
    (
        "wrong_type",
        "schema_version: 1\ndefaults:\n  repeats: many\nmodels:\n  - path: {model}\n"
        "    backend: fake\nscenarios:\n  - scenario: load\n",
        "3:12",
        ["defaults.repeats: expected a whole number, got 'many'", "e.g. repeats: 3"],
    ),
    (
        "bad_indentation",
        "schema_version: 1\nmodels:\n  - path: {model}\n   backend: fake\n"
        "scenarios:\n  - scenario: load\n",
        "4:4",
        ["invalid YAML", "indentation"],
    ),
    (
        "missing_model_path",
        "schema_version: 1\nmodels:\n  - path: ./nowhere\nscenarios:\n  - scenario: load\n",
        "3:5",
        ["model path './nowhere' does not exist", "fix the path"],
    ),
    (
        "unknown_scenario",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: througput\n",
        "6:15",
        ["unknown scenario 'througput'", "did you mean 'throughput'?"],
    ),
    (
        "unknown_param",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: throughput\n    params: {{gen_tokns: 3}}\n",
        "7:14",
        ["unknown parameter 'gen_tokns'", "did you mean 'gen_tokens'?"],
    ),
    (
        "bad_sweep_value",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: throughput\n    sweep: {{prompt_tokens: [8, 0]}}\n",
        "7:32",
        ["parameter 'prompt_tokens'", "greater than or equal to 1"],
    ),
    (
        "unknown_backend",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: mlx-lm\n"
        "scenarios:\n  - scenario: load\n",
        "3:5",
        ["unknown backend 'mlx-lm'", "did you mean 'mlx_lm'?"],
    ),
    (
        "unknown_gate_metric",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: load\ngates:\n  throughput.decode_tp: '>= 5'\n",
        "8:3",
        ["unknown metric 'throughput.decode_tp'", "did you mean 'throughput.decode_tps'?"],
    ),
    (
        "bad_gate_expression",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: load\ngates:\n  throughput.decode_tps: fast\n",
        "8:26",
        ["gate 'fast'", '">= 5"'],
    ),
    (
        "two_sources",
        "schema_version: 1\nmodels:\n  - path: {model}\n    hub: org/model\n"
        "scenarios:\n  - scenario: load\n",
        "3:5",
        ["exactly one of 'path', 'hub', 'embedded' or 'select' (got path, hub); keep one"],
    ),
    (
        "missing_scenarios",
        "schema_version: 1\nmodels:\n  - path: {model}\n    backend: fake\n",
        "1:1",
        ["missing required key 'scenarios'"],
    ),
    (
        "unknown_model_in_expect",
        "schema_version: 1\nmodels:\n  - name: fake\n    path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: load\nexpect:\n  - model: fak\n    status: skip\n"
        "    reason: later\n",
        "9:12",
        ["unknown model 'fak'", "did you mean 'fake'?"],
    ),
    (
        "unknown_side_by_side_reference",
        "schema_version: 1\nmodels:\n  - name: fake\n    path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: load\nside_by_side:\n  reference: fak\n",
        "9:14",
        ["side_by_side.reference names unknown model 'fak'", "did you mean 'fake'?"],
    ),
    (
        "empty_side_by_side_reference",
        "schema_version: 1\nmodels:\n  - name: fake\n    path: {model}\n    backend: fake\n"
        "scenarios:\n  - scenario: load\nside_by_side: {{reference: ''}}\n",
        "8:27",
        ["side_by_side.reference"],
    ),
    (
        "not_a_mapping",
        "- just\n- a list\n",
        "1:1",
        ["must be a YAML mapping"],
    ),
]


def test_good_suite_loads(write_suite, fake_model: Path) -> None:
    loaded = load_suite(write_suite(GOOD.format(model=fake_model)))
    assert loaded.name == "t"
    assert [m.entry.key for m in loaded.models] == ["fake"]
    assert len(loaded.sha256) == 64


@pytest.mark.parametrize(
    ("text", "position", "fragments"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_suite_gives_one_clear_line(
    write_suite, fake_model: Path, text: str, position: str, fragments: list[str]
) -> None:
    path = write_suite(text.format(model=fake_model))
    with pytest.raises(SuiteInvalid) as info:
        load_suite(path)
    lines = [str(e) for e in info.value.errors]
    assert len(lines) == 1, lines
    line = lines[0]
    assert "\n" not in line
    assert line.startswith(f"{path}:{position}: "), line
    for fragment in fragments:
        assert fragment in line


def test_include_merges_models_and_reports_errors_in_the_included_file(
    write_suite, fake_model: Path, tmp_path: Path
) -> None:
    (tmp_path / "models.yaml").write_text(
        f"models:\n  - name: shared\n    path: {fake_model}\n    backend: fake\n"
    )
    suite = write_suite(
        "schema_version: 1\ninclude: [models.yaml]\nscenarios:\n  - scenario: load\n"
    )
    assert [m.entry.key for m in load_suite(suite).models] == ["shared"]

    (tmp_path / "models.yaml").write_text("models:\n  - name: shared\n    pth: x\n")
    with pytest.raises(SuiteInvalid) as info:
        load_suite(suite)
    assert str(info.value.errors[0]).startswith(
        f"{tmp_path / 'models.yaml'}:3:5: unknown key 'pth'"
    )


def test_missing_include_is_an_error(write_suite) -> None:
    suite = write_suite("schema_version: 1\ninclude: [nope.yaml]\nscenarios:\n  - scenario: load\n")
    with pytest.raises(SuiteInvalid, match=r":2:11: included file 'nope.yaml' not found"):
        load_suite(suite)


def test_unprepared_embedded_model_names_the_fix(
    write_suite, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "empty-cache"))
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - embedded: zoo/llama\nscenarios:\n  - scenario: load\n"
    )
    with pytest.raises(SuiteInvalid, match="run `mlx-harness models prepare`"):
        load_suite(suite)
