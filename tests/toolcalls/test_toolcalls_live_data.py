"""Live prompt files: the shipped set loads; every problem is one file:line:column line."""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from harness.toolcalls import shipped
from harness.toolcalls.live import Category
from harness.toolcalls.live_data import LiveDataInvalid, load_live
from harness.toolcalls.schema import function_schema

TOOLS = """\
tools:
  - name: get_weather
    parameters:
      type: object
      properties:
        city: {type: string}
        days: {type: integer}
      required: [city]
  - name: get_time
    parameters: {type: object, properties: {zone: {type: string}}, required: [zone]}
  - name: ping
"""
FEWSHOT = """\
tools: [ping]
examples:
  - user: ping
    calls: [{name: ping}]
  - user: hi
    answer: hello
"""
GOOD = """\
category: simple
prompts:
  - id: paris
    question: Weather in Paris?
    tools: [get_weather]
    expected:
      - name: get_weather
        arguments: {city: [Paris]}
        optional: {days: [1]}
"""


def write(root: Path, prompts: str, tools: str = TOOLS, fewshot: str = FEWSHOT) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "tools.yaml").write_text(tools)
    (root / "fewshot.yaml").write_text(fewshot)
    (root / "prompts.yaml").write_text(prompts)
    return root


def test_shipped_set_has_every_category_and_twenty_prompts() -> None:
    live = load_live(shipped.live_dir())
    counts = Counter(p.category for p in live.prompts)
    assert set(counts) == set(Category)
    assert len(live.prompts) >= 20
    assert all(counts[c] >= 4 for c in Category)
    names = {t["function"]["name"] for t in live.fewshot.tools}
    assert names and all(m["role"] in ("user", "assistant") for m in live.fewshot.messages)
    for prompt in live.prompts:  # few-shot tools never appear in a prompt
        assert not names & {t["function"]["name"] for t in prompt.tools}
        for call in prompt.expected:
            assert function_schema(call.name, prompt.tools) is not None


def test_a_good_file_loads(tmp_path: Path) -> None:
    live = load_live(write(tmp_path, GOOD))
    (prompt,) = live.prompts
    assert prompt.id == "simple/paris" and prompt.category is Category.SIMPLE
    assert prompt.source.endswith("prompts.yaml:3:5")
    assert prompt.expected[0].arguments == {"city": ("Paris",)}
    assert prompt.expected[0].optional == {"days": (1,)}
    assert prompt.messages == ({"role": "user", "content": "Weather in Paris?"},)
    assert live.fewshot.messages[1]["tool_calls"][0]["function"] == {
        "name": "ping",
        "arguments": {},
    }
    assert live.fewshot.messages[3] == {"role": "assistant", "content": "hello"}


BAD = [
    (
        GOOD.replace("tools: [get_weather]", "tools: [get_wether]"),
        "prompts.yaml:5:12",
        "get_wether",
    ),
    (GOOD.replace("city: [Paris]", "city: [3]"), "prompts.yaml:7:9", "3 is not string"),
    (GOOD.replace("days: [1]", "days: [one]"), "prompts.yaml:7:9", "'one' is not integer"),
    (
        GOOD.replace("arguments: {city: [Paris]}", "arguments: {}"),
        ":7:",
        "schema-required ['city']",
    ),
    (GOOD.replace("optional: {days: [1]}", "optional: {hours: [1]}"), ":7:", "hours: not a param"),
    (GOOD.replace("question:", "questoin:"), "prompts.yaml:4:5", "unknown key"),
    (GOOD.replace("category: simple", "category: simpel"), "prompts.yaml:1:11", "category"),
    (GOOD.replace("tools: [get_weather]", "tools: [get_weather, ping]"), ":5:", "few-shot"),
    (GOOD.replace("category: simple", "category: parallel"), ":7:", "two or more calls"),
    (GOOD.replace("category: simple", "category: irrelevance"), ":7:", "no expected call"),
    (GOOD + GOOD.split("prompts:\n")[1], "prompts.yaml:10:5", "duplicate id 'simple/paris'"),
    ("category: simple\nprompts: [\n", "prompts.yaml:", "invalid YAML"),
]


@pytest.mark.parametrize(("text", "where", "what"), BAD)
def test_errors_are_one_line_with_a_position(
    tmp_path: Path, text: str, where: str, what: str
) -> None:
    with pytest.raises(LiveDataInvalid) as caught:
        load_live(write(tmp_path, text))
    assert any(where in e and what in e for e in caught.value.errors), caught.value.errors
    assert all("\n" not in e for e in caught.value.errors)


def test_fewshot_example_needs_calls_or_an_answer(tmp_path: Path) -> None:
    fewshot = FEWSHOT.replace("    answer: hello\n", "")
    with pytest.raises(LiveDataInvalid, match=r"fewshot.yaml:5:5: give either 'calls' or 'answer'"):
        load_live(write(tmp_path, GOOD, fewshot=fewshot))


def test_missing_directory(tmp_path: Path) -> None:
    with pytest.raises(LiveDataInvalid, match="no such directory"):
        load_live(tmp_path / "nope")


def test_shipped_copy_with_a_broken_catalogue_names_the_tool(tmp_path: Path) -> None:
    copy = tmp_path / "live"
    shutil.copytree(shipped.live_dir(), copy)
    text = (copy / "tools.yaml").read_text().replace("name: get_population", "name: population")
    (copy / "tools.yaml").write_text(text)
    with pytest.raises(LiveDataInvalid) as caught:
        load_live(copy)
    assert any("get_population" in e and "unknown tool" in e for e in caught.value.errors)
