"""The exit rules through both drivers, on fake-backend models: each outcome kind x driver ->
exit status, with the policy's line on the terminal. ``mlx-harness run`` and pytest (pytester)
in process; the workers are real processes either way."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from tests.quick_subset import quick_subset

ROOT = Path(__file__).resolve().parents[1]


def _suite(tmp_path: Path, *, extra: str = "", per_token_s: float = 0.001) -> Path:
    model = write_fake_model(tmp_path / "models" / "m", per_token_s=per_token_s)
    if not (model / "config.json").exists():
        (model / "config.json").write_text(json.dumps({"model_type": "fake", "v": 1}))
    path = tmp_path / "p.suite.yaml"
    path.write_text(
        "schema_version: 1\n"
        "defaults: {repeats: 5, warmup: 0}\n"
        "models:\n  - {name: m, path: models/m, backend: fake}\n"
        "scenarios:\n  - scenario: throughput\n    params: {prompt_tokens: 4, gen_tokens: 2}\n"
        + extra
    )
    return path


ALL_SKIPPED = "expect:\n  - {model: m, status: skip, reason: 'not in the local cache'}\n"
RELATIVE_GATE = "gates: {throughput.decode_tps: '-5%'}\n"  # no baseline: never judged
# the fake backend measures no roofline share: a gate on it is never judged ("not measured")
UNMEASURED_GATE = "gates: {throughput.decode_hw_share: '>= 0.01'}\n"
MIXED_GATES = "gates: {throughput.decode_tps: '>= 1', throughput.decode_hw_share: '>= 0.01'}\n"
XFAIL_SLOW = (
    "gates: {throughput.decode_tps: '>= 1000000'}\n"
    "expect:\n  - {model: m, status: xfail, reason: 'known slow'}\n"
)


def _cli(suite: Path, reports: Path, run_id: str, *extra: str) -> int:
    return main(["run", str(suite), "--report-dir", str(reports), "--run-id", run_id, *extra])


def _pytest(
    pytester: pytest.Pytester, suite: Path, reports: Path, run_id: str, *extra: str
) -> tuple[int, str]:
    """pytest on the suite, in process (pytester): the plugin's exit status and its lines."""
    result = pytester.runpytest(
        "-p",
        "no:cacheprovider",
        "-q",
        str(suite),
        "--report-dir",
        str(reports),
        "--run-id",
        run_id,
        "--junitxml",
        str(pytester.path / "junit.xml"),
        *extra,
    )
    return int(result.ret), result.stdout.str() + result.stderr.str()


def _baseline(tmp_path: Path, reports: Path) -> str:
    """A first passing run of the plain suite, as the baseline."""
    assert _cli(_suite(tmp_path), reports, "base") == 0
    return str(reports / "base")


def _change_model(tmp_path: Path) -> None:
    (tmp_path / "models" / "m" / "config.json").write_text(
        json.dumps({"model_type": "fake", "v": 2})
    )


# (id, suite text, needs a baseline, what changes: "files" (config.json) or "slower" (its
# speed only), args -> exit status, the policy line)
CASES = [
    ("nothing-ran", ALL_SKIPPED, False, "", (), 1, "policy: nothing-ran: all 1 cases"),
    ("nothing-ran-allowed", ALL_SKIPPED, False, "", ("--fail-on", "none"), 0, ""),
    # the suite may say so itself (recorded with the run); the command line still decides
    ("suite-allows", ALL_SKIPPED + "fail_on: [none]\n", False, "", (), 0, ""),
    (
        "command-line-over-suite",
        ALL_SKIPPED + "fail_on: [none]\n",
        False,
        "",
        ("--fail-on", "nothing-ran"),
        1,
        "policy: nothing-ran",
    ),
    # a relative gate without a baseline waits for one: the first run makes the baseline
    ("relative-gate-waits", RELATIVE_GATE, False, "", (), 0, "note: 1 relative gates not judged"),
    ("unjudged-gates", UNMEASURED_GATE, False, "", (), 1, "policy: unjudged-gates: none of"),
    ("unjudged-allowed", UNMEASURED_GATE, False, "", ("--fail-on", "nothing-ran"), 0, ""),
    ("not-comparable", "", True, "files", (), 1, "model files changed: config.json"),
    ("model-change-allowed", "", True, "files", ("--allow-model-change",), 0, ""),
    ("new-failure", XFAIL_SLOW, True, "", (), 1, "policy: new-failure: 1 cases newly failing"),
    ("new-failure-allowed", XFAIL_SLOW, True, "", ("--fail-on", "none"), 0, ""),
    ("all-good", "", True, "", (), 0, ""),
    # a regression counts when asked (always in compare); the model's speed, not its files
    ("regression", "", True, "slower", ("--fail-on-regression",), 1, "policy: regression: 1 cases"),
    ("regression-default", "", True, "slower", (), 0, ""),
    # one gate judged, one not: only inconclusive-gate minds
    ("one-gate-unjudged", MIXED_GATES, False, "", (), 0, ""),
    (
        "inconclusive-gate",
        MIXED_GATES,
        False,
        "",
        ("--fail-on", "inconclusive-gate"),
        1,
        "policy: inconclusive-gate: 1 of 2 gates not judged",
    ),
]


