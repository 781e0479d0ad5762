"""One architecture end to end: a handful of known ones, and ones that cannot be generated."""

from __future__ import annotations

import pytest

from harness.families.text import COLUMNS, Cell, Outcome, try_architecture


@pytest.mark.parametrize(
    ("name", "caches", "tools"),
    [
        ("llama", "KVCache", "json_tools (zoo family template)"),
        ("qwen2", "KVCache", "json_tools (zoo family template)"),
        ("gemma3_text", "KVCache, RotatingKVCache", None),
        ("starcoder2", "KVCache", None),
    ],
)
def test_known_architectures_pass_every_column(name: str, caches: str, tools: str | None) -> None:
    events: list[tuple[str, Cell | None]] = []
    row = try_architecture(name, on_event=lambda c, cell: events.append((c, cell)))
    assert row.generated.outcome is Outcome.OK, row.generated.detail
    for column in ("load", "generate", "cache", "trim"):
        assert row.cell(column).outcome is Outcome.OK, (column, row.cell(column).detail)
    assert row.cell("cache").detail == caches
    if tools is None:
        assert row.cell("tools").outcome is Outcome.ABSENT
    else:
        assert row.cell("tools") == Cell(Outcome.OK, tools)
    started = [c for c, cell in events if cell is None]
    assert started == ["generated", *COLUMNS]


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("olmo", "importing it exits: To run olmo install ai2-olmo"),
        ("base", "defines no Model and ModelArgs"),
        ("no_such_module", "importing it fails: ModuleNotFoundError"),
    ],
)
def test_what_cannot_be_generated_says_why_on_every_column(name: str, reason: str) -> None:
    row = try_architecture(name)
    assert row.generated.outcome is Outcome.NOT_GENERATED
    assert row.generated.detail.startswith(reason) and "\n" not in row.generated.detail
    assert {row.cell(c).outcome for c in COLUMNS} == {Outcome.NOT_GENERATED}


@pytest.mark.parametrize(
    ("name", "caches"),
    [
        ("gemma3n", "KVCache, RotatingKVCache"),  # KV shared by the last layers
        ("ministral3", "KVCache"),  # YaRN rope_parameters read unconditionally
        ("llama4", "ChunkedKVCache, KVCache"),  # chunked attention, a global 4th layer
        ("deepseek_v2", "KVCache"),  # MLA with YaRN rope_scaling
        ("qwen3_5_moe", "ArraysCache, KVCache"),  # gated delta, then full attention
        ("nemotron_h", "ArraysCache, KVCache"),  # Mamba, attention, experts
    ],
)
def test_derived_families_generate(name: str, caches: str) -> None:
    row = try_architecture(name)
    assert row.generated.outcome is Outcome.OK, row.generated.detail
    for column in ("load", "generate", "cache"):
        assert row.cell(column).outcome is Outcome.OK, (column, row.cell(column).detail)
    assert row.cell("cache").detail == caches
