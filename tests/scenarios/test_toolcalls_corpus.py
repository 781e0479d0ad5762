"""toolcalls_corpus: the corpus layer's scores inside a run (no model used)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from harness.backends.base import LoadInfo
from harness.backends.fake import FakeModel
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.toolcalls_corpus import CorpusParams
from tests.installed import require

require("mlx_lm")


def run(**params: Any) -> ScenarioOutput:
    model, info = FakeModel({}), LoadInfo(0.0, 0, "none")
    ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
    return SCENARIOS.get("toolcalls_corpus").run(ctx, CorpusParams(**params))


def test_shipped_corpus_passes_with_its_known_bugs() -> None:
    output = run()
    got = {m.name: m.samples[0] for m in output.metrics}
    assert not output.failures and got["toolcalls_corpus.unexpected"] == 0
    assert got["toolcalls_corpus.scored"] > 100 and got["toolcalls_corpus.known_broken"] > 0
    assert 0 < got["toolcalls_corpus.accuracy"] < 1
    rows = {r["parser"]: r for r in output.artifacts["implementations"]}
    assert rows["mlx_lm.json_tools"]["cases"] >= 20
    assert (
        rows["mlx_lm.json_tools"]["known_broken"]
        == rows["mlx_lm.json_tools"]["cases"] - (rows["mlx_lm.json_tools"]["ok"])
    )


def test_an_unrecorded_failure_fails_the_case(tmp_path: Path) -> None:
    case = {
        "id": "json_tools/wrong",
        "parser": "json_tools",
        "text": '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>',
        "expected": [{"name": "f", "arguments": {"a": 2}}],
    }
    (tmp_path / "json_tools.jsonl").write_text(json.dumps(case) + "\n")
    output = run(corpus=str(tmp_path), parser="mlx_lm.json_tools")
    assert (
        output.failures and "mlx_lm.json_tools json_tools/wrong: wrong_value" in output.failures[0]
    )
    (row,) = output.artifacts["implementations"]
    assert row == {
        "parser": "mlx_lm.json_tools",
        "cases": 1,
        "ok": 0,
        "known_broken": 0,
        "unexpected": 1,
        "failures": {"wrong_value": 1},
    }
