"""The known-broken ledger: matching by name, family and backend, the shipped ledger file,
strict XPASS as "fixed upstream, remove entry", overdue re-check dates (today passed in),
and what the run record and the report keep of it."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.core.types import (
    Case,
    Expectation,
    ExpectKind,
    LedgerEntry,
    ModelRef,
    ModelSource,
    RunRecord,
    Status,
    SuiteInfo,
)
from harness.report import render_markdown
from harness.report.ledger import build as build_ledger
from harness.results.store import RunWriter, load_run
from harness.runner.judge import judge
from harness.runner.machine import machine
from harness.spec.ledger import expectation_for, is_overdue, overdue_warnings
from harness.spec.loader import SourcedExpect, load_suite
from harness.spec.plan import plan, suite_info
from harness.spec.schema import ExpectEntry, IncludeFile
from tests.report.report_fixtures import case as case_result
from tests.report.report_fixtures import make_run

SUITES = Path(__file__).resolve().parents[2] / "suites"

LEDGER = [
    {"family": "llava", "backend": "mlx_vlm", "scenario": ["throughput", "prompt_cache*"]},
    {"model": "zoo-*", "scenario": "load"},
    {"family": "qwen*"},
    {"model": "exact", "backend": "fake"},
]

# (model, scenario, family, backend) -> index of the entry that wins, or None
MATCHES = [
    (("zoo/llava", "throughput", "llava", "mlx_vlm"), 0),
    (("zoo/llava", "prompt_cache_lru", "llava", "mlx_vlm"), 0),
    (("zoo/llava", "load", "llava", "mlx_vlm"), None),  # it loads; generating fails
    (("zoo/llava", "throughput", "llava", "mlx_lm"), None),
    (("mine", "throughput", None, "mlx_vlm"), None),  # family unknown: no family entry matches
    (("zoo-qwen3", "load", "qwen3", "mlx_lm"), 1),  # first match wins
    (("zoo-qwen3", "throughput", "qwen3", "mlx_lm"), 2),
    (("exact", "load", None, "fake"), 3),
    (("exact", "load", None, "mlx_lm"), None),
]


def _ledger() -> list[SourcedExpect]:
    return [
        SourcedExpect(
            ExpectEntry.model_validate({**fields, "status": "xfail", "reason": f"r{i}"}),
            Path("kb.yaml"),
            i + 1,
            5,
        )
        for i, fields in enumerate(LEDGER)
    ]


@pytest.mark.parametrize(("case", "winner"), MATCHES, ids=[str(m[0]) for m in MATCHES])
def test_entries_match_by_name_scenario_family_and_backend(
    case: tuple[str, str, str | None, str], winner: int | None
) -> None:
    model, scenario, family, backend = case
    found = expectation_for(
        _ledger(), model=model, scenario=scenario, family=family, backend=backend, installed={}
    )
    if winner is None:
        assert found is None
    else:
        assert found is not None
        assert found.reason == f"r{winner}" and found.source == f"kb.yaml:{winner + 1}"


# versions: {package: specifier} -> installed versions (normalised names) -> does it match
VERSION_MATCHES = [
    ({"transformers": ">=5.24"}, {"transformers": "5.24.0"}, True),
    ({"transformers": ">=5.24"}, {"transformers": "5.23.0"}, False),
    ({"transformers": ">=5.24"}, {}, False),  # not installed: never matches
    ({"transformers": ">=5.24"}, {"transformers": "5.25.0rc1"}, True),  # pre-releases count
    ({"transformers": ">=5.24", "mlx-vlm": "<=0.7.10"}, {"transformers": "5.24.0"}, False),
    (
        {"transformers": ">=5.24", "mlx_vlm": "<=0.7.10"},  # names normalised (PEP 503)
        {"transformers": "5.24.0", "mlx-vlm": "0.7.10"},
        True,
    ),
    (
        {"transformers": ">=5.24", "mlx-vlm": "<=0.7.10"},
        {"transformers": "5.24.0", "mlx-vlm": "0.7.11"},  # fixed upstream: the entry stops
        False,
    ),
    ({"Mlx-LM": "==0.32.*"}, {"mlx-lm": "0.32.2"}, True),
    ({}, {}, True),  # no versions: any environment
]


@pytest.mark.parametrize(("versions", "installed", "matches"), VERSION_MATCHES)
def test_entries_match_by_installed_versions(
    versions: dict[str, str], installed: dict[str, str], matches: bool
) -> None:
    entry = ExpectEntry.model_validate(
        {"family": "moondream2", "versions": versions, "status": "xfail", "reason": "upstream"}
    )
    sourced = [SourcedExpect(entry, Path("kb.yaml"), 1, 5)]
    found = expectation_for(
        sourced,
        model="zoo/moondream2",
        scenario="vision_describe",
        family="moondream2",
        backend="mlx_vlm",
        installed=installed,
    )
    assert (found is not None) is matches


@pytest.mark.parametrize(
    ("case_checks", "first"),
    [
        (["seed", "continuation"], "known 1215"),  # the case runs the named check
        (["seed"], "the case's own"),  # it does not: the entry never takes the case's place
        (None, "the case's own"),
    ],
)
def test_an_entry_naming_checks_matches_only_cases_that_run_them(
    case_checks: list[str] | None, first: str
) -> None:
    named = ExpectEntry.model_validate(
        {"checks": ["continuation"], "status": "xfail", "reason": "known 1215"}
    )
    own = ExpectEntry.model_validate(
        {"scenario": "bug_*", "status": "xfail", "reason": "the case's own"}
    )
    sourced = [SourcedExpect(e, Path("kb.yaml"), i, 5) for i, e in enumerate((named, own))]
    found = expectation_for(
        sourced,
        model="m@mlx_lm.server",
        scenario="api_contracts",
        family=None,
        backend="http",
        installed={},
        entry_id="bug_batch_kv",
        checks=case_checks,
    )
    assert found is not None and found.reason == first


def test_checks_are_for_an_xfail_entry() -> None:
    with pytest.raises(ValueError, match="'checks' is for an xfail entry"):
        ExpectEntry.model_validate({"checks": ["seed"], "status": "skip", "reason": "r"})


@pytest.mark.parametrize(
    ("versions", "message"),
    [
        ({"transformers": "5.24"}, "'5.24' is not a version specifier"),
        ({"transformers": ""}, "give a specifier such as '>=5.24'"),
        ({"not a name": ">=1"}, "'not a name' is not a package name"),
    ],
)
def test_a_bad_versions_entry_is_one_line_with_the_fix(
    tmp_path: Path, versions: dict[str, str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    import yaml

    suite = tmp_path / "kb.suite.yaml"
    suite.write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "models": [{"name": "m", "embedded": "zoo/llama"}],
                "scenarios": [{"scenario": "load"}],
                "expect": [{"model": "m", "versions": versions, "status": "xfail", "reason": "r"}],
            }
        )
    )
    assert main(["validate", str(suite)]) != 0
    err = capsys.readouterr()
    lines = [ln for ln in (err.out + err.err).splitlines() if message in ln]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"{suite}:") and 'versions: {transformers: ">=5.24"' in lines[0]
    assert "Traceback" not in err.out + err.err


@pytest.mark.parametrize(
    ("recheck", "today", "overdue"),
    [
        (None, dt.date(2030, 1, 1), False),
        (dt.date(2026, 11, 21), dt.date(2026, 11, 22), True),
        (dt.date(2026, 11, 22), dt.date(2026, 11, 22), False),
        ("2026-01-01", dt.date(2026, 11, 22), True),
        ("2027-01-01", dt.date(2026, 11, 22), False),
        ("soon", dt.date(2026, 11, 22), False),
    ],
)
def test_overdue_is_strictly_after_the_recheck_day(
    recheck: dt.date | str | None, today: dt.date, overdue: bool
) -> None:
    assert is_overdue(recheck, today) is overdue


def test_the_shipped_ledger_starts_with_the_llava_finding() -> None:
    import yaml

    path = SUITES / "known_broken.yaml"
    first = IncludeFile.model_validate(yaml.safe_load(path.read_text())).expect[0]
    assert (first.family, first.backend, first.status, first.strict) == (
        "llava",
        "mlx_vlm",
        "xfail",
        True,
    )
    # text generation works through mlx-vlm; a turn with an image fails
    assert "load" not in first.scenario and "throughput" not in first.scenario
    assert "vision_*" in first.scenario
    assert "ImagesKwargs.__init__() got an unexpected keyword argument 'padding'" in first.reason
    assert first.link and first.link.startswith("https://github.com/Blaizzy/mlx-vlm/")
    assert first.recheck is not None
    for suite in ("smoke", "models", "prompt_cache"):
        loaded = load_suite(SUITES / f"{suite}.suite.yaml")
        assert loaded.expect[0].entry == first
        assert loaded.expect[0].source == f"{path}:9"


FAMILY_SUITE = """\
schema_version: 1
defaults: {{repeats: 1, warmup: 0}}
include: [ledger.yaml]
models:
  - {{name: plain, path: {plain}, backend: fake}}
  - {{name: vision, path: {vision}, backend: fake}}
