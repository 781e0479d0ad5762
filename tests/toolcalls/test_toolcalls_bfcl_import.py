"""BFCL import: a committed excerpt (tests/toolcalls/data/bfcl) into live prompt files, loaded
and scored; the whole pinned bfcl-eval wheel too (fetched into the cache by `make test`)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.cli.toolcalls import add_parser
from harness.toolcalls.bfcl_import import (
    BfclImportError,
    convert_schema,
    expand,
    import_bfcl,
    write,
)
from harness.toolcalls.classify import CallFailure
from harness.toolcalls.live import Category
from harness.toolcalls.live_data import load_live
from harness.toolcalls.match import score
from harness.toolcalls.model import Extraction, ToolCall

OK = CallFailure.OK
DATA = Path(__file__).parent / "data" / "bfcl"
STEMS = [
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_irrelevance",
]


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Any:
    out = tmp_path_factory.mktemp("bfcl")
    write(import_bfcl(DATA, STEMS), out)
    return {p.id: p for p in load_live(out).prompts}


@pytest.mark.parametrize(
    ("bfcl_type", "json_schema"),
    [
        ({"type": "dict", "properties": {}}, {"type": "object", "properties": {}}),
        ({"type": "float"}, {"type": "number"}),
        (
            {"type": "tuple", "items": {"type": "float"}},
            {"type": "array", "items": {"type": "number"}},
        ),
        ({"type": "any", "description": "x"}, {"description": "x"}),
        ({"type": "integer"}, {"type": "integer"}),
        ({"type": "string", "enum": ["a"]}, {"type": "string", "enum": ["a"]}),
        ({"type": "boolean"}, {"type": "boolean"}),
        (
            {"type": "array", "items": {"type": "dict"}},
            {"type": "array", "items": {"type": "object"}},
        ),
        (
            {
                "type": "dict",
                "properties": {"p": {"type": "dict", "properties": {"q": {"type": "float"}}}},
            },
            {
                "type": "object",
                "properties": {"p": {"type": "object", "properties": {"q": {"type": "number"}}}},
            },
        ),
    ],
)
def test_types_become_json_schema(bfcl_type: Any, json_schema: Any) -> None:
    assert convert_schema(bfcl_type) == json_schema


@pytest.mark.parametrize(
    ("answer", "values"),
    [
        (5, [5]),
        ({"a": [1, 2], "b": ["x"]}, [{"a": 1, "b": "x"}, {"a": 2, "b": "x"}]),
        ({"a": [1], "b": ["x", ""]}, [{"a": 1, "b": "x"}, {"a": 1}]),
        ({"a": [{"b": [1, 2]}]}, [{"a": {"b": 1}}, {"a": {"b": 2}}]),
        ([{"a": [1]}, {"a": [2, 3]}], [[{"a": 1}, {"a": 2}], [{"a": 1}, {"a": 3}]]),
        ([1, 2], [[1, 2]]),
    ],
)
def test_nested_answers_expand_to_whole_values(answer: Any, values: list[Any]) -> None:
    assert expand(answer) == values


@pytest.mark.parametrize(
    ("prompt_id", "category", "tools", "expected"),
    [
        (
            "simple/simple_python_0",
            Category.SIMPLE,
            1,
            [("calculate_triangle_area", {"base": (10,), "height": (5,)}, {"unit": ("units",)})],
        ),
        ("simple/simple_python_1", Category.SIMPLE, 1, [("math.factorial", {"number": (5,)}, {})]),
        (
            "simple/simple_python_89",
            Category.SIMPLE,
            1,
            [
                (
                    "db_fetch_records",
                    {
                        "database_name": ("StudentDB",),
                        "table_name": ("students",),
                        "conditions": (
                            {"department": "Science", "school": "Bluebird High School"},
                            {"department": "Science", "school": "Bluebird HS"},
                        ),
                    },
                    {"fetch_limit": (0,)},
                )
            ],
        ),
        (
            "multiple/multiple_8",
            Category.MULTIPLE,
            2,
            [
                (
                    "realestate.find_properties",
                    {
                        "location": ("SD", "San Diego", "San Diego, CA", "CA"),
                        "propertyType": ("villa",),
                        "bedrooms": (3,),
                        "budget": ({"min": 300000, "max": 400000},),
                    },
                    {},
                )
            ],
        ),
        (
            "parallel/parallel_0",
            Category.PARALLEL,
            1,
            [
                ("spotify.play", {"artist": ("Taylor Swift",), "duration": (20,)}, {}),
                ("spotify.play", {"artist": ("Maroon 5",), "duration": (15,)}, {}),
            ],
        ),
        (
            "parallel_multiple/parallel_multiple_0",
            Category.PARALLEL_MULTIPLE,
            2,
            [
                (
                    "math_toolkit.sum_of_multiples",
                    {"lower_limit": (1,), "upper_limit": (1000,), "multiples": ([3, 5],)},
                    {},
                ),
                ("math_toolkit.product_of_primes", {"count": (5,)}, {}),
            ],
        ),
        ("irrelevance/irrelevance_0", Category.IRRELEVANCE, 1, []),
        (
            "simple/live_simple_0-0-0",
            Category.SIMPLE,
            1,
            [("get_user_info", {"user_id": (7890,), "special": ("black",)}, {})],
        ),
        ("irrelevance/live_irrelevance_0-0-0", Category.IRRELEVANCE, 1, []),
    ],
)
def test_excerpt_imports_as_live_prompts(
    live: Any, prompt_id: str, category: Category, tools: int, expected: list[Any]
) -> None:
    prompt = live[prompt_id]
    assert prompt.category is category
    assert len(prompt.tools) == tools
    assert [(e.name, dict(e.arguments), dict(e.optional)) for e in prompt.expected] == expected


def test_types_reach_the_loaded_tools(live: Any) -> None:
    params = live["irrelevance/irrelevance_0"].tools[0]["function"]["parameters"]
    assert params["type"] == "object"
    assert params["properties"]["weight"]["type"] == "number"


@pytest.mark.parametrize(
    ("file", "entry", "reason"),
    [
        (
            "simple_python",
            "simple_python_307",
            "game_result.get_winner.venue: answer True is not string",
        ),
        ("parallel", "parallel_152", "math.power.mod: answer None is not number"),
        ("live_simple", "live_simple_30-8-0", "answer None is not string"),
        ("live_irrelevance", "live_irrelevance_132-11-7", "messages user+assistant+user"),
    ],
)
def test_entries_we_cannot_take_are_listed_with_a_reason(
    file: str, entry: str, reason: str
) -> None:
    skipped = {s.id: s for s in import_bfcl(DATA, STEMS).skipped}
    assert skipped[entry].file == file
    assert reason in skipped[entry].reason


def test_counts_and_skipped_file(tmp_path: Path) -> None:
    imported = import_bfcl(DATA, STEMS)
    assert {s: imported.count(s) for s in STEMS} == {
        "simple_python": 3,
        "multiple": 2,
        "parallel": 2,
        "parallel_multiple": 2,
        "irrelevance": 2,
        "live_simple": 1,
        "live_irrelevance": 1,
    }
    assert len(imported.skipped) == 4
    write(imported, tmp_path)
    lines = (tmp_path / "skipped.txt").read_text().splitlines()
    assert len(lines) == 4 and all(len(line.split("\t")) == 3 for line in lines)


@pytest.mark.parametrize(
    ("prompt_id", "calls", "failure"),
    [
        ("simple/simple_python_0", [("calculate_triangle_area", {"base": 10, "height": 5})], OK),
        (
            "simple/simple_python_0",
            [("calculate_triangle_area", {"base": 10, "height": 5, "unit": "units"})],
            OK,
        ),
        ("simple/simple_python_1", [("math.factorial", {"number": 5.0})], CallFailure.WRONG_TYPE),
        (
            "simple/simple_python_89",
            [
                (
                    "db_fetch_records",
                    {
                        "database_name": "StudentDB",
                        "table_name": "students",
                        "conditions": {"department": "Science", "school": "Bluebird HS"},
                    },
                )
            ],
            OK,
        ),
        (
            "parallel/parallel_0",
            [
                ("spotify.play", {"artist": "Maroon 5", "duration": 15}),
                ("spotify.play", {"artist": "Taylor Swift", "duration": 20}),
            ],
            OK,
        ),
        ("irrelevance/irrelevance_0", [], OK),
    ],
)
def test_imported_prompts_score(
    live: Any, prompt_id: str, calls: list[Any], failure: CallFailure
) -> None:
    prompt = live[prompt_id]
    got = Extraction(tuple(ToolCall(n, a) for n, a in calls), "")
    verdict = score(prompt.expected, got, tools=prompt.tools)
    assert verdict.failure is failure, verdict


def test_bad_source_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(BfclImportError, match="no such file or directory"):
        import_bfcl(tmp_path / "nope")
    with pytest.raises(BfclImportError, match=r"no BFCL_v4_multiple\.json"):
        import_bfcl(tmp_path, ["multiple"])
    with pytest.raises(BfclImportError, match="unknown BFCL category 'web_search'"):
        import_bfcl(DATA, ["web_search"])


def test_cli_import(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    parser = argparse.ArgumentParser(prog="mlx-harness")
    add_parser(parser.add_subparsers(dest="command", required=True))
    out = tmp_path / "out"
    args = parser.parse_args(
        ["toolcalls", "import-bfcl", str(DATA), "--out", str(out), "--categories", *STEMS]
    )
    assert args.func(args) == 0
    printed = capsys.readouterr().out
    assert "simple_python: 3 imported, 1 skipped" in printed
    assert len(load_live(out).prompts) == 13
    assert main(["toolcalls", "import-bfcl", str(tmp_path / "x"), "--out", str(out)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.fixture(scope="module")
def wheel() -> Path:
    from harness.models.fetch import FetchError
    from harness.toolcalls.bfcl_data import fetch_bfcl

    try:
        return fetch_bfcl()  # the pinned bfcl-eval wheel's files; `make test` fetched them
    except FetchError as exc:  # only where PyPI cannot be reached
        pytest.skip(f"bfcl-eval wheel not available: {exc}")


@pytest.mark.nightly  # the whole wheel, a minute; the excerpt tests cover each path
def test_whole_wheel_imports_and_loads(wheel: Path, tmp_path: Path) -> None:
    """The pinned wheel (sha256-checked), so the counts are exact: a change in what the
    importer takes or leaves shows here."""
    imported = import_bfcl(wheel)
    counts = {stem: imported.count(stem) for stem in imported.files}
    assert counts == {
        "simple_python": 398,
        "multiple": 200,
        "parallel": 199,
        "parallel_multiple": 196,
        "irrelevance": 240,
        "live_simple": 237,
        "live_multiple": 939,
        "live_parallel": 16,
        "live_parallel_multiple": 21,
        "live_irrelevance": 867,
    }
    assert len(imported.skipped) == 162
    assert all(s.reason and "\n" not in s.reason for s in imported.skipped)
    write(imported, tmp_path)
    assert len(load_live(tmp_path).prompts) == sum(counts.values())
