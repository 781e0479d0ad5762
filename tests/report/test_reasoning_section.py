"""The Reasoning section: per case the first token and first answer token, the reasoning and
answer tokens and rates (medians), how reasoning was told apart, and the finding (the failure
line, or why the case is not applicable); hostile text escaped."""

from __future__ import annotations

import dataclasses

from report_fixtures import EVIL, case, make_run

from harness.core.types import Metric, Status, Unit
from harness.report import render_markdown
from harness.scenarios.reasoning.section import build


def thinker(model: str, status: Status = Status.PASSED, reason: str | None = None) -> object:
    metrics = (
        Metric("reasoning.ttft_s", Unit.SECONDS, (0.04, 0.05, 0.06)),
        Metric("reasoning.ttfa_s", Unit.SECONDS, (0.2, 0.3, 0.25)),
        Metric("reasoning.reasoning_tokens", Unit.TOKENS, (8.0, 8.0, 8.0)),
        Metric("reasoning.answer_tokens", Unit.TOKENS, (6.0, 6.0, 6.0)),
        Metric("reasoning.reasoning_tps", Unit.TOKENS_PER_SECOND, (60.0, 70.0, 65.0)),
    )
    found = case(model, "reasoning", status, metrics=metrics, reason=reason)
    artifacts = {"surface": "over HTTP (mlx_lm.server)", "split": ["field"]}
    return dataclasses.replace(found, artifacts={**artifacts, "reasoning_field": "reasoning"})


def test_the_section_shows_each_part_and_the_finding() -> None:
    na = case("smollm2", "reasoning", Status.SKIPPED, reason="not applicable: it does not think")
    run = make_run([thinker("thinker"), thinker(EVIL, Status.FAILED, reason=EVIL), na])
    section = build(run)
    assert section is not None
    rows = {row[0].text: [c.text for c in row] for row in section.summary.rows}
    row = rows["thinker"]
    assert row[3:7] == ["over HTTP (mlx_lm.server)", "field (reasoning)", "50.0", "250"]
    assert row[7:11] == ["8", "6", "65.0", "—"]  # no answer rate measured: a dash
    assert rows["smollm2"][-1] == "not applicable: it does not think"
    markdown = render_markdown(run)
    assert "## Reasoning" in markdown and "<script>" not in markdown
