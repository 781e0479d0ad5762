"""The worker's protocol while a case runs: a progress line after each run, then the result."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from harness.backends.fake import write_fake_model
from harness.runner.repeat_progress import RepeatProgress
from harness.runner.worker import Worker


def _serve(tmp_path: Path, run: dict[str, Any]) -> list[dict[str, Any]]:
    """The lines a worker (in this process) writes for a load and one run of ``run``."""
    model = write_fake_model(tmp_path / "m")
    requests = [{"op": "load", "backend": "fake", "path": str(model)}, {"op": "run", **run}]
    out = io.StringIO()
    worker = Worker(out)
    assert worker.serve(io.StringIO("".join(json.dumps(r) + "\n" for r in requests))) == 0
    lines = out.getvalue().splitlines()
    assert all(line.strip() == line and line for line in lines)  # one object per line
    replies = [json.loads(line) for line in lines]
    assert replies[0]["op"] == "loaded"
    return replies[1:]


THROUGHPUT = {"scenario": "throughput", "params": {"prompt_tokens": 4, "gen_tokens": 5}}


@pytest.mark.parametrize(
    ("run", "expected"),
    [
        (
            {**THROUGHPUT, "repeats": 3, "warmup": 1},
            [
                RepeatProgress(1, 1, warmup=True, tokens=5),
                *(RepeatProgress(i, 3, tokens=5) for i in (1, 2, 3)),
            ],
        ),
        (
            {
                **THROUGHPUT,
                "repeats": 2,
                "warmup": 0,
                "auto": {"min_repeats": 2, "max_repeats": 3, "rel_ci": 1e-9, "budget_s": 60.0},
            },
            [RepeatProgress(i, 3, auto=True, tokens=5) for i in (1, 2, 3)],
        ),
        # its samples do not come from repeats: nothing to count
        ({"scenario": "load", "params": {}, "repeats": 3, "warmup": 1}, []),
    ],
    ids=["fixed", "auto", "repeats_do_not_apply"],
)
def test_worker_reports_each_run_before_the_result(
    tmp_path: Path, run: dict[str, Any], expected: list[RepeatProgress]
) -> None:
    replies = _serve(tmp_path, run)
    assert replies[-1]["op"] == "result"
    assert [RepeatProgress.from_json(r) for r in replies[:-1]] == expected
