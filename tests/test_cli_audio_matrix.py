"""``mlx-harness models audio-matrix``: names checked before anything runs; the summary and
JSON of a matrix read from the cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import audio_matrix, main
from harness.families.audio_matrix import AudioMatrix
from harness.families.row import ArchRow, Cell, Outcome

MATRIX = AudioMatrix(
    {"mlx-audio": "0.6.2", "mlx": "0.32.4"},
    (
        ArchRow(
            "tts/soprano",
            Cell(Outcome.OK, "hand-made"),
            {"load": Cell(Outcome.OK, "ok"), "run": Cell(Outcome.OK, "3.39 s of audio")},
        ),
        ArchRow("tts/kokoro", Cell(Outcome.NOT_GENERATED, "TypeError: \x1b[31mplbert\x1b[0m")),
    ),
    37.0,
    cached=True,
)


def test_unknown_family_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("mlx_audio", reason="mlx-audio is the optional 'audio' extra")
    assert main(["models", "audio-matrix", "--only", "tts/no_such"]) != 0
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert "not a tts/stt family of the installed mlx-audio: tts/no_such" in err


def test_cached_matrix_summary_and_json(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(audio_matrix, "matrix", lambda **kw: MATRIX)
    assert main(["models", "audio-matrix"]) == 0
    out = capsys.readouterr().out
    assert "tts/soprano" in out and "generated=ok  load=ok  run=ok" in out
    assert "2 audio families (mlx-audio 0.6.2, mlx 0.32.4; cached" in out
    assert "not generated: TypeError:" in out and "\x1b" not in out  # escaped for the terminal
    assert main(["models", "audio-matrix", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["name"] for f in data["families"]] == ["tts/soprano", "tts/kokoro"]
    assert data["families"][1]["run"]["outcome"] == "not generated"
