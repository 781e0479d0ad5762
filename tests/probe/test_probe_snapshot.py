"""A model directory is read once into a snapshot; probing the snapshot touches no file."""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from model_copies import EMBEDDED, EMBEDDED_IDS, prepared
from probe_fixtures import model_dir, write_safetensors
from probe_rows import ROWS

from harness.models.catalog import EmbeddedModel
from harness.probe.files import ProbeFileError
from harness.probe.installed import Stack
from harness.probe.probe import probe_model, probe_snapshot
from harness.probe.snapshot import read_snapshot

DIR_ROWS = [r for r in ROWS if not r.name.startswith("gguf")]  # GGUFs: the header is the model


@pytest.fixture()
def opened(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Every ``Path.open`` (read_text, read_bytes and the header reader go through it)."""
    counts: Counter[str] = Counter()
    real = Path.open

    def counting(self: Path, *args: Any, **kwargs: Any) -> Any:
        counts[str(self)] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counting)
    return counts


def _no_disk(monkeypatch: pytest.MonkeyPatch, model: Path) -> list[str]:
    """Make every file-system call inside ``model`` fail (the installed backends' sources,
    which the stack reads, stay readable); returns the list of refused calls."""
    refused: list[str] = []

    def guard(real: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            if args and str(args[0]).startswith(str(model)):
                refused.append(f"{real.__name__}({args[0]})")
                raise OSError("disk access after the snapshot")
            return real(*args, **kwargs)

        return call

    for name in ("open", "stat", "iterdir", "glob", "rglob", "exists", "is_file", "is_dir"):
        monkeypatch.setattr(Path, name, guard(getattr(Path, name)))
    monkeypatch.setattr(os, "scandir", guard(os.scandir))
    return refused


@pytest.mark.parametrize("row", DIR_ROWS, ids=[r.name for r in DIR_ROWS])
def test_each_file_is_opened_once(  # type: ignore[no-untyped-def]
    row, row_paths: Mapping[str, Path], stack: Stack, opened: Counter[str]
) -> None:
    probe_model(row_paths[row.name], stack=stack)
    assert opened, "the probe read nothing"
    assert {p: n for p, n in opened.items() if n > 1} == {}


@pytest.mark.parametrize("model", EMBEDDED, ids=EMBEDDED_IDS)
def test_each_file_of_an_embedded_model_is_opened_once(
    model: EmbeddedModel, stack: Stack, opened: Counter[str]
) -> None:
    probe_model(prepared(model), stack=stack)
    assert {p: n for p, n in opened.items() if n > 1} == {}
    assert str(model.path / "config.json") in opened


@pytest.mark.parametrize("row", DIR_ROWS, ids=[r.name for r in DIR_ROWS])
def test_rules_are_pure_functions_of_the_snapshot(  # type: ignore[no-untyped-def]
    row, row_paths: Mapping[str, Path], stack: Stack, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = row_paths[row.name]
    expected = probe_model(path, stack=stack)
    files = read_snapshot(path)
    with monkeypatch.context() as patch:
        refused = _no_disk(patch, path)
        probes = [probe_snapshot(files, stack) for _ in range(2)]  # the snapshot is not used up
    assert refused == []
    assert probes == [expected, expected]


def test_snapshot_contents(tmp_path: Path) -> None:
    path = model_dir(tmp_path, "m", {"model_type": "llama"}, template="{{ x }}")
    (path / "generation_config.json").write_text("{not json")
    (path / "chat_template.jinja").write_text("jinja")
    (path / "additional_chat_templates").mkdir()
    (path / "additional_chat_templates" / "tool_use.jinja").write_text("tools")
    (path / "1_Pooling").mkdir()
    (path / "1_Pooling" / "config.json").write_text("{}")
    write_safetensors(path / "2_Dense" / "model.safetensors", {"linear.weight": ("F32", (2, 2))})
    files = read_snapshot(path)
    assert files.names == {
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "generation_config.json",
        "chat_template.jinja",
    }
    assert files.folders == {"additional_chat_templates", "1_Pooling", "2_Dense"}
    assert files.read("config.json") == {"model_type": "llama"}
    assert files.read("generation_config.json") is None  # optional: broken reads as missing
    with pytest.raises(ProbeFileError, match=r"generation_config\.json: invalid JSON"):
        files.load("generation_config.json")
    assert files.load("processor_config.json") is None
    assert (files.template, dict(files.extra_templates)) == ("jinja", {"tool_use": "tools"})
    assert len(files.vocab) == 1 and b"WordLevel" in files.vocab[0]
    assert files.pooling
    assert files.weights.files == () and files.weights_for(modules=False).tensors == ()
    assert [t.name for t in files.weights_for(modules=True).tensors] == ["2_Dense.linear.weight"]
    assert files.weights_for(modules=True).tensors[0].file == "2_Dense/model.safetensors"
    with pytest.raises(TypeError):
        files.json["config.json"] = {}  # type: ignore[index]


def test_dangling_links_are_not_files(tmp_path: Path, stack: Stack) -> None:
    """A hub-cache symlink whose blob is gone is not listed: the model has no weights."""
    path = model_dir(tmp_path, "m", {"model_type": "llama", "architectures": ["LlamaForCausalLM"]})
    (path / "model.safetensors").symlink_to(path / "gone.safetensors")
    assert "model.safetensors" not in read_snapshot(path).names
    assert [p.code.value for p in probe_model(path, stack=stack).problems] == ["missing_weights"]
