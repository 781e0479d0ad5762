"""Tags become pytest markers: the schema refuses the tags pytest cannot take, and every marker
name the plugin makes is one pytest accepts and ``-m`` can select."""

from __future__ import annotations

from pathlib import Path

import pytest
from _pytest.mark.expression import Expression
from _pytest.mark.structures import MarkGenerator

from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.marker_names import marker_name, tag_problem

# (tag, its marker)
GOOD_TAGS = [
    ("zoo", "zoo"),
    ("tiny", "tiny"),
    ("4bit", "4bit"),
    ("sliding-window", "sliding_window"),
    ("v1.2", "v1_2"),
    ("café", "café"),
    ("not_really", "not_really"),
    ("skip_me", "skip_me"),
]
# (tag, fragment of the problem)
BAD_TAGS = [
    ("_private", "must start with a letter or digit"),
    ("", "must start with a letter or digit"),
    ("-fast", "must start with a letter or digit"),
    (" spaced", "must start with a letter or digit"),
    ("not", "operator in pytest -m"),
    ("and", "operator in pytest -m"),
    ("or", "operator in pytest -m"),
    ("skip", "built-in pytest marker"),
    ("xfail", "built-in pytest marker"),
    ("skipif", "built-in pytest marker"),
    ("parametrize", "built-in pytest marker"),
    ("usefixtures", "built-in pytest marker"),
    ("filterwarnings", "built-in pytest marker"),
    ("harness_case", "built-in pytest marker"),
]


def _selectable(name: str) -> bool:
    """pytest takes ``name`` as a marker, and ``-m name`` selects exactly that marker."""
    getattr(MarkGenerator(_ispytest=True), name)  # raises for names pytest refuses
    return Expression.compile(name).evaluate(lambda candidate, **_: candidate == name)


@pytest.mark.parametrize(("tag", "marker"), GOOD_TAGS)
def test_good_tags_are_their_own_selectable_markers(tag: str, marker: str) -> None:
    assert tag_problem(tag) is None
    assert marker_name(tag) == marker
    assert _selectable(marker)


@pytest.mark.parametrize(("tag", "fragment"), BAD_TAGS)
def test_bad_tags_are_refused_with_a_fix(tag: str, fragment: str) -> None:
    problem = tag_problem(tag)
    assert problem is not None
    assert fragment in problem[0]
    assert problem[1].startswith(("e.g. ", "rename it, e.g. "))


@pytest.mark.parametrize(
    "text", [tag for tag, _ in BAD_TAGS] + ["__", "-", "a:b(c)", "\x1b[31m", "mlx_lm", "load"]
)
def test_marker_name_is_always_one_pytest_takes(text: str) -> None:
    name = marker_name(text)
    assert name and not name.startswith("_")
    assert _selectable(name)


def test_pytest_refuses_what_the_schema_refuses() -> None:
    """The rule mirrors pytest: a name starting with _ is refused by pytest itself."""
    for tag, _ in BAD_TAGS[:1]:
        with pytest.raises(AttributeError, match="underscore"):
            getattr(MarkGenerator(_ispytest=True), tag)
    with pytest.raises(SyntaxError):
        Expression.compile("not")


def test_a_suite_tag_error_points_at_the_tag(tmp_path: Path) -> None:
    path = tmp_path / "t.suite.yaml"
    path.write_text(
        "schema_version: 1\nmodels:\n  - embedded: zoo/llama\n    tags: [zoo, _private]\n"
        "scenarios:\n  - scenario: load\n"
    )
    with pytest.raises(SuiteInvalid) as info:
        load_suite(path)
    assert [str(e) for e in info.value.errors] == [
        f"{path}:4:17: models.0.tags.1: tag '_private' must start with a letter or digit "
        "(pytest refuses marker names that are empty or start with _); e.g. private"
    ]
