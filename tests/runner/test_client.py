"""The supervisor's reading of a worker: progress lines go to the callback, never for the reply;
a malformed one is dropped, a line that is not JSON still stops the worker."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.backends.fake import write_fake_model
from harness.runner.blas import worker_env
from harness.runner.client import OnProgress, WorkerClient, WorkerProtocolError
from harness.runner.repeat_progress import RepeatProgress

VALID = RepeatProgress(2, 5, tokens=32)
GARBAGE = [
    {"op": "progress"},
    {"op": "progress", "repeat": "two", "of": 5},
    {"op": "progress", "repeat": 2, "of": 5, "tokens": -4},
    {"op": "progress", "repeat": 2, "of": 5, "warmup": "no"},
]


@pytest.fixture
def client(tmp_path: Path) -> Iterator[WorkerClient]:
    worker = WorkerClient(worker_env(os.environ, offline=True), tmp_path / "worker.log")
    yield worker
    worker.close()


def _load(
    client: WorkerClient, tmp_path: Path, planted: list[object], on_progress: OnProgress | None
) -> dict[str, Any]:
    """A load request with ``planted`` lines arriving before the worker's own reply."""
    client._buffer = b"".join(json.dumps(line).encode() + b"\n" for line in planted)
    model = write_fake_model(tmp_path / "m")
    return client.request({"op": "load", "backend": "fake", "path": str(model)}, 30.0, on_progress)


def test_progress_lines_go_to_the_callback_and_garbage_is_dropped(
    client: WorkerClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[RepeatProgress] = []
    with caplog.at_level(logging.DEBUG, logger="harness.runner.client"):
        reply = _load(client, tmp_path, [*GARBAGE, VALID.to_json()], on_progress=seen.append)
    assert reply["op"] == "loaded"  # never a progress line, valid or not
    assert seen == [VALID]
    dropped = [r for r in caplog.records if "progress line dropped" in r.getMessage()]
    assert len(dropped) == len(GARBAGE)


@pytest.mark.parametrize("on_progress", [None, "raises"])
def test_a_missing_or_failing_display_costs_nothing(
    client: WorkerClient, tmp_path: Path, on_progress: str | None
) -> None:
    def broken(progress: RepeatProgress) -> None:
        raise RuntimeError("display bug")

    callback = broken if on_progress else None
    assert _load(client, tmp_path, [VALID.to_json()], callback)["op"] == "loaded"


def test_a_line_that_is_not_json_still_stops_the_worker(
    client: WorkerClient, tmp_path: Path
) -> None:
    client._buffer = json.dumps(VALID.to_json()).encode() + b"\nnot json\n"
    with pytest.raises(WorkerProtocolError, match="not JSON"):
        client.request({"op": "load", "backend": "fake", "path": str(tmp_path)}, 30.0)
    assert client.proc.poll() is not None
