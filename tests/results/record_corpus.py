"""Run records for the reader tests: a real small one, hostile ones, and generated corpora.

``real_record`` runs a tiny suite through the CLI (fake backend, under a second), so the corpus
follows whatever the writer writes today. The hostile table pairs bytes with the fragment the
one-line error must contain; the generators derive thousands of records from the real one.
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness.backends.fake import write_fake_model

SUITE = """\
schema_version: 1
name: tiny
defaults: {{repeats: 2, warmup: 1}}
models:
  - {{name: m, path: {model}, backend: fake, tags: [tiny]}}
scenarios:
  - scenario: load
  - scenario: throughput
    params: {{gen_tokens: 4}}
    sweep: {{prompt_tokens: [8]}}
expect:
  - {{model: m, scenario: load, status: skip, reason: "known \u2014 broken \u2713"}}
gates:
  throughput.decode_tps: ">= 1"
"""


def real_record(folder: Path) -> Path:
    """Run a two-case suite with the fake backend; return its ``run.jsonl``."""
    from harness.cli import main

    model = write_fake_model(folder / "model")
    suite = folder / "tiny.suite.yaml"
    suite.write_text(SUITE.format(model=model), encoding="utf-8")
    reports = folder / "reports"
    code = main(["run", str(suite), "--report-dir", str(reports), "--run-id", "real"])
    assert code == 0, f"the tiny suite should pass (exit {code})"
    return reports / "real" / "run.jsonl"


def events(record: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in record.read_text(encoding="utf-8").splitlines()]


def jsonl(items: list[Any], *, ascii_only: bool = True) -> bytes:
    text = "".join(json.dumps(e, ensure_ascii=ascii_only) + "\n" for e in items)
    return text.encode("utf-8")


START: dict[str, Any] = {
    "event": "run_start",
    "schema_version": 1,
    "run_id": "r",
    "started_at": "2026-01-01T00:00:00+00:00",
    "machine": {
        "os": "Linux",
        "os_release": "6",
        "arch": "x86_64",
        "cpu": "c",
        "cores": 2,
        "memory_bytes": 1 << 34,
        "python": "3.11",
    },
    "packages": {"mlx": "0.32.4"},
    "git_sha": None,
    "suites": [],
}
CASE: dict[str, Any] = {
    "event": "case",
    "result": {
        "case_id": "s::m::load",
        "suite": "s",
        "model": "m",
        "scenario": "load",
        "status": "passed",
    },
}
END: dict[str, Any] = {"event": "run_end", "finished_at": "2026-01-01T00:01:00+00:00"}


def changed(event: dict[str, Any], path: tuple[str | int, ...], value: Any) -> dict[str, Any]:
    """A deep copy of ``event`` with ``path`` set to ``value`` (``KeyError``: removed)."""
    copy = json.loads(json.dumps(event))
    node = copy
    for key in path[:-1]:
        node = node[key]
    if value is KeyError:
        del node[path[-1]]
    else:
        node[path[-1]] = value
    return copy


def line(event: Any) -> bytes:
    return (json.dumps(event) + "\n").encode()


# (id, bytes, fragment of the one-line error)
HOSTILE: list[tuple[str, bytes, str]] = [
    ("binary", bytes(range(255, -1, -1)) * 4, ":1: not UTF-8 text (byte 0xff at column 1)"),
    ("control bytes", bytes(range(256)) * 4, ":1: not a JSON line"),
    ("utf-16", line(START).decode().encode("utf-16"), ":1: not UTF-8 text (byte 0xff"),
    ("latin-1 in a later line", line(START) + b'{"event": "case", "x": "\xe9"}\n', ":2: not UTF-8"),
    ("empty", b"", "not a run record (it is empty)"),
    ("blank lines", b"\n  \n\t\n", "not a run record (it is empty)"),
    ("only line cut", line(START)[:50], "not a run record (its only line is cut off)"),
    ("a list first", b"[1, 2, 3]\n", ":1: not an event (a JSON array"),
    ("null first", b"null\n", ":1: not an event (a JSON null"),
    ("a case first", line(CASE), ":1: not a run record (first line is not a run_start"),
    ("newer schema", line({**START, "schema_version": 99}), "schema_version 99 is newer"),
    ("schema as text", line({**START, "schema_version": "1"}), ":1: run_start has no valid"),
    ("schema as bool", line({**START, "schema_version": True}), ":1: run_start has no valid"),
    ("number for mapping", line({**START, "machine": 5}), ":1: run_start event.machine:"),
    ("list for mapping", line({**START, "packages": [1]}), "run_start event.packages:"),
    ("missing key", line(changed(START, ("machine", "cores"), KeyError)), "machine.cores: Field"),
    ("run id a number", line({**START, "run_id": 7}), "run_start event.run_id:"),
    ("bool for int", line(changed(START, ("machine", "cores"), True)), "machine.cores:"),
    (
        "unknown status",
        line(START) + line(changed(CASE, ("result", "status"), "exploded")),
        ":2: case event.result.status: Input should be 'passed'",
    ),
    (
        "missing case id",
        line(START) + line(changed(CASE, ("result", "case_id"), KeyError)),
        ":2: case event.result.case_id: Field required",
    ),
    (
        "NaN string sample",
        line(START)
        + line(
            changed(CASE, ("result", "metrics"), [{"name": "x", "unit": "s", "samples": ["NaN"]}])
        ),
        "result.metrics[0].samples[0]: Input should be a valid number",
    ),
    (
        "unknown unit",
        line(START)
        + line(
            changed(CASE, ("result", "metrics"), [{"name": "x", "unit": "parsec", "samples": []}])
        ),
        "result.metrics[0].unit:",
    ),
    (
        "string for list",
        line(START) + line(changed(CASE, ("result", "metrics"), "abc")),
        "result.metrics: Input should be a valid array",
    ),
    (
        "NaN literal",
        line(START) + line(CASE).replace(b'"passed"', b'"passed", "duration_s": NaN'),
        ":2: not a JSON line (NaN is not a number JSON allows)",
    ),
    (
        "Infinity literal",
        line(START) + line(CASE).replace(b'"passed"', b'"passed", "duration_s": -Infinity'),
        ":2: not a JSON line (-Infinity",
    ),
    (
        "huge float",
        line(START) + line(CASE).replace(b'"passed"', b'"passed", "duration_s": 1e999'),
        ":2: not a JSON line (number 1e999 is out of range)",
    ),
    ("huge int", line(changed(START, ("machine", "memory_bytes"), 10**40)), "out of range"),
    ("int of 5000 digits", line(START)[:-2] + b', "x": ' + b"9" * 5000 + b"}\n", "out of range"),
    (
        "nested 100000 deep",
        line(START) + b'{"event": "case", "result": ' + b"[" * 100_000 + b"]" * 100_000 + b"}\n",
        ":2: not a JSON line (nested too deeply)",
    ),
    (
        "nested 500 deep in params",
        line(START)
        + line(changed(CASE, ("result", "params"), {"x": 0})).replace(
            b'{"x": 0}', b'{"x": ' + b"[" * 500 + b"]" * 500 + b"}"
        ),
        ":2: case event: Invalid JSON: recursion limit",
    ),
    (
        "lone surrogate",
        line(START) + line(CASE).replace(b'"s::m::load"', b'"\\ud800"'),
        ":2: case event: Invalid JSON",
    ),
    ("garbage in the middle", line(START) + b"not json\n" + line(CASE), ":2: not a JSON line"),
    ("event without a name", line(START) + b'{"x": 1}\n', ":2: not an event (no 'event' name)"),
    ("event name a number", line(START) + b'{"event": 5}\n', ":2: not an event"),
    ("probe a list", line(START) + line({"event": "probe", "model": "m", "probe": [1]}), "probe"),
    (
        "interrupted without reason",
        line(START) + line({"event": "run_interrupted", "at": "t"}),
        ":2: run_interrupted event.reason: Field required",
    ),
    (
        "cut line in the middle",
        line(START) + line(CASE)[:30] + b"\n" + line(CASE),
        ":2: not a JSON line",
    ),
]


def random_blobs(count: int, seed: int = 11) -> Iterator[bytes]:
    """Random bytes; half of them after a valid first line, some with many newlines."""
    rng = random.Random(seed)
    for i in range(count):
        size = rng.choice((1, 7, 64, 512, 4096))
        blob = rng.randbytes(size)
        if i % 3 == 0:
            blob = blob.replace(b"\x00", b"\n")
        yield (line(START) + blob) if i % 2 else blob


MUTANT_VALUES: tuple[Any, ...] = (
    None,
    0,
    -1,
    1e100,
    -1e100,
    2**63 - 1,
    "",
    "NaN",
    "<script>",
    [],
    {},
    True,
    [[1]],
    {"a": {"b": None}},
)


def _paths(value: Any, prefix: tuple[str | int, ...] = ()) -> Iterator[tuple[str | int, ...]]:
    if prefix:
        yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*prefix, index))


def type_mutants(items: list[dict[str, Any]]) -> Iterator[tuple[str, bytes]]:
    """Every value of every event replaced by each of :data:`MUTANT_VALUES` (and removed)."""
    for index, event in enumerate(items):
        for path in _paths(event):
            if path == ("event",):
                continue
            for value in (*MUTANT_VALUES, KeyError):
                mutated = [*items[:index], changed(event, path, value), *items[index + 1 :]]
                label = f"line {index + 1} {'.'.join(map(str, path))} = {value!r}"
                yield label, jsonl(mutated)
