"""The cancellation section from a case's typed artifacts (CancellationArtifacts) and its
checks: each cancel's row, the note, and a damaged field of a trial read as missing."""

from __future__ import annotations

import dataclasses

from report_fixtures import case, make_run

from harness.core.check_types import CheckStatus, CheckVerdict
from harness.core.types import Status
from harness.report import cancellation

TRIALS = [
    {
        "received_tokens": 8,
        "remaining_s": 2.5,
        "stop_s": 0.12,
        "watched_s": 5.0,
        "decoded_after": 3,
        "after_same": True,
    },
    {
        "received_tokens": 8,
        "remaining_s": 2.5,
        "stop_s": None,
        "watched_s": 5.0,
        "tokens_after_est": 40.0,
        "after_same": False,
        "after_differs": "token 3: 'a' != 'b'",
    },
    {"received_tokens": "eight", "after_same": True},  # damaged: its count reads as missing
]


def test_each_cancel_is_a_row_and_each_check_its_verdict() -> None:
    result = dataclasses.replace(
        case("zoo-llama", "cancellation", Status.FAILED, reason="stops: one cancel ran on"),
        artifacts={
            "engine": "mlx_lm.server",
            "route": "counters",
            "known_load": {"tokens": 64, "seconds": 1.0, "tokens_per_s": 64.0},
            "max_stop_s": 1.0,
            "trials": TRIALS,
        },
        checks=(
            CheckVerdict("stops", CheckStatus.FAIL, "one cancel ran on"),
            CheckVerdict("next_answer", CheckStatus.PASS, ""),
        ),
    )
    built = cancellation.build(make_run([result]))
    assert built is not None
    (shown,) = built.cases
    assert shown.note.startswith("engine mlx_lm.server; seen by counters; known load: 64")
    rows = [[c.text for c in row] for row in shown.trials.rows]
    assert rows[0] == ["1", "8", "2.500", "0.120", "3", "unchanged"]
    assert rows[1][3:] == ["not within 5.0", "≈40", "token 3: 'a' != 'b'"]
    assert rows[2][:2] == ["3", "—"] and rows[2][-1] == "unchanged"  # never a guess
    checks = [[c.text for c in row] for row in shown.checks.rows]
    assert checks == [["stops", "fail", "one cancel ran on"], ["next_answer", "pass", ""]]
    assert [r[0].text for r in built.not_passed.rows] == ["zoo-llama"]


def test_a_case_without_trials_has_no_table() -> None:
    result = dataclasses.replace(case("m", "cancellation"), artifacts={"engine": "x"})
    built = cancellation.build(make_run([result]))
    assert built is not None and built.cases == ()
