"""Models side by side: a column per variant of one model (same architecture, parameter count
within 10%) for each (point, metric) two of them measured, with the change against the first;
no table for models that are not variants of each other, one row per metric."""

from __future__ import annotations

import dataclasses

import pytest
from gfm_facts import gfm_problems
from report_fixtures import EVIL, case, make_run, metric, realistic_run

from harness.core.types import RunRecord, Unit
from harness.report import render_markdown, side_by_side

DECODE = "throughput.decode_tps"


SMOLLM = {"model_type": "llama", "parameters": 134_515_008}
TINY = {"model_type": "llama", "parameters": 106_816}


def _probed(run: RunRecord, probes: dict[str, dict[str, object]]) -> RunRecord:
    return dataclasses.replace(run, probes=probes)


def _run(*models: tuple[str, float]) -> RunRecord:
    run = make_run(
        [
            case(
                m,
                "throughput",
                point={"prompt_tokens": 128},
                metrics=[metric(DECODE, Unit.TOKENS_PER_SECOND, v)],
            )
            for m, v in models
        ]
    )
    return _probed(run, {m: SMOLLM for m, _ in models})


def test_one_model_has_no_side_by_side() -> None:
    assert side_by_side.build(_run(("a", 50.0))) is None


def test_each_model_is_a_column_with_its_change_against_the_first() -> None:
    data = side_by_side.build(_run(("f32", 40.0), ("4bit", 60.0)))
    assert data is not None and [g.models for g in data.groups] == [("f32", "4bit")]
    ((title, table),) = data.tables
    assert title == "throughput · llama, 135M parameters · against f32"
    assert [c.label for c in table.columns] == ["params", "metric", "f32", "4bit"]
    assert [c.text for c in table.rows[0]] == ["pp128", "decode", "40.0 tok/s", "60.0 tok/s (+50%)"]


def test_a_row_only_one_model_measured_is_left_out() -> None:
    run = make_run(
        [
            case("a", "load", metrics=[metric("load.load_s", Unit.SECONDS, 0.5)]),
            case("b", "load", metrics=[metric("load.weights_bytes", Unit.BYTES, 1e6)]),
        ]
    )
    assert side_by_side.build(_probed(run, {"a": SMOLLM, "b": SMOLLM})) is None


def test_more_models_than_columns_are_counted_and_names_escaped() -> None:
    run = realistic_run()
    models = list(dict.fromkeys(r.model for r in run.results))
    data = side_by_side.build(_probed(run, {m: SMOLLM for m in models}))
    assert data is not None
    assert len(data.groups[0].models) == side_by_side.MAX_MODELS and data.left_out == 2
    markdown = render_markdown(_run((EVIL, 40.0), ("b", 41.0)))
    assert "Models side by side" in markdown and "<script>" not in markdown


@pytest.mark.parametrize(
    ("probes", "compared", "apart"),
    [
        # quantisations of one model: compared; a random tiny llama is not one of them
        ({"f32": SMOLLM, "q4": SMOLLM, "tiny": TINY}, [("f32", "q4")], ("tiny",)),
        # within 10% of each other's size: variants
        (
            {"f32": SMOLLM, "q4": {**SMOLLM, "parameters": 140_000_000}, "tiny": TINY},
            [("f32", "q4")],
            ("tiny",),
        ),
        # another architecture of the same size is another model
        ({"f32": SMOLLM, "q4": {**SMOLLM, "model_type": "qwen2"}, "tiny": TINY}, [], None),
        # no probe recorded: nothing tells they belong together
        ({}, [], None),
        ({"f32": SMOLLM, "q4": {"model_type": "llama", "parameters": None}}, [], None),
    ],
)
def test_only_variants_of_one_model_are_set_side_by_side(
    probes: dict[str, dict[str, object]],
    compared: list[tuple[str, ...]],
    apart: tuple[str, ...] | None,
) -> None:
    run = make_run(
        [
            case(m, "load", metrics=[metric("load.load_s", Unit.SECONDS, v)])
            for m, v in (("tiny", 0.08), ("f32", 2.0), ("q4", 1.5))
        ]
    )
    data = side_by_side.build(_probed(run, probes))
    if not compared:
        assert data is None
        return
    assert data is not None
    assert [g.models for g in data.groups] == compared and data.apart == apart
    markdown = render_markdown(_probed(run, probes))
    assert "Not compared (no variant of theirs in this run, or no probe to tell): tiny." in markdown
    assert "+2336%" not in markdown and "(-25%)" in markdown


def test_metrics_of_one_short_label_are_one_row_each_by_full_name() -> None:
    peaks = [("load.mlx_peak_bytes", 0.4e6), ("memory.mlx_peak_bytes", 0.0)]
    run = make_run(
        [
            case(m, "load", metrics=[metric(name, Unit.BYTES, v * k) for name, v in peaks])
            for m, k in (("f32", 1.0), ("q4", 0.5))
        ]
    )
    data = side_by_side.build(_probed(run, {"f32": SMOLLM, "q4": SMOLLM}))
    assert data is not None
    ((_, table),) = data.tables
    labels = [row[1].text for row in table.rows]
    assert labels == ["load.mlx_peak_bytes", "memory.mlx_peak_bytes"]
    assert gfm_problems(render_markdown(_probed(run, {"f32": SMOLLM, "q4": SMOLLM}))) == []