scenarios:
  - scenario: load
  - scenario: throughput
    params: {{gen_tokens: 2}}
"""

LEDGER_FILE = """\
expect:
  - family: llava
    scenario: [throughput]
    status: xfail
    reason: padding bug
    link: https://example.invalid/870
    recheck: {recheck}
  - {{model: plain, scenario: load, status: skip, reason: not today}}
"""


def _family_suite(write_suite, tmp_path: Path, recheck: str = "2999-01-01") -> Path:  # type: ignore[no-untyped-def]
    from harness.backends.fake import write_fake_model

    plain = write_fake_model(tmp_path / "plain")
    vision = write_fake_model(tmp_path / "vision")
    (vision / "config.json").write_text(json.dumps({"model_type": "llava"}))
    (tmp_path / "ledger.yaml").write_text(LEDGER_FILE.format(recheck=recheck))
    return write_suite(FAMILY_SUITE.format(plain=plain, vision=vision))


def test_family_entries_match_through_the_probe(write_suite, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    loaded = load_suite(_family_suite(write_suite, tmp_path))
    cases = plan(loaded)
    marked = {c.case_id: c.expectation for c in cases if c.expectation}
    assert set(marked) == {"t::plain::load", "t::vision::throughput"}
    vision = marked["t::vision::throughput"]
    assert vision is not None and vision.kind is ExpectKind.XFAIL and vision.strict
    assert vision.source == f"{(tmp_path / 'ledger.yaml').resolve()}:2"
    info = suite_info(loaded, cases)
    assert [(e.family, e.cases) for e in info.ledger] == [
        ("llava", ("t::vision::throughput",)),
        (None, ("t::plain::load",)),
    ]
    record = RunWriter(tmp_path / "r" / "run.jsonl")  # through the run record and back
    record.start(
        run_id="r",
        started_at="t",
        machine=machine("none"),
        packages={},
        git_sha=None,
        suites=[info],
    )
    record.close()
    assert load_run(tmp_path / "r").suites == (info,)


def test_overdue_entries_warn_in_validate(  # type: ignore[no-untyped-def]
    write_suite, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _family_suite(write_suite, tmp_path, recheck="2026-01-01")
    loaded = load_suite(suite)
    assert overdue_warnings(loaded, dt.date(2026, 1, 1)) == []
    (warning,) = overdue_warnings(loaded, dt.date(2026, 1, 2))
    ledger = (tmp_path / "ledger.yaml").resolve()
    assert str(warning) == (
        f"{ledger}:2:5: warning: known-broken entry (family llava, scenario throughput) is past "
        "its recheck date 2026-01-01: padding bug; run it without the entry; if it passes "
        "remove the entry, else move 'recheck:'"
    )
    assert main(["validate", str(suite)]) == 0  # a warning, not a failure (today is later)
    assert f"{ledger}:2:5: warning: known-broken entry" in capsys.readouterr().err


def _case(expectation: Expectation | None) -> Case:
    ref = ModelRef("m", ModelSource.PATH, "m", "fake")
    return Case("s::m::load", "s", "s.suite.yaml", ref, "load", {}, expectation=expectation)


@pytest.mark.parametrize(
    ("strict", "status", "expected", "fragment"),
    [
        (True, Status.PASSED, Status.XPASSED, "XPASS: fixed upstream, remove entry kb.yaml:9"),
        (False, Status.PASSED, Status.PASSED, None),
        (True, Status.CRASHED, Status.XFAILED, "known: padding bug (got crashed: boom)"),
    ],
)
def test_a_strict_entry_that_passes_says_remove_it(
    strict: bool, status: Status, expected: Status, fragment: str | None
) -> None:
    exp = Expectation(ExpectKind.XFAIL, "padding bug", strict=strict, source="kb.yaml:9")
    got, _gates, reason = judge(
        _case(exp), status, (), "boom" if status is not Status.PASSED else None, {}
    )
    assert got is expected
    if fragment is None:
        assert reason is None
    else:
        assert reason is not None and reason.startswith(fragment)


def _entry(**fields: Any) -> LedgerEntry:
    return LedgerEntry(
        **{"source": "/x/known_broken.yaml:9", "status": ExpectKind.XFAIL, "reason": "r", **fields}
    )


def _run_with_ledger(*ledgers: tuple[LedgerEntry, ...]) -> RunRecord:
    run = make_run(
        [
            case_result("vision", "throughput", Status.XPASSED, reason="XPASS: fixed upstream"),
            case_result("vision", "prompt_cache", Status.XFAILED, reason="known: r"),
        ]
    )
    suites = tuple(
        SuiteInfo(f"s{i}", f"s{i}.yaml", "0" * 64, ledger=lg) for i, lg in enumerate(ledgers)
    )
    return RunRecord(**{**run.__dict__, "suites": suites})


def test_report_section_flags_overdue_and_fixed_entries() -> None:
    fixed = _entry(family="llava", recheck="2024-12-31", cases=("smoke::vision::throughput",))
    xfailed = _entry(
        source="/x/kb.yaml:20", recheck="2025-01-01", cases=("smoke::vision::prompt_cache",)
    )
    unused = _entry(source="/x/kb.yaml:30", status=ExpectKind.SKIP, strict=False)
    # a second suite including the same ledger file: merged by source, cases united
    again = _entry(family="llava", recheck="2024-12-31", cases=("smoke::vision::throughput",))
    ledger = build_ledger(_run_with_ledger((fixed, xfailed, unused), (again,)))
    assert ledger is not None
    assert (ledger.entries, ledger.overdue, ledger.fixed) == (3, 1, 1)  # run started 2025-01-01
    rows = {row[0].text: row for row in ledger.table.rows}
    assert rows["known_broken.yaml:9"][4].note == "overdue: re-check it"
    assert rows["known_broken.yaml:9"][5].note == "fixed upstream, remove entry"
    assert rows["kb.yaml:20"][4].note is None
    assert rows["kb.yaml:20"][5].text == "⚠ 1 xfailed"
    assert rows["kb.yaml:30"][5].text == "no case matched"
    assert [c.text for c in rows["known_broken.yaml:9"][1:3]] == [
        "family llava, scenario *",
        "xfail (strict)",
    ]
    assert build_ledger(_run_with_ledger(())) is None
    md = render_markdown(_run_with_ledger((fixed,)))
    assert "## Known-broken ledger" in md and "fixed upstream, remove entry" in md


def test_suite_warnings_show_in_the_report_summary() -> None:
    run = make_run([])
    warned = SuiteInfo(
        "s", "s.yaml", "0" * 64, warnings=("s.yaml:3:5: warning: selector chose none",)
    )
    md = render_markdown(RunRecord(**{**run.__dict__, "suites": (warned,)}))
    assert "⚠ suite:** s.yaml:3:5: warning: selector chose none" in md
