"""Generated VLM zoo families and the family matrix: a family that builds must load and generate;
the matrix has a row for every model package of the installed mlx-vlm."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.families.row import ArchRow, Cell, Outcome
from harness.families.vision import COLUMNS, try_vision_family
from harness.families.vision_matrix import (
    VisionMatrix,
    from_json,
    read,
    rows_from_events,
    to_json,
)
from harness.models.catalog import embedded_models
from harness.models.zoo.build import build
from harness.models.zoo.derive_vision_family import (
    GENERATED_VISION,
    IMAGE_TOKEN,
    generated_families,
    preprocessor_config,
    recipe,
    vision_model_types,
)
from tests.installed import require

require("mlx_vlm")


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    """No hub, as in the harness's workers: the backend's own HF_HUB_OFFLINE comes too late in
    this process (huggingface_hub read it at import), and moondream2's processor asks the hub
    for its tokenizer (moondream/starmie-v1), retrying with back-off for 45 s before using the
    cached one."""
    import huggingface_hub.constants

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        yield


# Families the derivation builds but that mlx-vlm 0.7.10 cannot load or run from the zoo files:
# the column that fails and a fragment of its one-line reason.
KNOWN_FAILURES = {
    "minimax_m3_vl": ("load", "rotary_dim"),
    "mllama": ("load", "max_aspect_ratio_id"),
    "paligemma": ("image", "concatenate str"),
    "llava_onevision": ("image", "not iterable"),
    "locateanything": ("image", "placeholders"),
}


@pytest.mark.parametrize("name", GENERATED_VISION)
def test_a_generated_family_loads_generates_and_runs_an_image(name: str) -> None:
    row = try_vision_family(name)
    assert row.generated.outcome is Outcome.OK, row.generated.detail
    column, fragment = KNOWN_FAILURES.get(name, ("", ""))
    for c in ("load", "text", "image", "cache"):
        cell = row.cell(c)
        if c == column:
            assert cell.outcome is Outcome.FAILED and fragment in cell.detail, cell
            assert "\n" not in cell.detail
            if c == "load":
                return
        else:
            assert cell.outcome is Outcome.OK, (c, cell)


def test_a_module_without_a_vision_config_is_a_row_with_the_reason() -> None:
    row = try_vision_family("llama")
    assert row.generated.outcome is Outcome.NOT_GENERATED
    assert "no VisionConfig" in row.generated.detail
    assert all(row.cell(c).outcome is Outcome.NOT_GENERATED for c in COLUMNS)


def test_the_generated_families_are_zoo_entries(tmp_path: Path) -> None:
    names = {m.name: m for m in embedded_models()}
    for family in GENERATED_VISION:
        entry = names[f"zoo/{family}"]
        assert entry.backend == "mlx_vlm" and "derived" in entry.tags and "zoo" in entry.tags
    out = build(recipe("pixtral"), tmp_path / "pixtral")
    config = json.loads((out / "config.json").read_text())
    vocab = json.loads((out / "tokenizer.json").read_text())["added_tokens"]
    image_id = next(t["id"] for t in vocab if t["content"] == IMAGE_TOKEN)
    assert config["image_token_index"] == image_id
    assert config["model_type"] == "pixtral" and config["vision_config"]["num_hidden_layers"] == 2
    assert (out / "preprocessor_config.json").is_file()


def test_generated_families_are_the_listed_ones_in_order() -> None:
    assert list(generated_families()) == list(GENERATED_VISION)
    assert set(GENERATED_VISION) <= set(vision_model_types())


@pytest.mark.parametrize(
    ("vision", "px"),
    [({"image_size": 224}, 224), ({"image_size": 1024}, 448), ({}, 28), ({"img_size": [64]}, 64)],
)
def test_preprocessor_is_sized_from_the_vision_config(vision: dict[str, object], px: int) -> None:
    pre = preprocessor_config({"vision_config": vision})
    assert pre["size"] == {"height": px, "width": px}
    assert pre["image_seq_length"] == (px // 14) ** 2


def _events(name: str, *columns: tuple[str, str | None]) -> list[dict[str, str]]:
    out = []
    for column, outcome in columns:
        event = {"arch": name, "column": column}
        if outcome is not None:
            event.update(outcome=outcome, detail="d")
        out.append(event)
    return out


@pytest.mark.parametrize(
    ("events", "death", "expected"),
    [
        (  # a complete row, then a family the worker died in while loading
            _events("a", ("generated", "ok"), ("load", "ok"), ("done", None))
            + _events("b", ("generated", "ok"), ("load", None)),
            "the process died: SIGSEGV",
            [("a", "ok", "ok"), ("b", "ok", "failed")],
        ),
        ([], "the process died: SIGKILL", [("a", "failed", "not generated")]),
        (
            _events("a", ("generated", "not generated"), ("done", None)),
            None,
            [("a", "not generated", "not generated")],
        ),
    ],
)
def test_rows_from_events(
    events: list[dict[str, str]], death: str | None, expected: list[tuple[str, str, str]]
) -> None:
    rows = rows_from_events(["a", "b", "c"], events, death)
    got = [(r.name, r.generated.outcome.value, r.cell("load").outcome.value) for r in rows]
    assert got == expected


def test_matrix_json_round_trip(tmp_path: Path) -> None:
    row = ArchRow("x", Cell(Outcome.OK, "derived"), {c: Cell(Outcome.OK, c) for c in COLUMNS})
    m = VisionMatrix({"mlx-vlm": "0"}, (row,), 1.5)
    path = tmp_path / "m.json"
    path.write_text(json.dumps(to_json(m)))
    back = read(path)
    assert back is not None and back.cached and back.rows == m.rows
    assert from_json(to_json(m)).counts()["image"][Outcome.OK] == 1
    path.write_text("{}")
    assert read(path) is None


def test_the_matrix_has_a_row_for_every_model_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.families import vision_matrix

    def fake_rows(names: list[str], **_kwargs: object) -> list[ArchRow]:
        return [ArchRow(n, Cell(Outcome.NOT_GENERATED, "fake")) for n in names]

    monkeypatch.setattr(vision_matrix, "run_rows", fake_rows)
    made = vision_matrix.matrix(root=tmp_path)
    assert [r.name for r in made.rows] == vision_model_types()
    assert len(made.rows) > 100 and not made.cached
    again = vision_matrix.matrix(root=tmp_path)
    assert again.cached and [r.name for r in again.rows] == [r.name for r in made.rows]
    assert again.counts() == made.counts()
