"""The progress of a case's runs: numbered by the counter, one JSON line each, read back
strictly (anything else is refused)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.runner.repeat_progress import RepeatCounter, RepeatProgress, batch_tokens

P = RepeatProgress


def _follow(of: int, auto: bool, script: list[tuple[Any, ...]]) -> list[RepeatProgress]:
    """Drive a counter: ("begin", warmup, repeats), ("run", tokens), ("end", repeats, artifacts)."""
    seen: list[RepeatProgress] = []
    counter = RepeatCounter(seen.append, of, auto=auto)
    for step, *args in script:
        getattr(counter, {"begin": "begin", "run": "run_done", "end": "end"}[step])(*args)
    return seen


@pytest.mark.parametrize(
    ("of", "auto", "script", "expected"),
    [
        pytest.param(
            3,
            False,
            [("begin", 1, 3), *[("run", 8)] * 4, ("end", 3, {"generated_tokens": [8] * 3})],
            [P(1, 1, True, False, 8), P(1, 3, tokens=8), P(2, 3, tokens=8), P(3, 3, tokens=8)],
            id="fixed_reported_by_the_scenario",
        ),
        pytest.param(
            3,
            False,
            [("begin", 0, 3), ("end", 3, {"generated_tokens": [8, 8, 7]})],
            [P(3, 3, tokens=23)],
            id="scenario_silent_one_per_batch",
        ),
        pytest.param(
            3,
            False,
            [("begin", 2, 3), ("end", 3, {"prompt_tokens": 9})],
            [P(3, 3)],
            id="silent_without_token_counts",
        ),
        pytest.param(
            20,
            True,
            [
                ("begin", 1, 2),
                ("run", None),
                ("run", 4),
                ("run", 4),
                ("end", 2, {}),
                ("begin", 0, 1),
                ("run", 5),
                ("end", 1, {}),
            ],
            [
                P(1, 1, True, True),
                P(1, 20, False, True, 4),
                P(2, 20, False, True, 4),
                P(3, 20, False, True, 5),
            ],
            id="auto_counts_on_over_batches",
        ),
        pytest.param(
            20,
            True,
            [("begin", 0, 2), ("end", 2, {}), ("begin", 0, 1), ("end", 1, {})],
            [P(2, 20, auto=True), P(3, 20, auto=True)],
            id="auto_silent_scenario",
        ),
        pytest.param(
            2, False, [("begin", 0, 2), ("run", -3)], [P(1, 2)], id="negative_tokens_unknown"
        ),
    ],
)
def test_counter_numbers_the_runs(
    of: int, auto: bool, script: list[tuple[Any, ...]], expected: list[RepeatProgress]
) -> None:
    assert _follow(of, auto, script) == expected


def test_a_message_is_one_json_line_that_reads_back() -> None:
    message = P(2, 5, False, True, 64)
    line = json.dumps(message.to_wire())
    assert "\n" not in line and json.loads(line)["op"] == "progress"
    assert RepeatProgress.from_wire(json.loads(line)) == message


@pytest.mark.parametrize(
    "raw",
    [
        {"op": "progress"},
        {"op": "progress", "repeat": "3", "of": 5},
        {"op": "progress", "repeat": 0, "of": 5},
        {"op": "progress", "repeat": 1, "of": True},
        {"op": "progress", "repeat": 1.5, "of": 5},
        {"op": "progress", "repeat": 1, "of": 5, "tokens": -1},
        {"op": "progress", "repeat": 1, "of": 5, "tokens": "many"},
        {"op": "progress", "repeat": 1, "of": 5, "warmup": "yes"},
        {"op": "progress", "repeat": 1, "of": 5, "auto": 1},
    ],
)
def test_a_malformed_message_is_refused(raw: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="progress"):
        RepeatProgress.from_wire(raw)


@pytest.mark.parametrize(
    ("artifacts", "tokens"),
    [
        ({"generated_tokens": [8, 8]}, 16),
        ({"generated_tokens": [0]}, 0),
        ({"generated_tokens": []}, None),
        ({"generated_tokens": [8, "x"]}, None),
        ({"generated_tokens": 8}, None),
        ({}, None),
    ],
)
def test_batch_tokens(artifacts: dict[str, Any], tokens: int | None) -> None:
    assert batch_tokens(artifacts) == tokens
