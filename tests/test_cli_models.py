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


def test_prepare_suite_prepares_only_the_models_it_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``make demo`` prepares the smoke suite's models only: those its entries (and its
    includes) name, once each, in order; names on the line come first."""
    from harness.models import catalog

    prepared: list[str] = []

    def prepare(name: str, *, force: bool = False) -> Path:
        prepared.append(name)
        return tmp_path / name

    monkeypatch.setattr(catalog, "prepare_embedded", prepare)
    (tmp_path / "more.yaml").write_text(
        "models:\n  - {name: b, embedded: zoo/qwen3}\n  - {name: c, embedded: zoo/llama}\n"
    )
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(
        "schema_version: 1\ninclude: [more.yaml]\n"
        "models:\n  - {name: a, embedded: zoo/llama}\n  - {name: d, path: elsewhere}\n"
        "scenarios:\n  - scenario: load\n"
    )
    (tmp_path / "elsewhere").mkdir()
    assert main(["models", "prepare", "zoo/lfm2", "--suite", str(suite)]) == 0
    assert prepared == ["zoo/lfm2", "zoo/llama", "zoo/qwen3"]
    assert capsys.readouterr().out.splitlines()[0] == f"zoo/lfm2: {tmp_path / 'zoo/lfm2'}"


def test_prepare_suite_that_does_not_load_is_bad_input(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "typo.suite.yaml"
    suite.write_text("schema_version: 1\nmodel:\n  - {name: a, embedded: zoo/llama}\n")
    assert main(["models", "prepare", "--suite", str(suite)]) == 2
    err = capsys.readouterr().err
    assert str(suite) in err and "Traceback" not in err
