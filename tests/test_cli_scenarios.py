"""``mlx-harness scenarios``: the listing, the Markdown table, docs/scenarios.md kept in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.scenarios import README_BEGIN, README_END, markdown_table, with_generated
from harness.scenarios import SCENARIOS

README = Path(__file__).resolve().parents[1] / "docs" / "scenarios.md"


def test_readme_parameter_table_is_generated_and_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert with_generated(text) == text, (
        "docs/scenarios.md's generated tables (metrics, contracts, parameters) are stale: "
        "run `make readme-params`"
    )


def test_markdown_table_has_a_section_per_scenario() -> None:
    table = markdown_table()
    for name in SCENARIOS.names():
        assert f"**`{name}`**" in table
    assert "| `prompt_tokens` | `int` | `128` | tokens | prompt length in tokens |" in table


def test_update_readme_rewrites_only_between_the_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# top\n\n{README_BEGIN}\nold table\n{README_END}\n\nafter\n")
    assert main(["scenarios", "--update-readme", str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("# top\n\n") and text.endswith(f"{README_END}\n\nafter\n")
    assert "old table" not in text and "**`throughput`**" in text


def test_update_readme_without_markers_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# no markers\n")
    assert main(["scenarios", "--update-readme", str(readme)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "README.md: no '<!-- scenario-params:begin" in err
    assert readme.read_text() == "# no markers\n"


def test_listing_shows_name_type_default_unit_and_description(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["scenarios", "throughput"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "throughput (version 1)"
    assert lines[1].split() == ["parameter", "type", "default", "unit", "description"]
    row = next(line for line in lines if line.strip().startswith("gen_tokens"))
    assert row.split()[:4] == ["gen_tokens", "int", "32", "tokens"]
    assert row.endswith("tokens to generate (EOS ignored)")


def test_an_unknown_scenario_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenarios", "througput"]) == 2
    assert "did you mean 'throughput'?" in capsys.readouterr().err
