"""The supervisor's reading of a worker: progress lines go to the callback, never for the reply;
a malformed one is dropped, a line that is not JSON still stops the worker."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.runner.blas import worker_env
from harness.runner.client import Answer, OnProgress, WorkerClient, WorkerProtocolError
from harness.runner.messages import LoadedReply, LoadRequest
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
) -> Answer:
    """A load request with ``planted`` lines arriving before the worker's own reply."""
    client._buffer = b"".join(json.dumps(line).encode() + b"\n" for line in planted)
    model = write_fake_model(tmp_path / "m")
    return client.request(LoadRequest("fake", str(model)), 30.0, on_progress)


def test_progress_lines_go_to_the_callback_and_garbage_is_dropped(
    client: WorkerClient, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    seen: list[RepeatProgress] = []
    with caplog.at_level(logging.DEBUG, logger="harness.runner.client"):
        reply = _load(client, tmp_path, [*GARBAGE, VALID.to_wire()], on_progress=seen.append)
    assert isinstance(reply, LoadedReply)  # never a progress line, valid or not
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
    assert isinstance(_load(client, tmp_path, [VALID.to_wire()], callback), LoadedReply)


def test_a_line_that_is_not_json_still_stops_the_worker(
    client: WorkerClient, tmp_path: Path
) -> None:
    client._buffer = json.dumps(VALID.to_wire()).encode() + b"\nnot json\n"
    with pytest.raises(WorkerProtocolError, match="not JSON"):
        client.request(LoadRequest("fake", str(tmp_path)), 30.0)
    assert client.proc.poll() is not None


@pytest.mark.parametrize(
    ("planted", "words"),
    [
        ({"op": "result", "metrics": [7]}, "'result' message: metrics[0] is not an object: 7"),
        ({"op": "loaded", "blas": None, "pid": 1}, "'loaded' message has no 'info'"),
        ({"op": "hello"}, "unknown reply 'op' 'hello'"),
        ([1, 2], "a reply is a JSON object, not list"),
    ],
    ids=["bad-metric", "no-info", "unknown-op", "not-an-object"],
)
def test_a_reply_of_the_wrong_shape_stops_the_worker_with_one_line(
    client: WorkerClient, tmp_path: Path, planted: object, words: str
) -> None:
    client._buffer = json.dumps(planted).encode() + b"\n"
    with pytest.raises(WorkerProtocolError) as raised:
        client.request(LoadRequest("fake", str(tmp_path)), 30.0)
    line = str(raised.value)
    assert line.startswith("worker sent a malformed reply: ") and words in line, line
    assert "\n" not in line
    assert client.proc.poll() is not None
