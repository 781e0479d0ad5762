"""Corpus files: each problem is one line naming file:line, what is wrong and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.toolcalls.corpus import CorpusInvalid, load_corpus, parse_corpus

GOOD = {"id": "t/ok", "parser": "json_tools", "text": "hi", "expected": []}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "f",
            "parameters": {"type": "object", "properties": {"n": {"type": "integer"}}},
        },
    }
]


def line(**changes: object) -> str:
    case = {**GOOD, **changes}
    return json.dumps({k: v for k, v in case.items() if v is not ...})


GOOD_LINE = line()

# (corpus line, text every message for it must contain)
BAD = [
    ("not json", "not JSON"),
    ("[1, 2]", "a JSON list, not an object"),
    (line(bogus=1), "unknown field 'bogus'"),
    (line(expected=...), "missing field 'expected'"),
    (line(text=3), "text: Input should be a valid string"),
    (line(parser="nope"), "parser 'nope' is not a known format"),
    (line(expected=[{"name": "f", "arguments": []}]), "expected[0].arguments"),
    (line(expected=[{"arguments": {}}]), "missing field 'expected[0].name'"),
    (line(finish_reason="cut"), "finish_reason"),
    (line(starts_in_reasoning="yes"), "starts_in_reasoning: Input should be a valid boolean"),
    (line(known_broken={"reason": "x"}), "missing field 'known_broken[0].link'"),
    (line(known_broken={"reason": "x", "link": "y", "backends": ["gpu"]}), "backends[0]"),
    (
        line(tools=TOOLS, expected=[{"name": "f", "arguments": {"n": "1"}}]),
        "expected[0].arguments.n: '1' is not integer as the schema says",
    ),
    (line(tools=TOOLS, expected=[{"name": "g", "arguments": {}}]), "'g' is not among the tools"),
]


@pytest.mark.parametrize(("text", "needle"), BAD, ids=[n for _, n in BAD])
def test_each_problem_is_one_line_with_file_and_line(text: str, needle: str) -> None:
    cases, errors = parse_corpus(GOOD_LINE + "\n\n" + text + "\n", "c.jsonl")
    assert [c.id for c in cases] == ["t/ok"]
    assert errors, "the bad line must be reported"
    for error in errors:
        assert error.startswith("c.jsonl:3: "), error
        assert "\n" not in error and "Traceback" not in error
        assert "; " in error, f"no fix given: {error}"
    assert any(needle in e for e in errors), errors


def test_known_broken_accepts_one_object_or_a_list() -> None:
    one = line(known_broken={"reason": "r", "link": "l"})
    many = line(id="t/2", known_broken=[{"reason": "r", "link": "l", "backends": ["mlx_vlm"]}])
    cases, errors = parse_corpus(one + "\n" + many, "c.jsonl")
    assert errors == []
    assert cases[0].known_broken[0].backends is None
    assert [b.value for b in cases[1].known_broken[0].backends or ()] == ["mlx_vlm"]


def test_duplicate_ids_across_files_and_missing_paths(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(GOOD_LINE + "\n")
    (tmp_path / "b.jsonl").write_text(GOOD_LINE + "\n")
    with pytest.raises(CorpusInvalid) as raised:
        load_corpus([tmp_path])
    (error,) = raised.value.errors
    assert error.startswith(f"{tmp_path / 'b.jsonl'}:1: duplicate id 't/ok' (first at ")
    with pytest.raises(CorpusInvalid, match="no such file"):
        load_corpus([tmp_path / "missing.jsonl"])
