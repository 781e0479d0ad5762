"""The tool-calls section: tables from the cases' artifacts, misses shown raw but escaped."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import CaseResult, RunRecord, Status, Unit
from harness.report import render_html, render_markdown
from harness.report.tool_calls import build

UNESCAPED_PIPE = re.compile(r"(?<!\\)\|")


def record(pid: str, failure: str, raw: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": pid,
        "category": pid.split("/")[0],
        "question": "Weather in Paris?",
        "failure": failure,
        "detail": "" if failure == "ok" else f"{failure} detail",
        "raw": raw,
        "calls": [],
        "content": raw,
        "errors": [],
        "crash": None,
        "stream_calls": [],
        "stream_content": raw,
        "stream_crash": None,
        "parity": True,
        **extra,
    }


def live_case(model: str, name: str, **artifacts: Any) -> CaseResult:
    metrics = [
        metric("tool_calls.parser_inferred", Unit.RATIO, 1.0),
        metric("tool_calls.prompts", Unit.COUNT, 4),
        metric("tool_calls.markup_outputs", Unit.COUNT, 2),
        metric("tool_calls.markup_parse_share", Unit.RATIO, 0.5),
        metric("tool_calls.stream_parity_share", Unit.RATIO, 0.75),
        metric("tool_calls.leaked_markup", Unit.COUNT, 1),
        metric("tool_calls.dropped_calls", Unit.COUNT, 1),
        metric("tool_calls.request_errors", Unit.COUNT, 0),
        metric("tool_calls.accuracy", Unit.RATIO, 0.25),
    ]
    base = case(model, "tool_calls", Status.FAILED, metrics=metrics, reason="streamed differ")
    return replace(base, case_id=f"s::{model}::{name}", artifacts=artifacts)


def tool_run() -> RunRecord:
    scored = live_case(
        "smollm2",
        "tool_calls",
        chat_template="smollm2_tools",
        chat_template_sha256="ab" * 32,
        parser="json_tools",
        fewshot=True,
        categories={"simple": {"prompts": 2, "ok": 1}, "irrelevance": {"prompts": 2, "ok": 0}},
        failure_counts={"extra_call": 2, "wrong_name": 1},
        prompts=[
            record("simple/a", "ok", "<tool_call>{}</tool_call>"),
            record("simple/b", "wrong_name", EVIL, calls=[{"name": "x|y", "arguments": {}}]),
            record(
                "irrelevance/c",
                "extra_call",
                "<tool_call>\n{}\n</tool_call>",
                parity=False,
                stream_calls=[{"name": "streamed_only", "arguments": {}}],
            ),
            record("irrelevance/d", "parse_error", "x", crash="KeyError: 'arguments'"),
        ],
    )
    skipped = replace(
        case("smollm2", "tool_calls", Status.SKIPPED, reason="no tool parser: mlx-lm infers none"),
        case_id="s::smollm2::tool_calls_own_template",
        metrics=(metric("tool_calls.parser_inferred", Unit.RATIO, 0.0),),
        artifacts={"chat_template": "model", "parser": None, "fewshot": True},
    )
    corpus = replace(
        case("smollm2", "toolcalls_corpus"),
        artifacts={
            "implementations": [
                {
                    "parser": "mlx_lm.json_tools",
                    "cases": 24,
                    "ok": 20,
                    "known_broken": 4,
                    "unexpected": 0,
                    "failures": {"parse_error": 3, "leaked_markup": 1},
                },
            ]
        },
    )
    return make_run([scored, skipped, corpus])


def test_tables_from_artifacts() -> None:
    data = build(tool_run())
    assert data is not None
    parsers = {row[1].text: row for row in data.parsers.rows}
    assert parsers["tool_calls"][4].text == "json_tools"
    assert parsers["tool_calls"][7].text == "1/2"  # parse share of the replies with markup
    assert parsers["tool_calls"][8].text == "3/4"  # stream parity over the prompts
    assert parsers["tool_calls_own_template"][4].text == "none inferred"
    (categories,) = data.categories.rows
    assert [c.text for c in categories[2:]] == ["1/2", "—", "—", "—", "0/2", "1/4"]
    (classes,) = data.classes.rows
    labels = [c.label for c in data.classes.columns]
    assert classes[labels.index("extra_call")].text == "2"
    assert classes[labels.index("wrong_name")].text == "1"
    (group,) = data.misses
    assert [m.prompt for m in group.misses] == ["simple/b", "irrelevance/c", "irrelevance/d"]
    assert group.misses[1].streamed is not None and "streamed_only" in group.misses[1].streamed
    assert group.misses[2].parsed == "request fails: KeyError: 'arguments'"
    (corpus,) = data.corpus.rows
    assert [c.text for c in corpus[:4]] == ["mlx_lm.json_tools", "24", "20", "83.3%"]


def test_absent_without_tool_call_cases() -> None:
    assert build(make_run([case("m", "throughput")])) is None


def test_raw_output_is_escaped_in_both_outputs() -> None:
    run = tool_run()
    html, md = render_html(run), render_markdown(run)
    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert "&lt;tool_call&gt;" in html
    assert "<script" not in md and "&lt;script>alert(1)&lt;/script>" in md
    assert "&lt;tool_call>" in md
    assert re.search(r"(?<!\\)\]\(http://evil", md) is None
    assert "tool_calls.accuracy" not in md.split("## Other metrics")[-1].split("##")[0]


def test_misses_table_keeps_its_shape() -> None:
    md = render_markdown(tool_run())
    lines = md[md.index("### Misses") :].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    rows = [line for line in lines[first:] if line.startswith("|") or not line.strip()]
    rows = rows[: rows.index("")] if "" in rows else rows
    width = len(UNESCAPED_PIPE.findall(rows[0]))
    assert len(rows) == 2 + 3
    assert all(len(UNESCAPED_PIPE.findall(row)) == width for row in rows), rows
