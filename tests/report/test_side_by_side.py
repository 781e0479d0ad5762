"""Models side by side: a column per model for each (point, metric) two of them measured, with
the change against the first model; no section for a one-model run."""

from __future__ import annotations

from report_fixtures import EVIL, case, make_run, metric, realistic_run

from harness.core.types import Unit
from harness.report import render_markdown, side_by_side

DECODE = "throughput.decode_tps"


def _run(*models: tuple[str, float]):  # type: ignore[no-untyped-def]
    return make_run(
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


def test_one_model_has_no_side_by_side() -> None:
    assert side_by_side.build(_run(("a", 50.0))) is None


def test_each_model_is_a_column_with_its_change_against_the_first() -> None:
    data = side_by_side.build(_run(("f32", 40.0), ("4bit", 60.0)))
    assert data is not None and data.models == ("f32", "4bit")
    ((scenario, table),) = data.tables
    assert scenario == "throughput"
    assert [c.label for c in table.columns] == ["params", "metric", "f32", "4bit"]
    assert [c.text for c in table.rows[0]] == ["pp128", "decode", "40.0 tok/s", "60.0 tok/s (+50%)"]


def test_a_row_only_one_model_measured_is_left_out() -> None:
    run = make_run(
        [
            case("a", "load", metrics=[metric("load.load_s", Unit.SECONDS, 0.5)]),
            case("b", "load", metrics=[metric("load.weights_bytes", Unit.BYTES, 1e6)]),
        ]
    )
    assert side_by_side.build(run) is None


def test_more_models_than_columns_are_counted_and_names_escaped() -> None:
    data = side_by_side.build(realistic_run())
    assert data is not None
    assert len(data.models) == side_by_side.MAX_MODELS and data.left_out == 2
    markdown = render_markdown(_run((EVIL, 40.0), ("b", 41.0)))
    assert "Models side by side" in markdown and "<script>" not in markdown