def test_counts_and_unmeasured_metrics_are_not_compared() -> None:
    """Checks passed is the suite's choice, not a variant's property; a metric with no finite
    sample has no median: neither gets a row."""
    passed = "api_contracts.passed"
    nan = float("nan")
    run = make_run(
        [
            case(m, "api_contracts", metrics=[metric(passed, Unit.COUNT, v), metric(DECODE, u, w)])
            for m, v, u, w in (
                ("a", 14.0, Unit.TOKENS_PER_SECOND, nan),
                ("b", 4.0, Unit.TOKENS_PER_SECOND, nan),
            )
        ]
    )
    assert side_by_side.build(_probed(run, {"a": SMOLLM, "b": SMOLLM})) is None


def _referenced(run: RunRecord, reference: str | None, suite: str = "smoke") -> RunRecord:
    """``run`` whose suite names ``reference`` (``side_by_side: {reference: NAME}``)."""
    suites = tuple(
        dataclasses.replace(s, reference=reference) if s.name == suite else s for s in run.suites
    )
    return dataclasses.replace(run, suites=suites)


def _load_run(*models: tuple[str, float]) -> RunRecord:
    return make_run(
        [case(m, "load", metrics=[metric("load.load_s", Unit.SECONDS, v)]) for m, v in models]
    )


# (probes, the suite's reference, groups compared, models not compared, a note's fragment)
REFERENCE = [
    # a named reference compares models no probe calls variants: another architecture, none
    (
        {"f32": SMOLLM, "qwen": {**SMOLLM, "model_type": "qwen2"}},
        "f32",
        [("f32", "tiny", "qwen", "none")],
        (),
        None,
    ),
    # the reference need not come first in the run: it is the first column
    ({}, "qwen", [("qwen", "tiny", "f32", "none")], (), None),
    # without a reference: variants only (f32 and q4-sized llama), the rest not compared
    (
        {"f32": SMOLLM, "qwen": SMOLLM, "tiny": TINY},
        None,
        [("f32", "qwen")],
        ("tiny", "none"),
        None,
    ),
    # a reference that measured nothing in this run: said so, variants as without one
    (
        {"f32": SMOLLM, "qwen": SMOLLM},
        "gone",
        [("f32", "qwen")],
        ("tiny", "none"),
        "the reference 'gone' of suite 'smoke' measured nothing in this run",
    ),
]


@pytest.mark.parametrize(("probes", "reference", "compared", "apart", "note"), REFERENCE)
def test_a_named_reference_is_compared_with_every_model_of_its_suite(
    probes: dict[str, dict[str, object]],
    reference: str | None,
    compared: list[tuple[str, ...]],
    apart: tuple[str, ...],
    note: str | None,
) -> None:
    run = _load_run(("tiny", 0.08), ("f32", 2.0), ("qwen", 1.0), ("none", 4.0))
    run = _referenced(_probed(run, probes), reference)
    data = side_by_side.build(run)
    assert data is not None
    assert [g.models for g in data.groups] == compared and data.apart == apart
    assert [n for n in data.notes if note is not None and note in n] == (
        [data.notes[0]] if note else []
    )
    markdown = render_markdown(run)
    if reference == "f32":
        (title, table), *_ = data.tables
        assert title == "load · smoke's reference · against f32"
        assert [c.text for c in table.rows[0][2:]] == [
            "2000 ms",
            "80.0 ms (-96%)",
            "1000 ms (-50%)",
            "4000 ms (+100%)",
        ]
    if note is not None:
        assert f"Note: {note}" in markdown
    assert gfm_problems(markdown) == []


def test_a_reference_with_more_models_than_columns_is_in_each_table() -> None:
    models = [("ref", 1.0), *((f"m{i}", 1.0 + i) for i in range(5))]
    data = side_by_side.build(_referenced(_load_run(*models), "ref"))
    assert data is not None
    assert [g.models for g in data.groups] == [("ref", "m0", "m1", "m2"), ("ref", "m3", "m4")]
    assert data.left_out == 0  # every model is in a table, none counted out


def test_a_reference_applies_to_its_own_suites_models_only() -> None:
    other = case("theirs", "load", metrics=[metric("load.load_s", Unit.SECONDS, 3.0)])
    other = dataclasses.replace(other, suite="other", case_id="other::theirs::load")
    run = _load_run(("f32", 2.0), ("q4", 1.0))
    run = dataclasses.replace(
        run,
        results=(*run.results, other),
        suites=(*run.suites, dataclasses.replace(run.suites[0], name="other")),
    )
    data = side_by_side.build(_referenced(run, "f32"))
    assert data is not None
    assert [g.models for g in data.groups] == [("f32", "q4")] and data.apart == ("theirs",)


def test_a_reference_note_is_escaped() -> None:
    run = _referenced(_load_run(("a", 1.0), ("b", 2.0)), EVIL)
    markdown = render_markdown(run)
    assert "measured nothing in this run" in markdown and "<script>" not in markdown
