"""``toolcalls score``: table, failures, JSON, exit codes; wired through add_parser."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.toolcalls import add_parser, run

OK = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
CALL = [{"name": "get_weather", "arguments": {"city": "Paris"}}]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="mlx-harness")
    add_parser(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def write(tmp_path: Path, *cases: dict[str, object]) -> Path:
    path = tmp_path / "c.jsonl"
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return path


def case(case_id: str, **changes: object) -> dict[str, object]:
    return {"id": case_id, "parser": "json_tools", "text": OK, "expected": CALL, **changes}


def test_add_parser_sets_run_and_defaults(tmp_path: Path) -> None:
    args = parse(["toolcalls", "score", str(tmp_path)])
    assert args.func is run and args.parser == "auto" and args.json is False


def test_passing_corpus_prints_table_and_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, case("a"), case("b", text="no call", expected=[]))
    assert run(parse(["toolcalls", "score", str(path), "--parser", "mlx_lm.json_tools"])) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0].split()
    assert header[:5] == ["parser", "cases", "ok", "accuracy", "known"]
    assert "parse_err" in header and "leaked" in header
    assert "mlx_lm.json_tools" in out and "100.0%" in out


def test_unexpected_failure_exits_1_and_names_case_class_and_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = case("bad", expected=[{"name": "get_weather", "arguments": {"city": "Rome"}}])
    path = write(tmp_path, bad)
    assert run(parse(["toolcalls", "score", str(path), "--parser", "mlx_lm.json_tools"])) == 1
    out = capsys.readouterr().out
    assert "FAIL   mlx_lm.json_tools bad: wrong_value: city: expected 'Rome', got 'Paris'" in out
    assert 'returned: [{"name": "get_weather", "arguments": {"city": "Paris"}}]' in out


def test_known_broken_failure_exits_0(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = case(
        "kb",
        expected=[{"name": "get_weather", "arguments": {"city": "Rome"}}],
        known_broken={"reason": "recorded bug", "link": "https://example.invalid/1"},
    )
    path = write(tmp_path, broken)
    assert run(parse(["toolcalls", "score", str(path), "--parser", "mlx_lm.json_tools"])) == 0
    assert "KNOWN  mlx_lm.json_tools kb: wrong_value" in capsys.readouterr().out


def test_json_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, case("a"), case("other", text="hi", expected=[]))
    args = parse(["toolcalls", "score", str(path), "--json", "-k", "a", "--parser", "json_tools"])
    assert run(args) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["passed"] is True
    assert {row["parser"] for row in report["summary"]} >= {"mlx_lm.json_tools"}
    assert {r["case"] for r in report["results"]} == {"a"}
    assert report["results"][0]["returned"] == CALL
    assert set(report["summary"][0]["failures"]) >= {"not_detected", "leaked_markup", "extra_call"}


def test_invalid_corpus_and_unknown_parser_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "x"}\n')
    assert run(parse(["toolcalls", "score", str(path)])) == 2
    errors = capsys.readouterr().err.strip().splitlines()
    assert errors and all(e.startswith(f"{path}:1: ") for e in errors)
    good = write(tmp_path, case("a"))
    assert main(["toolcalls", "score", str(good), "--parser", "no_such"]) == 2
    assert "unknown or uninstalled parser 'no_such'" in capsys.readouterr().err


def test_known_broken_case_that_passes_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stale = case("stale", known_broken={"reason": "was broken once", "link": "l"})
    path = write(tmp_path, stale)
    assert run(parse(["toolcalls", "score", str(path), "--parser", "mlx_lm.json_tools"])) == 0
    out = capsys.readouterr().out
    assert "FIXED? mlx_lm.json_tools stale: passes; recorded as: was broken once" in out
    assert "1 known broken now passing" in out