DRIVERS = ("cli", "pytest")
# every kind through one driver in `make test` (each driver gets exits 0 and 1, a policy line
# and none); every kind through both drivers nightly
QUICK = {
    *(f"{k}-pytest" for k in ("nothing-ran", "suite-allows", "relative-gate-waits")),
    *(f"{k}-pytest" for k in ("unjudged-gates", "not-comparable", "new-failure", "regression")),
    "one-gate-unjudged-pytest",
    *(f"{k}-cli" for k in ("nothing-ran-allowed", "command-line-over-suite", "unjudged-allowed")),
    *(f"{k}-cli" for k in ("model-change-allowed", "new-failure-allowed", "all-good")),
    *(f"{k}-cli" for k in ("regression-default", "inconclusive-gate")),
}


@pytest.mark.parametrize(
    ("driver", "extra", "baseline", "changed", "args", "status", "says"),
    quick_subset(
        [(d, *c[1:]) for c in CASES for d in DRIVERS],
        [f"{c[0]}-{d}" for c in CASES for d in DRIVERS],
        QUICK,
    ),
)
def test_each_outcome_kind_through_each_driver(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    driver: str,
    extra: str,
    baseline: bool,
    changed: str,
    args: tuple[str, ...],
    status: int,
    says: str,
) -> None:
    tmp_path = pytester.path
    reports = tmp_path / "reports"
    more = list(args)
    if baseline:
        more += ["--baseline", _baseline(tmp_path, reports)]
        capsys.readouterr()
    if changed == "files":
        _change_model(tmp_path)
    # 100x slower: a gap no load on a shared box closes (5 a side all apart: p = 0.008)
    suite = _suite(tmp_path, extra=extra, per_token_s=0.1 if changed == "slower" else 0.001)
    if driver == "cli":
        got = _cli(suite, reports, "cur", *more)
        captured = capsys.readouterr()
        out = captured.out + captured.err
    else:
        got, out = _pytest(pytester, suite, reports, "cur", *more)
    assert got == status, out
    if says:
        assert says in out, out
    if status == 0:
        assert "policy: " not in out, out
    assert "Traceback" not in out
    if driver == "pytest":  # the JUnit file and pytest's own count carry the policy too
        junit = (tmp_path / "junit.xml").read_text()
        policy_case = 'classname="mlx-harness" name="policy"'
        if "policy: " in out:  # a finding: a failed test, counted on pytest's line
            assert policy_case in junit and "<failure" in junit, junit
            assert says in junit and " failed" in out.splitlines()[-1], out
        else:
            assert policy_case not in junit, junit


@pytest.mark.parametrize(
    ("value", "says"), [("regresion", "'regresion' is not a kind"), ("", "empty")]
)
def test_a_bad_fail_on_is_one_line_before_anything_runs(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], value: str, says: str
) -> None:
    tmp_path = pytester.path
    suite = _suite(tmp_path)
    assert _cli(suite, tmp_path / "reports", "r", "--fail-on", value) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "reports" / "r").exists()
    got, out = _pytest(pytester, suite, tmp_path / "reports", "r", "--fail-on", value)
    assert got == 4 and says in out and "Traceback" not in out  # pytest's usage error


def test_compare_and_report_name_the_model_change_and_fail_closed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reports = tmp_path / "reports"
    base = _baseline(tmp_path, reports)
    _change_model(tmp_path)
    assert _cli(_suite(tmp_path), reports, "cur", "--fail-on", "none") == 0
    capsys.readouterr()
    assert main(["compare", base, str(reports / "cur")]) == 1
    captured = capsys.readouterr()
    assert "model files changed: config.json" in captured.out  # compare.md says why
    assert "policy: not-comparable: 1 cases not comparable" in captured.err
    # allowed, the case is compared: no not-comparable finding (the fake's timings may still
    # differ by the machine's noise, so the exit is not asserted: no test depends on timing)
    main(["compare", base, str(reports / "cur"), "--allow-model-change"])
    assert "not-comparable" not in capsys.readouterr().err
    # report judges the same way: the comparison section names the change, the exit fails
    assert main(["report", str(reports / "cur"), "--baseline", base]) == 1
    out = capsys.readouterr().out
    assert "policy: not-comparable: 1 cases" in out
    assert "model files changed: config.json" in (reports / "cur" / "report.md").read_text()
    main(["report", str(reports / "cur"), "--baseline", base, "--allow-model-change"])
    assert "not-comparable" not in capsys.readouterr().out


def test_a_run_with_k_records_its_selection_and_compare_says_not_selected(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from harness.results.store import load_run

    reports = tmp_path / "reports"
    suite = _suite(tmp_path, extra="  - scenario: load\n")
    assert _cli(suite, reports, "base") == 0
    assert _cli(suite, reports, "cur", "-k", "load", "--baseline", str(reports / "base")) == 0
    assert load_run(reports / "cur").selection == ("-k load",)
    out = capsys.readouterr().out
    assert "vs baseline base: " in out and "1 not_selected" in out
    assert "removed" not in out
