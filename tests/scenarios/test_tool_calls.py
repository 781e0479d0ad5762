"""tool_calls: plumbing on canned replies, then real runs (zoo through the worker, SmolLM2)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import LoadInfo
from harness.backends.fake import FakeModel
from harness.scenarios import SCENARIOS
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.tool_calls import ToolCallsParams, _select
from harness.toolcalls.live import Category, FewShot, LiveSet, Prompt
from harness.toolcalls.model import Extraction
from tests.runner.cases import path_case

CALL = '<tool_call>\n{{"name": "{name}", "arguments": {args}}}\n</tool_call>'

TOOLS = """\
tools:
  - name: get_weather
    parameters:
      type: object
      properties: {city: {type: string}}
      required: [city]
  - name: get_population
    parameters:
      type: object
      properties: {country: {type: string}}
      required: [country]
  - name: ping
"""
FEWSHOT = """\
tools: [ping]
examples:
  - user: ping please
    calls: [{name: ping}]
"""
PROMPTS = """\
category: {category}
prompts:
  - id: one
    question: {question}
    tools: [get_weather, get_population]
    expected: {expected}
"""
MULTIPLE = PROMPTS.format(
    category="multiple",
    question="Weather in Paris?",
    expected="[{name: get_weather, arguments: {city: [Paris]}}]",
)
PARALLEL = PROMPTS.format(
    category="parallel",
    question="Weather in Paris and Oslo?",
    expected="[{name: get_weather, arguments: {city: [Paris]}}, "
    "{name: get_weather, arguments: {city: [Oslo]}}]",
)
IRRELEVANT = PROMPTS.format(category="irrelevance", question="Capital of Italy?", expected="[]")

REPLIES = {
    "Weather in Paris?": CALL.format(name="get_weather", args='{"city": "paris"}'),
    "Weather in Paris and Oslo?": CALL.format(name="get_weather", args='{"city": "Oslo"}'),
    "Capital of Italy?": CALL.format(name="get_population", args='{"country": "Italy"}'),
}


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    root = tmp_path / "live"
    root.mkdir()
    (root / "tools.yaml").write_text(TOOLS)
    (root / "fewshot.yaml").write_text(FEWSHOT)
    for name, text in (("m", MULTIPLE), ("p", PARALLEL), ("i", IRRELEVANT)):
        (root / f"{name}.yaml").write_text(text)
    return root


class CannedModel:
    """A model whose reply is looked up by the last user message; one token per character.
    Parsing goes through mlx-lm's real json_tools path (the corpus replay)."""

    def __init__(self, parser: str | None = "json_tools", stream_differs: bool = False) -> None:
        self.parser = parser
        self.stream_differs = stream_differs
        self.seen: list[tuple[list[Mapping[str, Any]], list[Any]]] = []
        self.template: str | None = None

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset({0})

    def encode(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def decode(self, tokens: Sequence[int]) -> str:
        return "".join(chr(t) for t in tokens)

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]:
        self.seen.append((list(messages), list(tools or ())))
        return self.encode(str(messages[-1]["content"]))

    def stream_tokens(self, prompt: Sequence[int], *, max_tokens: int, **_: Any) -> Iterator[int]:
        yield from self.encode(REPLIES[self.decode(prompt)])[:max_tokens]

    def vocab_size(self) -> int:
        return 0x110000

    def tool_parser_name(self) -> str | None:
        return self.parser

    def tool_markers(self) -> tuple[str, ...]:
        return ("<tool_call>", "</tool_call>") if self.parser else ()

    def chat_template_text(self) -> str | None:
        return self.template

    def with_chat_template(self, template: str) -> CannedModel:
        swapped = CannedModel("json_tools" if "<tool_call>" in template else None)
        swapped.template = template
        swapped.seen = self.seen
        return swapped

    def replay_server(
        self, prompt: Sequence[int], generated: Sequence[int], tools: Any, finish: Any
    ) -> tuple[Extraction, Extraction]:
        from harness.toolcalls import mlx_lm_server
        from harness.toolcalls.formats import get_format

        dialect = get_format("json_tools").dialect  # type: ignore[union-attr]
        whole = mlx_lm_server.extract("json_tools", dialect, self.decode(generated), tools, finish)
        streamed = replace(whole, calls=()) if self.stream_differs else whole
        return whole, streamed


