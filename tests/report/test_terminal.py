"""The plain-text summary printed at the end of a pytest run."""

from __future__ import annotations

from report_fixtures import case, make_run, metric, realistic_run

from harness.report import terminal_summary
from harness.types import Status, Unit


def test_terminal_summary_columns_and_counts() -> None:
    lines = terminal_summary(realistic_run())
    assert lines[0] == "mlx-harness run 20250101T120000-abc123"
    assert lines[1].split() == [
        "model",
        "scenario",
        "point",
        "status",
        "decode",
        "tok/s",
        "prefill",
        "tok/s",
        "TTFT",
    ]
    assert set(lines[2]) == {"-"}
    assert len(lines) == 2 + 1 + 24 + 1
    assert lines[-1] == (
        "24 cases: 15 passed, 2 skipped, 1 xfailed, 1 xpassed, 2 failed, 1 errored, "
        "1 timed_out, 1 crashed"
    )
    row = next(line for line in lines if "pp128 tg128" in line and "qwen" in line)
    assert row.split()[-4:] == ["96.7", "834.9", "155", "ms"]


def test_terminal_columns_line_up() -> None:
    lines = terminal_summary(realistic_run())
    table = lines[1:-1]
    status_at = lines[1].index("status")
    for line in table[2:]:
        assert line[status_at - 2 : status_at] == "  "  # every row has the gap before status


def test_terminal_summary_is_plain_and_fixed_width() -> None:
    run = make_run(
        [
            case(
                "\x1b[31mevil\nmodel-with-a-really-really-long-name-that-goes-on",
                "throughput",
                Status.PASSED,
                point={"prompt_tokens": 8},
                metrics=[metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 12.34, 12.36)],
            )
        ],
        finished=False,
    )
    lines = terminal_summary(run)
    assert all("\x1b" not in line and "\n" not in line for line in lines)
    assert "12.3" in lines[3]
    assert "…" in lines[3]  # long names are cut to the column width
    assert lines[-1].endswith("(INCOMPLETE RUN: no finish record)")


def test_terminal_summary_of_an_empty_run() -> None:
    lines = terminal_summary(make_run([]))
    assert lines[-1] == "0 cases: none"
