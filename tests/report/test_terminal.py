"""The plain-text summary printed at the end of a run: a table per scenario, headline figures."""

from __future__ import annotations

import pytest
from report_fixtures import case, make_run, metric, realistic_run

from harness.core.types import Status, Unit
from harness.report import terminal_summary
from harness.report.terminal import HEADLINES
from harness.scenarios import SCENARIOS


def _table(lines: list[str], scenario: str) -> list[str]:
    """The lines of one scenario's table: its header row, the rule, its rows."""
    start = lines.index(scenario) + 1
    end = next(
        (i for i in range(start, len(lines) - 1) if not lines[i].startswith("  ")),
        len(lines) - 1,
    )
    return lines[start:end]


def test_terminal_summary_has_a_table_per_scenario_and_the_counts() -> None:
    lines = terminal_summary(realistic_run())
    assert lines[0] == "mlx-harness run 20250101T120000-abc123"
    assert [line for line in lines[1:-1] if not line.startswith("  ")] == [
        "load",
        "throughput",
        "prompt_cache",
        "tool_calls",
    ]
    assert lines[-1] == (
        "24 cases: 15 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 failed, 1 errored, "
        "1 timed_out, 1 crashed"
    )
    throughput = _table(lines, "throughput")
    assert throughput[0].split() == [
        *("model", "point", "status", "decode", "tok/s", "prefill", "tok/s", "TTFT"),
    ]
    assert set(throughput[1].strip()) == {"-"}
    row = next(line for line in throughput if "pp128 tg128" in line and "qwen" in line)
    assert row.split()[-4:] == ["96.7", "834.9", "155", "ms"]
    assert len(throughput) == 2 + 12


def test_load_shows_load_time_and_weights_in_units_that_fit() -> None:
    load = _table(terminal_summary(realistic_run()), "load")
    assert load[0].split() == ["model", "status", "load", "time", "weights"]  # no point column
    assert load[2].split()[-4:] == ["867", "ms", "660.6", "MiB"]
    assert next(line for line in load if "gemma" in line).split()[-4:] == [
        "1.30",
        "s",
        "1.29",
        "GiB",
    ]


@pytest.mark.parametrize(
    ("scenario", "metrics", "header", "shown"),
    [
        (
            "prompt_cache",
            [
                metric("prompt_cache.speedup_x", Unit.RATIO, 3.1, 3.3),
                metric("prompt_cache.ttft_warm_s", Unit.SECONDS, 0.02),
                metric("prompt_cache.ttft_cold_s", Unit.SECONDS, 0.066),
            ],
            "cache speedup",
            ["3.20x", "20.0", "ms", "66.0", "ms"],
        ),
        (
            "toolcalls_corpus",
            [metric("toolcalls_corpus.accuracy", Unit.RATIO, 0.875)],
            "accuracy",
            ["87.5%"],
        ),
        (
            "throughput",
            [metric("throughput.prefill_tps", Unit.TOKENS_PER_SECOND, 24640.0)],
            "prefill tok/s",
            ["24.6k"],
        ),
        (  # a scenario without declared headlines shows its first metrics
            "my_plugin",
            [metric("my_plugin.widgets", Unit.COUNT, 7), metric("memory.x", Unit.BYTES, 1)],
            "widgets",
            ["7"],
        ),
    ],
)
def test_headline_figures_per_scenario(
    scenario: str, metrics: list, header: str, shown: list[str]
) -> None:
    run = make_run([case("m", scenario, Status.PASSED, metrics=metrics)])
    table = _table(terminal_summary(run), scenario)
    assert header in table[0]
    assert table[2].split()[2:] == shown


def test_every_declared_headline_names_a_metric_of_its_scenario() -> None:
    for scenario, headlines in HEADLINES.items():
        names = {spec.name for spec in SCENARIOS.get(scenario).metrics}
        for headline in headlines:
            assert f"{scenario}.{headline.metric}" in names, (scenario, headline.metric)


def test_terminal_summary_is_plain_and_fixed_width() -> None:
    run = make_run(
        [
            case(
                "\x1b[31mevil\nmodel-with-a-really-really-long-name-that-goes-on",
                "throughput",
                Status.PASSED,
                point={"prompt_tokens": 8},
                metrics=[metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 12.34, 12.36)],
            ),
            case("[bold red]x[/]", "throughput", Status.PASSED),
        ],
        finished=False,
    )
    lines = terminal_summary(run)
    assert all("\x1b" not in line and "\n" not in line for line in lines)
    assert "12.3" in lines[4]
    assert "…" in lines[4]  # long names are cut to the column width
    assert lines[5].split()[0] == "[bold"  # markup-like names are shown as they are
    assert lines[-1].endswith("(INCOMPLETE RUN: no finish record)")


def test_terminal_summary_of_an_empty_run() -> None:
    lines = terminal_summary(make_run([]))
    assert lines[-1] == "0 cases: none"


@pytest.mark.parametrize("status", list(Status))
def test_a_status_is_never_cut(status: Status) -> None:
    lines = terminal_summary(make_run([case("m", "load", status), case("n", "load")]))
    (row,) = [line for line in _table(lines, "load") if line.startswith("  m ")]
    assert f" {status.value}" in row and "…" not in row