def run(model: Any, **params: Any) -> ScenarioOutput:
    scenario = SCENARIOS.get("tool_calls")
    info = LoadInfo(0.0, 0, "none")
    ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
    return scenario.run(ctx, ToolCallsParams(**params))


def values(output: ScenarioOutput) -> dict[str, float]:
    return {m.name: m.samples[0] for m in output.metrics}


def test_canned_replies_are_scored_as_structures(data: Path) -> None:
    output = run(CannedModel(), data=str(data), fewshot=False)
    got = values(output)
    assert got["tool_calls.parser_inferred"] == 1.0
    assert got["tool_calls.prompts"] == 3 and got["tool_calls.markup_outputs"] == 3
    assert got["tool_calls.markup_parse_share"] == 1.0
    assert got["tool_calls.stream_parity_share"] == 1.0
    assert got["tool_calls.accuracy"] == pytest.approx(1 / 3)
    assert got["tool_calls.accuracy_multiple"] == 1.0  # "paris" matches "Paris"
    assert got["tool_calls.accuracy_parallel"] == 0.0
    assert got["tool_calls.accuracy_irrelevance"] == 0.0
    assert "tool_calls.accuracy_simple" not in got  # no simple prompt in this set
    assert not output.failures and output.skip_reason is None
    artifacts = output.artifacts
    assert artifacts["parser"] == "json_tools" and artifacts["chat_template"] == "model"
    assert artifacts["failure_counts"] == {"dropped_call": 1, "extra_call": 1}
    by_id = {r["id"]: r for r in artifacts["prompts"]}
    assert by_id["parallel/one"]["failure"] == "dropped_call"
    assert by_id["irrelevance/one"]["calls"] == [
        {"name": "get_population", "arguments": {"country": "Italy"}}
    ]
    assert by_id["multiple/one"]["raw"].startswith("<tool_call>")
    assert by_id["multiple/one"]["finish_reason"] == "stop"


def test_fewshot_puts_examples_and_their_tools_first(data: Path) -> None:
    model = CannedModel()
    run(model, data=str(data), categories=["multiple"])
    messages, tools = model.seen[-1]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert messages[1]["tool_calls"][0]["function"]["name"] == "ping"
    assert [t["function"]["name"] for t in tools] == ["get_weather", "get_population", "ping"]
    run(model, data=str(data), categories=["multiple"], fewshot=False)
    assert [m["role"] for m in model.seen[-1][0]] == ["user"]


def test_length_limit_is_the_finish_reason(data: Path) -> None:
    output = run(CannedModel(), data=str(data), categories=["multiple"], max_tokens=20)
    (record,) = output.artifacts["prompts"]
    assert record["finish_reason"] == "length" and record["generated_tokens"] == 20
    # the cut call reaches the parser, which fails: the server drops it without a word
    assert record["failure"] == "parse_error" and len(record["errors"]) == 1
    assert record["calls"] == [] and not record["parses"]


def test_a_cut_call_is_no_abstention_on_an_irrelevance_prompt(data: Path) -> None:
    output = run(CannedModel(), data=str(data), categories=["irrelevance"], max_tokens=20)
    (record,) = output.artifacts["prompts"]
    assert record["calls"] == [] and len(record["errors"]) == 1
    assert record["failure"] == "parse_error", record["detail"]
    assert values(output)["tool_calls.accuracy_irrelevance"] == 0.0


@pytest.mark.parametrize(("given", "named"), [({}, "strict"), ({"string_match": "bfcl"}, "bfcl")])
def test_the_string_mode_is_named_in_the_artifacts(
    data: Path, given: dict[str, str], named: str
) -> None:
    output = run(CannedModel(), data=str(data), categories=["multiple"], **given)
    assert output.artifacts["string_match"] == named
    assert values(output)["tool_calls.accuracy"] == 1.0


