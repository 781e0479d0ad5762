"""A family matrix's worker: each event of a trial as one flushed JSON line, "done" after each
family."""

from __future__ import annotations

import io
import json
import os
import subprocess
from pathlib import Path

from harness.families.row import ArchRow, Cell, OnEvent, Outcome
from harness.families.worker import KINDS, cli, command, event_line, main, run


def _trial(name: str, *, on_event: OnEvent | None = None) -> ArchRow:
    assert on_event is not None
    on_event("generated", None)
    on_event("generated", Cell(Outcome.OK, f"{name} made"))
    return ArchRow(name, Cell(Outcome.OK, f"{name} made"))


def test_event_line_with_and_without_a_cell() -> None:
    assert json.loads(event_line("a", "load", None)) == {"arch": "a", "column": "load"}
    ended = json.loads(event_line("a", "load", Cell(Outcome.FAILED, "x")))
    assert ended == {"arch": "a", "column": "load", "outcome": "failed", "detail": "x"}
    assert event_line("a", "load", None).endswith("\n")


def test_run_writes_every_event_then_done() -> None:
    out = io.StringIO()
    run(["a", "b"], out, _trial)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [(e["arch"], e["column"], e.get("outcome")) for e in events] == [
        ("a", "generated", None),
        ("a", "generated", "ok"),
        ("a", "done", None),
        ("b", "generated", None),
        ("b", "generated", "ok"),
        ("b", "done", None),
    ]


def test_main_appends_to_its_out_file(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    out.write_text('{"arch": "earlier", "column": "done"}\n')
    assert main([str(out), "a"], _trial) == 0
    assert [json.loads(line)["arch"] for line in out.read_text().splitlines()] == [
        "earlier",
        "a",
        "a",
        "a",
    ]


def test_each_matrix_runs_the_one_worker_told_its_kind() -> None:
    from harness.families import audio_matrix, text_matrix, vision_matrix

    specs = {"text": text_matrix.SPEC, "vision": vision_matrix.SPEC, "audio": audio_matrix.SPEC}
    assert set(specs) == set(KINDS)
    for kind, spec in specs.items():
        assert spec.worker == command(kind)


def test_the_worker_process_starts_for_its_kind(tmp_path: Path) -> None:
    out = tmp_path / "events.jsonl"
    assert cli(["text", str(out)]) == 0 and out.read_text() == ""  # no names: nothing tried
    done = subprocess.run(
        [*command("text"), str(out)],
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
