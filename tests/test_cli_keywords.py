"""``mlx-harness run -k`` is pytest's ``-k``: for each expression, the cases ``run`` chooses are
the items ``pytest --collect-only -k`` keeps on the same suite."""

from __future__ import annotations

import pytest

from harness.backends.fake import write_fake_model
from harness.cli.errors import CliError
from harness.cli.keywords import chosen
from harness.spec.loader import load_suite
from harness.spec.plan import plan

SUITE = """\
schema_version: 1
defaults: {repeats: 1, warmup: 0}
models:
  - {name: tiny, path: models/tiny, backend: fake, tags: [small]}
  - {name: big, path: models/big, backend: fake}
scenarios:
  - scenario: throughput
    sweep: {prompt_tokens: [16, 128]}
    params: {gen_tokens: 2}
  - scenario: load
"""

# (expression, the cases chosen: model::item)
TABLE = [
    ("tiny and 128", {"tiny::throughput[prompt_tokens=128]"}),
    ("tiny and not 128", {"tiny::throughput[prompt_tokens=16]", "tiny::load"}),
    (
        "load or 16",
        {
            "tiny::load",
            "big::load",
            "tiny::throughput[prompt_tokens=16]",
            "big::throughput[prompt_tokens=16]",
        },
    ),
    ("small and load", {"tiny::load"}),  # a tag is a mark: a keyword
    ("BIG and (load or 128)", {"big::load", "big::throughput[prompt_tokens=128]"}),
    ("nothing-has-this", set()),
]


@pytest.fixture
def suite(pytester: pytest.Pytester):  # type: ignore[no-untyped-def]
    for name in ("tiny", "big"):
        write_fake_model(pytester.path / "models" / name)
    return pytester.makefile(".suite.yaml", k=SUITE)


@pytest.mark.parametrize(("expression", "expected"), TABLE)
def test_run_k_chooses_what_pytest_k_keeps(
    pytester: pytest.Pytester,
    suite,
    expression: str,
    expected: set[str],  # type: ignore[no-untyped-def]
) -> None:
    cases = chosen(plan(load_suite(suite)), expression)
    got = {c.case_id.split("::", 1)[1] for c in cases}
    assert got == expected
    collected = pytester.runpytest(
        "-p", "no:cacheprovider", "--collect-only", "-q", "-k", expression
    )
    items = {
        line.split("::", 1)[1]
        for line in collected.stdout.lines
        if line.startswith("k.suite.yaml::")
    }
    assert items == got, collected.stdout.str()


def test_the_case_id_and_one_plain_word_still_choose_as_before(suite) -> None:  # type: ignore[no-untyped-def]
    cases = plan(load_suite(suite))
    assert [c.case_id for c in chosen(cases, "::tiny::load")] == ["k::tiny::load"]
    assert [c.case_id for c in chosen(cases, "tiny::lo@")] == []  # no expression: a substring
    assert [c.case_id for c in chosen(cases, "k::big::lo")] == ["k::big::load"]


def test_a_malformed_expression_is_one_line() -> None:
    with pytest.raises(CliError, match=r"-k 'tiny and': .*; write e.g."):
        chosen([], "tiny and")
