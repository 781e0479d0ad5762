"""``toolcalls score --outputs``: outputs made elsewhere, scored per category, through main()."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.toolcalls.bfcl_import import import_bfcl, write

BFCL = Path(__file__).parent / "data" / "bfcl"
STEMS = ["simple_python", "parallel", "parallel_multiple", "irrelevance"]
TRIANGLE = {"name": "calculate_triangle_area", "arguments": {"base": 10, "height": 5}}
SPOTIFY = [
    {"name": "spotify.play", "arguments": {"artist": "Maroon 5", "duration": 15}},
    {"name": "spotify.play", "arguments": {"artist": "Taylor Swift", "duration": 20}},
]


@pytest.fixture(scope="module")
def bfcl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bfcl")
    write(import_bfcl(BFCL, STEMS), out)
    return out


def lines(tmp_path: Path, *rows: Any) -> Path:
    path = tmp_path / "outputs.jsonl"
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def raw(calls: list[dict[str, Any]]) -> str:
    return "".join(f"<tool_call>\n{json.dumps(c)}\n</tool_call>" for c in calls)


def test_bfcl_outputs_per_category(
    bfcl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = lines(
        tmp_path,
        {"id": "simple/simple_python_0", "calls": [TRIANGLE]},
        {
            "id": "simple/simple_python_1",
            "calls": [{"name": "math.factorial", "arguments": {"number": 5.0}}],
        },
        {"id": "parallel/parallel_0", "text": raw(SPOTIFY), "parser": "json_tools"},
        {
            "id": "irrelevance/irrelevance_0",
            "text": '<tool_call>\n{"name": "x", "argu',
            "parser": "json_tools",
        },
        {"id": "irrelevance/irrelevance_1", "calls": []},
    )
    record = tmp_path / "score.json"
    args = ["toolcalls", "score", "--outputs", str(outputs), str(bfcl), "--record", str(record)]
    assert main([*args, "--string-match", "bfcl"]) == 0
    printed = capsys.readouterr().out
    assert printed.splitlines()[0] == "string_match: bfcl"
    got = json.loads(record.read_text())
    assert got["string_match"] == "bfcl"
    assert got["categories"] == {
        "simple": {"prompts": 2, "ok": 1, "accuracy": 0.5, "failures": {"wrong_type": 1}},
        "parallel": {"prompts": 1, "ok": 1, "accuracy": 1.0, "failures": {}},
        "irrelevance": {"prompts": 2, "ok": 1, "accuracy": 0.5, "failures": {"parse_error": 1}},
    }
    assert got["overall"]["ok"] == 3 and got["overall"]["prompts"] == 5
    assert got["unanswered"] == 4  # simple_python_89, parallel_29, parallel_multiple_0, _65
    assert "4 prompts had no output line" in printed


@pytest.mark.parametrize(("mode", "ok"), [("strict", 0), ("bfcl", 1)])
def test_string_mode_is_named_and_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mode: str, ok: int
) -> None:
    # shipped set: simple/weather-paris accepts "Paris" / "Paris, France"
    call = {"name": "get_weather", "arguments": {"city": "Paris France"}}
    outputs = lines(tmp_path, {"id": "simple/weather-paris", "calls": [call]})
    assert (
        main(["toolcalls", "score", "--outputs", str(outputs), "--json", "--string-match", mode])
        == 0
    )
    got = json.loads(capsys.readouterr().out)
    assert got["string_match"] == mode
    assert got["categories"]["simple"]["ok"] == ok


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ("{not json", "outputs.jsonl:2: invalid JSON"),
        (
            {"id": "simple/nope", "calls": []},
            "outputs.jsonl:2: unknown id 'simple/nope'; use the data's ids",
        ),
        (
            {"id": "simple/simple_python_1", "text": "x", "parser": "nope"},
            "outputs.jsonl:2: unknown parser 'nope'; use one of: json_tools",
        ),
        ({"id": "simple/simple_python_1", "text": "x"}, "outputs.jsonl:2: 'text' needs a parser"),
        ({"id": "simple/simple_python_1"}, "outputs.jsonl:2: give either 'calls'"),
        ({"id": "simple/simple_python_1", "call": []}, "outputs.jsonl:2: call: Extra inputs"),
        (
            {"id": "simple/simple_python_0", "calls": []},
            "outputs.jsonl:2: id 'simple/simple_python_0' again (first on line 1)",
        ),
    ],
)
def test_bad_lines_are_one_line_errors(
    bfcl: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], row: Any, message: str
) -> None:
    outputs = lines(tmp_path, {"id": "simple/simple_python_0", "calls": [TRIANGLE]}, row)
    assert main(["toolcalls", "score", "--outputs", str(outputs), str(bfcl)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert message in err


def test_missing_outputs_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["toolcalls", "score", "--outputs", str(tmp_path / "none.jsonl")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot read" in err


def test_score_needs_corpus_or_outputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["toolcalls", "score"]) == 2
    assert "--outputs" in capsys.readouterr().err


def test_bfcl_names_the_pinned_data(
    bfcl: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """DATA `bfcl:<stems>` is the imported pinned data (here the excerpt's import stands in for
    the cache folder); a stem that does not exist is one line and exit 2."""
    from harness.toolcalls import bfcl_data

    monkeypatch.setattr(bfcl_data, "ensure_imported", lambda: bfcl)
    outputs = lines(tmp_path, {"id": "simple/simple_python_0", "calls": [TRIANGLE]})
    assert (
        main(["toolcalls", "score", "--outputs", str(outputs), "bfcl:simple_python", "--json"]) == 0
    )
    got = json.loads(capsys.readouterr().out)
    assert got["overall"]["ok"] == 1 and got["unanswered"] == 2  # simple_python_1 and _89
    assert main(["toolcalls", "score", "--outputs", str(outputs), "bfcl:simple"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown BFCL category 'simple'" in err