def test_an_unknown_string_mode_is_refused() -> None:
    with pytest.raises(ValidationError, match="string_match"):
        ToolCallsParams(string_match="fuzzy")  # type: ignore[arg-type]


def test_no_parser_is_a_skip_that_says_so(data: Path) -> None:
    output = run(CannedModel(parser=None), data=str(data))
    assert output.skip_reason is not None
    assert "no tool parser" in output.skip_reason and "model's chat template" in output.skip_reason
    assert "chat_template: smollm2_tools" in output.skip_reason  # the fix, named
    assert values(output) == {"tool_calls.parser_inferred": 0.0}


def test_a_shipped_template_is_swapped_in(data: Path) -> None:
    output = run(CannedModel(parser=None), data=str(data), chat_template="smollm2_tools")
    assert output.artifacts["parser"] == "json_tools"
    assert len(output.artifacts["chat_template_sha256"]) == 64


def test_stream_mismatch_fails_the_case(data: Path) -> None:
    output = run(CannedModel(stream_differs=True), data=str(data))
    assert output.failures and "differ from non-streamed ones on 3 of 3" in output.failures[0]
    assert values(output)["tool_calls.stream_parity_share"] == 0.0
    relaxed = run(CannedModel(stream_differs=True), data=str(data), require_parity=False)
    assert not relaxed.failures


