"""The worker's protocol while a case runs: a progress line after each run, then the result."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from harness.backends.fake import write_fake_model
from harness.runner.blas import worker_env
from harness.runner.messages import (
    ErrorReply,
    LoadedReply,
    LoadRequest,
    Reply,
    ResultReply,
    reply_from_wire,
)
from harness.runner.repeat_progress import RepeatProgress
from harness.runner.worker import Worker


def _serve(tmp_path: Path, *lines: object) -> list[Reply]:
    """The replies a worker (in this process) writes for a load and then ``lines``."""
    model = write_fake_model(tmp_path / "m")
    requests = [LoadRequest("fake", str(model)).to_wire(), *lines]
    out = io.StringIO()
    worker = Worker(out)
    assert worker.serve(io.StringIO("".join(json.dumps(r) + "\n" for r in requests))) == 0
    written = out.getvalue().splitlines()
    assert all(line.strip() == line and line for line in written)  # one object per line
    replies = [reply_from_wire(json.loads(line)) for line in written]
    assert isinstance(replies[0], LoadedReply)
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
    replies = _serve(tmp_path, {"op": "run", **run})
    assert isinstance(replies[-1], ResultReply)
    assert replies[:-1] == expected


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ({"op": "hello"}, "unknown request 'op' 'hello'"),
        ({"op": "run", "scenario": "load", "params": {}, "warmup": 0}, "has no 'repeats'"),
        ({"op": "run", "scenario": "load", "params": [], "repeats": 1, "warmup": 0}, "'params'"),
        ("run", "a request is a JSON object, not str"),
    ],
    ids=["unknown-op", "no-repeats", "params-not-object", "not-an-object"],
)
def test_a_malformed_request_is_answered_with_one_error_line(
    tmp_path: Path, line: object, words: str
) -> None:
    """The worker answers it and serves on: the next request still gets its result."""
    good = {"op": "run", "scenario": "load", "params": {}, "repeats": 1, "warmup": 0}
    error, result = _serve(tmp_path, line, good)
    assert isinstance(error, ErrorReply) and not error.failed
    assert error.error.startswith("not a request: ") and words in error.error, error.error
    assert isinstance(result, ResultReply)


# what a worker of a fake model never needs, so never imports (each costs every worker's start)
NOT_AT_IMPORT = ("importlib.metadata", "pydantic", "traceback")
NOT_FOR_A_FAKE_CASE = ("harness.probe.probe", "harness.backends.bandwidth")
IMPORTS = """
import io, json, sys
from harness.runner.worker import Worker
print(json.dumps([m for m in sys.argv[2:] if m in sys.modules]))
requests = [{"op": "load", "backend": "fake", "path": sys.argv[1]},
            {"op": "run", "scenario": "throughput", "params": {"prompt_tokens": 4, "gen_tokens": 2},
             "repeats": 1, "warmup": 0}]
out = io.StringIO()
Worker(out).serve(io.StringIO("".join(json.dumps(r) + "\\n" for r in requests)))
print(json.dumps([json.loads(line)["op"] for line in out.getvalue().splitlines()]))
print(json.dumps([m for m in sys.argv[2:] if m in sys.modules]))
"""


def test_a_worker_imports_only_what_its_case_needs(tmp_path: Path) -> None:
    """A fresh process: what importing the worker, then loading a fake model and running a
    throughput case on it, left in ``sys.modules``."""
    model = write_fake_model(tmp_path / "m")
    watched = [*NOT_AT_IMPORT, *NOT_FOR_A_FAKE_CASE]
    done = subprocess.run(
        [sys.executable, "-c", IMPORTS, str(model), *watched],
        capture_output=True,
        text=True,
        check=True,
        env=worker_env({k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}),
    )  # (coverage started in the process would import more than the worker does)
    at_import, ops, after_case = (json.loads(line) for line in done.stdout.splitlines())
    assert at_import == []
    assert ops == ["loaded", "progress", "result"]  # the case ran
    assert [m for m in after_case if m in NOT_FOR_A_FAKE_CASE] == []
