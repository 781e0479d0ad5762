"""``mlx-harness models list|prepare``: zoo text families say where their config comes from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.models.zoo import derive_text

ORIGINS = {
    "zoo/llama": "derived",
    "zoo/qwen2": "derived",
    "zoo/qwen3": "derived",
    "zoo/gemma3_text": "derived",
    "zoo/mistral": "hand-made",
    "zoo/phi3": "derived",
    "zoo/qwen3_moe": "derived",
    "zoo/lfm2": "derived",
}


@pytest.fixture(autouse=True)
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))


def test_list_shows_each_text_familys_config_origin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["model", "backend", "state", "size", "config", "path"]
    assert set(lines[1]) == {"-"}
    rows = [line.split() for line in lines]
    shown = {row[0]: row[-2] for row in rows if row and row[0].startswith("zoo/")}  # before path
    assert {name: shown[name] for name in ORIGINS} == ORIGINS
    assert shown["zoo/qwen2_vl"] == "prepared"  # no origin column for a vision family
    assert "zoo text configs: derived = generated from mlx-lm " in "\n".join(lines)
    reasons = [line.strip() for line in lines if line.startswith("  zoo/")]
    assert reasons == [
        "zoo/mistral: hand-made: mlx-lm has no mistral module to derive from: it loads "
        "model_type mistral with its llama module"
    ]


def test_list_json_carries_the_origin(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "list", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)
    origins = {m["name"]: m["config_origin"] for m in models if "config_origin" in m}
    assert origins == ORIGINS
    mistral = next(m for m in models if m["name"] == "zoo/mistral")
    assert "llama module" in mistral["config_origin_reason"]


def test_prepare_with_an_underivable_config_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def broken(module_name: str) -> dict[str, Any]:
        raise TypeError("ModelArgs.__init__() missing 1 required positional argument: 'x'")

    monkeypatch.setattr(derive_text, "tiny_config", broken)
    assert main(["models", "prepare", "zoo/qwen2"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert err.startswith("mlx-harness: error: zoo/qwen2: the installed mlx-lm cannot derive")