def test_a_model_without_tool_parsing_is_skipped_with_the_capability() -> None:
    """The preflight skips such a case before load; inside the worker the narrowing says the
    same (a case the preflight could not judge)."""
    output = run(FakeModel({}))
    assert output.skip_reason == "capability_missing: backend unknown has no tool parsing"
    assert output.metrics == ()


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"chat_template": "nope"}, "use one of: model, smollm2_tools"),
        ({"chat_template": "/no/such.jinja"}, "does not exist"),
        ({"categories": ["simpel"]}, "simple"),
        ({"categories": []}, "at least 1"),
        ({"max_tokens": 2}, "greater than or equal to 8"),
        ({"data": "bfcl:simple"}, "unknown BFCL category 'simple' in 'bfcl:simple'; use bfcl or"),
        ({"sample": "random"}, "'first' or 'spread'"),
    ],
)
def test_params_are_checked(params: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        ToolCallsParams(**params)


def _live(n: int) -> LiveSet:
    prompts = tuple(
        Prompt(f"simple/s{i}", Category.SIMPLE, ({"role": "user", "content": "q"},), (), (), "")
        for i in range(n)
    )
    return LiveSet(prompts, FewShot((), ()))


@pytest.mark.parametrize(
    ("n", "per_category", "sample", "chosen"),
    [
        (10, 3, "first", [0, 1, 2]),
        (10, 3, "spread", [0, 3, 6]),
        (10, 4, "spread", [0, 2, 5, 7]),
        (3, 5, "spread", [0, 1, 2]),
        (10, None, "spread", list(range(10))),
        (7, 7, "spread", list(range(7))),
    ],
)
def test_per_category_first_or_spread(
    n: int, per_category: int | None, sample: str, chosen: list[int]
) -> None:
    params = ToolCallsParams(per_category=per_category, sample=sample, categories=["simple"])
    assert [p.id for p in _select(_live(n), params)] == [f"simple/s{i}" for i in chosen]


class Silent(CannedModel):
    """Never calls a tool: right on irrelevance prompts only."""

    def stream_tokens(self, prompt: Sequence[int], *, max_tokens: int, **_: Any) -> Iterator[int]:
        yield from self.encode("I cannot help with that.")


def test_bfcl_data_by_category_stem(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`data: bfcl:<stems>` reads the imported BFCL folder (here: the committed excerpt,
    imported), only the files of the stems named."""
    from harness.toolcalls import bfcl_data
    from harness.toolcalls.bfcl_import import import_bfcl, write

    excerpt = Path(__file__).parents[1] / "toolcalls" / "data" / "bfcl"
    write(import_bfcl(excerpt, ["simple_python", "irrelevance", "live_simple"]), tmp_path)
    monkeypatch.setattr(bfcl_data, "ensure_imported", lambda: tmp_path)
    output = run(Silent(), data="bfcl:irrelevance,simple_python", fewshot=False)
    ids = [p["id"] for p in output.artifacts["prompts"]]
    assert ids and all(
        i.startswith(("irrelevance/irrelevance_", "simple/simple_python_")) for i in ids
    )
    got = values(output)
    assert got["tool_calls.accuracy_irrelevance"] == 1.0
    assert got["tool_calls.accuracy_simple"] == 0.0


# -- real models ---------------------------------------------------------------------------


def _case(path: Path, key: str, **params: Any) -> Any:
    return path_case(path, key, "tool_calls", ToolCallsParams(**params).model_dump())


@pytest.fixture(scope="module")
def zoo(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    from tests.zoo_shared import zoo_family

    return {name: zoo_family(tmp_path_factory, name) for name in ("qwen3", "gemma3_text")}


def test_through_the_worker_on_zoo_models(zoo: dict[str, Path], tmp_path: Path) -> None:
    from harness.core.types import Status
    from harness.runner.active_run import ActiveRun

    small = {"fewshot": False, "categories": ["simple", "parallel"], "per_category": 1}
    session = ActiveRun(tmp_path, [], run_id="r")
    try:
        qwen3 = session.run_case(_case(zoo["qwen3"], "qwen3", max_tokens=12, **small))
        gemma = session.run_case(_case(zoo["gemma3_text"], "gemma3", **small))
        swapped = session.run_case(
            _case(
                zoo["gemma3_text"], "gemma3", chat_template="smollm2_tools", max_tokens=8, **small
            )
        )
    finally:
        session.close_worker()
    assert qwen3.status is Status.PASSED, qwen3.reason
    assert qwen3.artifacts["parser"] == "json_tools"
    assert [r["id"] for r in qwen3.artifacts["prompts"]] == [
        "simple/weather-paris",
        "parallel/weather-two-cities",
    ]
    assert all(r["generated_tokens"] <= 12 for r in qwen3.artifacts["prompts"])
    prompts = qwen3.metric("tool_calls.prompts")
    assert prompts is not None and prompts.samples == (2.0,)
    assert gemma.status is Status.SKIPPED and "no tool parser" in (gemma.reason or "")
    assert swapped.status is Status.PASSED and swapped.artifacts["parser"] == "json_tools"


SMOLLM2 = "smollm2-135m-instruct-f32"


@pytest.mark.real_model
@pytest.mark.nightly  # a real model generating through every tool case: a minute
def test_smollm2_with_a_tool_template(tmp_path: Path) -> None:
    """The embedded SmolLM2 with the shipped Hermes-style template, through the worker (which
    preloads OpenBLAS on Linux): mlx-lm infers json_tools, every prompt gets a verdict, and
    streamed calls equal non-streamed ones."""
    from harness.core.types import Status
    from harness.models.cache_dir import models_dir
    from harness.runner.active_run import ActiveRun

    path = models_dir() / SMOLLM2
    if not (path / "config.json").is_file():
        pytest.skip(f"{SMOLLM2} is not prepared (mlx-harness models prepare {SMOLLM2})")
    params = {
        "chat_template": "smollm2_tools",
        "categories": ["simple", "parallel", "irrelevance"],
        "per_category": 1,
        "max_tokens": 64,
    }
    session = ActiveRun(tmp_path, [], run_id="r")
    try:
        result = session.run_case(_case(path, "smollm2", **params))
    finally:
        session.close_worker()
    assert result.status is Status.PASSED, result.reason
    got = {m.name: m.samples[0] for m in result.metrics}
    assert result.artifacts["parser"] == "json_tools"
    assert got["tool_calls.prompts"] == 3 and got["tool_calls.stream_parity_share"] == 1.0
    records = result.artifacts["prompts"]
    assert {r["category"] for r in records} == {"simple", "parallel", "irrelevance"}
    assert all(r["failure"] and r["generated_tokens"] > 0 for r in records)
    assert sum(r["has_markup"] for r in records) >= 1  # few-shot: SmolLM2 writes call markup
