"""``mlx-harness probe``: table, JSON, one-line errors and exit status."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from harness.cli import main
from harness.cli.probe import human


def _run(argv: list[str]) -> int:
    return main(argv)


def test_table(row_paths: Mapping[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = _run(["probe", str(row_paths["zoo/qwen3"]), str(row_paths["zoo/qwen2_vl"])])
    out = capsys.readouterr().out.splitlines()
    assert rc == 0
    assert out[0].split() == ["model", "type", "capabilities", "backend", "decision", "parser",
                              "params", "weights", "memory"]  # fmt: skip
    assert "chat,reasoning,text,tools" in out[1] and "json_tools" in out[1]
    assert "allow: ok" in out[1] and "mlx_lm" in out[1]
    assert "mlx_vlm" in out[2] and "vision" in out[2]


def test_json(row_paths: Mapping[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = _run(["probe", "--json", "--context", "512", str(row_paths["zoo/llama"]),
               str(row_paths["corrupt-config"])])  # fmt: skip
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert rc == 1  # the corrupt model is blocked
    llama, corrupt = records
    assert llama["capabilities"] == ["chat", "text", "tools"]
    assert llama["backend"] == "mlx_lm" and llama["tool_parser"] == "json_tools"
    assert llama["decision"]["action"] == "allow" and llama["decision"]["code"] == "ok"
    assert llama["memory"]["context_tokens"] == 512
    assert llama["memory"]["total_bytes"] > llama["memory"]["mlx_peak_bytes"] > 0
    assert corrupt["decision"]["code"] == "corrupt_model"
    assert corrupt["decision"]["http_status"] == 422
    assert "invalid JSON" in corrupt["decision"]["message"]


def test_needs(row_paths: Mapping[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    rc = _run(["probe", "--needs", "vision", str(row_paths["zoo/llama"])])
    out = capsys.readouterr().out
    assert rc == 1 and "block: capability_mismatch" in out
    assert "scenario needs vision" in out
    assert _run(["probe", "--needs", "telepathy", str(row_paths["zoo/llama"])]) == 2
    assert "unknown capability" in capsys.readouterr().err


def test_unreadable_paths_are_one_line_errors(
    tmp_path: Path, row_paths: Mapping[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    (tmp_path / "file.txt").write_text("x")
    rc = _run(["probe", str(tmp_path / "missing"), str(empty), str(tmp_path / "file.txt"),
               str(row_paths["zoo/phi3"])])  # fmt: skip
    captured = capsys.readouterr()
    errors = captured.err.splitlines()
    assert rc == 2
    assert len(errors) == 3 and all(e.startswith("mlx-harness probe: error: ") for e in errors)
    assert "no such file or directory" in errors[0]
    assert "not a model directory" in errors[1] and "not a model directory" in errors[2]
    assert "Traceback" not in captured.err
    assert "phi3" in captured.out  # the good path is still reported


def test_human() -> None:
    assert human(None, "B") == "-"
    assert human(999, "B") == "999B"
    assert human(1_500_000, "B") == "1.5MB"
    assert human(2_000_000_000_000_000, "") == "2000.0T"


HOSTILE_TYPE = "\x1b[2J\x1b]0;pwned\x07\u202eevil\u2066"
ACTING = ("\x1b", "\x07", "\u202e", "\u2066", "\x9b")


def _hostile(root: Path) -> Path:
    """A model whose config and tokenizer config carry terminal escapes and bidi controls;
    its folder's name carries some too."""
    path = root / "m\x1b[31m\u202e"
    path.mkdir()
    (path / "config.json").write_text(
        json.dumps({"model_type": HOSTILE_TYPE, "architectures": ["X\x9b2JForCausalLM"]})
    )
    (path / "tokenizer_config.json").write_text(
        json.dumps({"tool_parser_type": "p\x1b]8;;http://x\x07", "chat_template": "\x1b[5m"})
    )
    return path


def test_human_output_shows_escapes_instead_of_obeying_them(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _hostile(tmp_path)
    rc = _run(["probe", str(path), str(tmp_path / "gone\x1b[2J")])
    captured = capsys.readouterr()
    assert rc == 2  # the missing path
    for text in (captured.out, captured.err):
        assert not [c for c in ACTING if c in text], text
    assert "\\x1b[2J\\x1b]0;pwned\\x07\\u202eevil\\u2066" in captured.out  # model_type cell
    assert "p\\x1b]8;;http://x\\x07" in captured.out  # tool parser cell
    assert "m\\x1b[31m\\u202e" in captured.out  # the path, in the table and the findings
    assert "gone\\x1b[2J: no such file or directory" in captured.err
    assert len(captured.out.splitlines()) >= 3  # header, row, at least one finding line


def test_json_output_escapes_and_keeps_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _hostile(tmp_path)
    _run(["probe", "--json", str(path)])
    out = capsys.readouterr().out
    assert not [c for c in ACTING if c in out]
    record = json.loads(out)
    assert record["model_type"] == HOSTILE_TYPE  # escaped in JSON, intact once parsed
    assert record["architectures"] == ["X\x9b2JForCausalLM"]
