"""The audio family matrix: derivation from mlx-audio's config classes, one family's trial
(generated, load, run), the worker runner with a dying worker, and the per-version cache."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from harness.families.audio import COLUMNS
from harness.families.audio_matrix import (
    AudioMatrix,
    cache_path,
    read,
    rows_from_events,
    run_rows,
    write,
)
from harness.families.row import ArchRow, Cell, Outcome
from harness.models.zoo.derive_audio import shrink

FAKE_WORKER = textwrap.dedent(
    """
    import json, os, signal, sys
    out, *names = sys.argv[1:]
    with open(out, "a") as f:
        def emit(**e):
            f.write(json.dumps(e) + "\\n"); f.flush()
        for name in names:
            for column in ("generated", "load", "run"):
                emit(arch=name, column=column)
                if column == "run" and name == "tts/boom":
                    os.kill(os.getpid(), signal.SIGSEGV)
                emit(arch=name, column=column, outcome="ok", detail=column)
            emit(arch=name, column="done")
    """
)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"hidden_size": 1024, "name": "x"}, {"hidden_size": 64, "name": "x"}),
        ({"num_hidden_layers": None}, {"num_hidden_layers": 2}),
        ({"hidden_size": 0.5}, {"hidden_size": 0.5}),  # not an integer size: left alone
        (
            {"text": {"vocab_size": 50000, "d_model": 768}},
            {"text": {"vocab_size": 512, "d_model": 64}},
        ),
        ({"layers": [1, 2]}, {"layers": [1, 2]}),
    ],
)
def test_shrink_reaches_nested_configs(
    values: dict[str, object], expected: dict[str, object]
) -> None:
    assert shrink(values) == expected


def test_a_dying_worker_costs_one_cell_and_the_run_goes_on(tmp_path: Path) -> None:
    script = tmp_path / "worker.py"
    script.write_text(FAKE_WORKER)
    rows = run_rows(
        ["stt/ok", "tts/boom", "tts/after"], command=(sys.executable, str(script)), timeout_s=30
    )
    assert [r.name for r in rows] == ["stt/ok", "tts/boom", "tts/after"]
    assert {rows[0].cell(c).outcome for c in COLUMNS} == {Outcome.OK}
    assert rows[1].cell("load").outcome is Outcome.OK
    assert rows[1].cell("run") == Cell(Outcome.FAILED, "the process died: SIGSEGV")
    assert rows[2].cell("run").outcome is Outcome.OK


def test_rows_from_events_of_a_family_not_generated() -> None:
    events = [
        {"arch": "tts/a", "column": "generated", "outcome": "not generated", "detail": "why"},
        {"arch": "tts/a", "column": "done"},
    ]
    [row] = rows_from_events(["tts/a"], events, None)
    assert row.generated == Cell(Outcome.NOT_GENERATED, "why")
    assert row.cell("run") == Cell(Outcome.NOT_GENERATED, "why")


def test_cache_round_trip_and_other_versions_miss(tmp_path: Path) -> None:
    versions = {"mlx-audio": "0.6.2", "mlx": "0.32.4"}
    row = ArchRow(
        "tts/soprano",
        Cell(Outcome.OK, "hand-made"),
        {"load": Cell(Outcome.OK, "loaded"), "run": Cell(Outcome.FAILED, "ValueError: x")},
    )
    made = AudioMatrix(versions, (row,), 12.5)
    path = cache_path(versions, tmp_path)
    write(path, made)
    back = read(path)
    assert back is not None and back.cached and back.rows == (row,)
    assert back.counts()["run"][Outcome.FAILED] == 1
    assert cache_path({**versions, "mlx-audio": "0.7.0"}, tmp_path) != path
    path.write_text('{"matrix_version": 0}')
    assert read(path) is None


@pytest.fixture
def offline(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")


@pytest.mark.parametrize(
    ("name", "generated", "load", "run", "detail"),
    [
        ("stt/whisper", Outcome.OK, Outcome.OK, Outcome.OK, "transcribed 1 s of silence"),
        ("stt/wav2vec", Outcome.OK, Outcome.OK, Outcome.FAILED, "has no attribute 'generate'"),
        ("tts/kokoro", Outcome.NOT_GENERATED, None, None, "AlbertModelArgs() argument after **"),
        ("tts/breeze_tts", Outcome.NOT_GENERATED, None, None, "parameters after shrinking"),
    ],
)
def test_families_tried_through_mlx_audio(
    offline: None,
    name: str,
    generated: Outcome,
    load: Outcome | None,
    run: Outcome | None,
    detail: str,
) -> None:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    from harness.families.audio import try_audio_family
    from harness.models.zoo.derive_audio import family_names

    assert name in family_names()
    row = try_audio_family(name)
    assert row.generated.outcome is generated
    if load is not None:
        assert (row.cell("load").outcome, row.cell("run").outcome) == (load, run)
    found = row.cell("run").detail if generated is Outcome.OK else row.generated.detail
    assert detail in found and "\n" not in found
