"""``probe --json`` on every embedded model and probe fixture; the records' round trip."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from model_copies import EMBEDDED, EMBEDDED_IDS, prepared
from probe_rows import ROWS

from harness.cli.probe import add_parser
from harness.models.catalog import EmbeddedModel
from harness.probe.installed import Stack
from harness.probe.machine import MemoryBudget
from harness.probe.policy import decide
from harness.probe.probe import probe_model
from harness.probe.serialize import (
    RecordError,
    decision_dict,
    estimate_dict,
    estimate_from_dict,
    probe_dict,
    probe_from_dict,
)

PLENTY = MemoryBudget(total_bytes=64 * 1024**3, available_bytes=48 * 1024**3)
KEYS = {"path", "format", "model_type", "capabilities", "backend", "quantization", "decision",
        "memory", "parameters", "weights_bytes", "problems", "text"}  # fmt: skip
SMOL_QUANT = {
    "method": "mlx",
    "bits": 4,
    "group_size": 32,
    "mode": "affine",
    "overrides": [{"path": "model.embed_tokens", "bits": 8, "group_size": 32, "mode": "affine"}],
    "tensor_types": {},
}
# What each embedded model's record must say (beyond being valid JSON with the key fields).
EXPECTED: dict[str, dict[str, Any]] = {
    "smollm2-135m-instruct": {"quantization": SMOL_QUANT, "model_type": "llama", "dtype": "F16"},
    "smollm2-135m-instruct-f32": {"quantization": None, "dtype": "F32"},
    "gemma3-270m": {"quantization": None, "model_type": "gemma3_text"},
    "whisper-tiny-en": {"backend": "mlx_audio", "model_type": "whisper"},
    "zoo/llama-draft": {"model_type": "llama", "quantization": None},  # a llama, smaller
    "zoo/qwen2-caller": {"model_type": "qwen2", "quantization": None},  # trained to call
    "zoo/mistral-caller": {"model_type": "mistral", "quantization": None},
    "zoo/qwen3-coder-caller": {"model_type": "qwen3", "quantization": None},
    "zoo/pythonic-caller": {"model_type": "llama", "quantization": None},
    "zoo/gemma4-caller": {"model_type": "llama", "quantization": None},
    "zoo/gemma4-hyphen-caller": {"model_type": "llama", "quantization": None},
    "zoo/qwen2-pair-caller": {"model_type": "qwen2", "quantization": None},
    "zoo/mistral-pair-caller": {"model_type": "mistral", "quantization": None},
    "zoo/qwen2-split-caller": {"model_type": "qwen2", "quantization": None},
    "zoo/qwen3-thinker": {"model_type": "qwen3", "quantization": None},  # trained to think
    "zoo/qwen3-think-caller": {"model_type": "qwen3", "quantization": None},  # calls in <think>
}


def _strict(text: str) -> Any:
    """JSON as RFC 8259 has it: NaN and Infinity are not JSON."""

    def refuse(name: str) -> Any:
        raise ValueError(f"not JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _probe_json(paths: list[Path]) -> list[Any]:
    """``mlx-harness probe --json PATH...``: one record per path, in order (none may fail)."""
    parser = argparse.ArgumentParser(prog="mlx-harness")
    add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["probe", "--json", *map(str, paths)])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        args.func(args)
    assert err.getvalue() == ""
    records = [_strict(line) for line in out.getvalue().splitlines()]
    assert len(records) == len(paths)
    return records


@pytest.fixture(scope="module")
def embedded_records() -> dict[str, Any]:
    """One ``probe --json`` over every prepared embedded model (one stack read, as for many
    paths), by model name; a test of one that is not prepared skips with the fix."""
    ready = [m for m in EMBEDDED if m.prepared]
    return dict(zip([m.name for m in ready], _probe_json([m.path for m in ready]), strict=True))


@pytest.mark.parametrize("model", EMBEDDED, ids=EMBEDDED_IDS)
def test_probe_json_on_every_embedded_model(
    model: EmbeddedModel, embedded_records: Mapping[str, Any]
) -> None:
    path = prepared(model)
    record = embedded_records[model.name]
    assert record["path"] == str(path)
    assert set(record) >= KEYS
    assert record["decision"]["code"] == "ok", record["decision"]
    assert record["backend"] == model.backend
    assert record["parameters"] > 0 and record["weights_bytes"] > 0
    family = model.name.removeprefix("zoo/")
    expected = EXPECTED.get(model.name, {"model_type": family, "quantization": None})
    assert {k: record[k] for k in expected} == expected


@pytest.fixture(scope="module")
def fixture_records(row_paths: Mapping[str, Path]) -> dict[str, Any]:
    """One ``probe --json`` over every fixture row, by row name."""
    return dict(zip(row_paths, _probe_json(list(row_paths.values())), strict=True))


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_probe_json_on_every_fixture(row, fixture_records: Mapping[str, Any]) -> None:  # type: ignore[no-untyped-def]
    record = fixture_records[row.name]
    assert set(record) >= KEYS
    assert record["decision"]["code"] == row.code.value
    assert record["backend"] == row.backend.value
    assert record["capabilities"] == sorted(c.value for c in row.caps)
    assert record["tool_parser"] == row.parser


def test_quantized_fixture_record(fixture_records: Mapping[str, Any]) -> None:
    record = fixture_records["quantized-4bit-8bit-overrides"]
    assert record["quantization"]["bits"] == 4 and record["quantization"]["group_size"] == 32
    assert [o["path"] for o in record["quantization"]["overrides"]] == [
        "lm_head",
        "model.embed_tokens",
    ]
    gguf = fixture_records["gguf-llama"]["quantization"]
    assert gguf["method"] == "gguf" and sum(gguf["tensor_types"].values()) > 0


@pytest.mark.parametrize("row", ROWS, ids=[r.name for r in ROWS])
def test_round_trip(row, row_paths: Mapping[str, Path], stack: Stack) -> None:  # type: ignore[no-untyped-def]
    """Through JSON text and back: the same Probe and MemoryEstimate."""
    probe = probe_model(row_paths[row.name], stack=stack)
    assert probe_from_dict(json.loads(json.dumps(probe_dict(probe)))) == probe
    decision = decide(probe, scenario_needs=frozenset(), memory=PLENTY)
    json.dumps(decision_dict(decision))  # a decision is written as JSON (and never read back)
    if decision.memory is not None:
        assert estimate_from_dict(estimate_dict(decision.memory)) == decision.memory


@pytest.mark.parametrize(
    ("data", "why"),
    [
        (None, "expected an object, got NoneType"),
        ([], "expected an object, got list"),
        ({}, "missing key 'path'"),
        ({"path": "m", "format": "onnx"}, "'onnx' is not a valid WeightFormat"),
        ({"path": 3, "format": "safetensors", "model_type": None, "architectures": [],
          "capabilities": [], "backend": "mlx_lm", "parameters": "12"},
         "expected an integer, got str"),
        ({"path": "m", "format": "safetensors", "model_type": None, "architectures": [],
          "capabilities": ["telepathy"], "backend": "mlx_lm"},
         "'telepathy' is not a valid Capability"),
    ],
)  # fmt: skip
def test_probe_record_errors_are_one_line(data: Any, why: str) -> None:
    with pytest.raises(RecordError) as info:
        probe_from_dict(data)
    message = str(info.value)
    assert message.startswith("not a probe record (") and why in message
    assert "\n" not in message


def test_estimate_record_errors() -> None:
    with pytest.raises(RecordError, match="not a memory estimate record"):
        estimate_from_dict({"context_tokens": 1})
    with pytest.raises(RecordError, match="expected an object, got str"):
        estimate_from_dict("x")
