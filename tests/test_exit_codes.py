"""The README's exit-status table, as a table: each kind of input x driver (``mlx-harness run``,
``pytest``, ``mlx-harness validate``, ``mlx-harness compare``) -> the exit status and the line
that says why. Tiny suites on the fake backend in a temporary folder; ``run``, ``validate`` and
``compare`` in process (``main``), pytest through pytester.

0: ok; 1: a failed case or a policy finding; 2: bad input for ``mlx-harness`` (pytest: 4, its
usage error); 5: no cases chosen."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main

PLAIN = (
    "schema_version: 1\n"
    "defaults: {repeats: 1, warmup: 0}\n"
    "models:\n  - {name: m, path: models/m, backend: fake}\n"
    "scenarios:\n  - scenario: throughput\n    params: {prompt_tokens: 4, gen_tokens: 2}\n"
)
MODEL = "  - {name: m, path: models/m, backend: fake}\n"

# each kind of input: the suite's text (from PLAIN) and the command-line words it needs
SUITES = {
    "ok": PLAIN,
    "key-typo": PLAIN.replace("scenarios:", "scenarioz:"),
    "wrong-path": PLAIN.replace("path: models/m", "path: models/nope"),
    "bad-param": PLAIN.replace("prompt_tokens: 4", "prompt_tokenz: 4"),
    # next to a working model: the run skips the other one for its input
    "empty-folder": PLAIN.replace(MODEL, MODEL + "  - {name: e, path: models/e}\n"),
    "unknown-hub": PLAIN.replace(
        MODEL, MODEL + "  - {name: h, hub: mlx-community/no-such-model-zz-4bit}\n"
    ),
    # the discard port: nothing listens there
    "unreachable-url": PLAIN.replace(MODEL, '  - {name: srv, url: "http://127.0.0.1:9"}\n').replace(
        "scenario: throughput", "scenario: http_throughput"
    ),
    "suite-baseline-missing": PLAIN + "baseline: runs/nowhere\n",
    "suite-baseline-last-none": PLAIN + "baseline: last\n",
}

# (kind, driver, extra words, exit status, a fragment of the line that says why)
TABLE = [
    ("ok", "run", (), 0, "1 cases: 1 passed"),
    ("ok", "pytest", (), 0, "1 passed"),
    ("ok", "validate", (), 0, "ok (1 models, 1 cases)"),
    ("key-typo", "run", (), 2, "unknown key 'scenarioz' in the suite; did you mean 'scenarios'?"),
    ("key-typo", "pytest", (), 4, "unknown key 'scenarioz' in the suite"),
    ("key-typo", "validate", (), 2, "unknown key 'scenarioz' in the suite"),
    ("wrong-path", "run", (), 2, "model path 'models/nope' does not exist"),
    ("wrong-path", "pytest", (), 4, "model path 'models/nope' does not exist"),
    ("wrong-path", "validate", (), 2, "model path 'models/nope' does not exist"),
    ("bad-param", "run", (), 2, "unknown parameter 'prompt_tokenz' for scenario 'throughput'"),
    ("bad-param", "pytest", (), 4, "unknown parameter 'prompt_tokenz'"),
    ("bad-param", "validate", (), 2, "unknown parameter 'prompt_tokenz'"),
    ("empty-folder", "run", (), 1, "policy: input-skip: 1 cases skipped because of the suite's"),
    ("empty-folder", "pytest", (), 1, "policy: input-skip: 1 cases skipped"),
    ("empty-folder", "validate", (), 2, "model 'e': corrupt_model: "),
    ("empty-folder", "run", ("--fail-on", "none"), 0, "2 cases: 1 passed, 1 skipped"),
    ("unknown-hub", "run", (), 1, "policy: input-skip: 1 cases skipped"),
    ("unknown-hub", "pytest", (), 1, "policy: input-skip: 1 cases skipped"),
    ("unknown-hub", "validate", (), 2, "model 'h': hub model 'mlx-community/no-such-model-zz"),
    # the suite's server, not the harness: failed, with the server named
    (
        "unreachable-url",
        "run",
        (),
        1,
        "failed  t::srv::http_throughput  (server http://127.0.0.1:9",
    ),
    ("suite-baseline-missing", "run", (), 2, "baseline: runs/nowhere: "),
    ("suite-baseline-missing", "pytest", (), 4, "baseline: runs/nowhere: "),
    ("suite-baseline-last-none", "run", (), 0, "baseline: none yet"),
    ("suite-baseline-last-none", "pytest", (), 0, "baseline: none yet"),
    ("ok", "run", ("-k", "nothing-has-this"), 5, "no cases to run"),
    ("ok", "pytest", ("-k", "nothing-has-this"), 5, "deselected"),
    ("ok", "run", ("--fail-on", "regresion"), 2, "'regresion' is not a kind"),
    ("ok", "pytest", ("--fail-on", "regresion"), 4, "'regresion' is not a kind"),
    ("ok", "run", ("--baseline", "nowhere"), 2, "--baseline: nowhere: no such file"),
    ("ok", "pytest", ("--baseline", "nowhere"), 4, "--baseline: nowhere: no such file"),
    ("ok", "compare", ("nowhere", "nowhere-else"), 2, "nowhere: no such file"),
]


def _project(root: Path, kind: str) -> Path:
    model = write_fake_model(root / "models" / "m", per_token_s=0.0005)
    (model / "config.json").write_text(json.dumps({"model_type": "fake", "v": 1}))
    (root / "models" / "e").mkdir(parents=True, exist_ok=True)
    suite = root / "t.suite.yaml"
    suite.write_text(SUITES[kind])
    return suite


def _drive(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    driver: str,
    suite: Path,
    extra: tuple[str, ...],
    run_id: str = "r",
) -> tuple[int, str]:
    reports = str(pytester.path / "reports")
    if driver == "pytest":
        result = pytester.runpytest(
            "-p",
            "no:cacheprovider",
            str(suite),
            "--report-dir",
            reports,
            "--run-id",
            run_id,
            *extra,
        )
        return int(result.ret), result.stdout.str() + result.stderr.str()
    if driver == "run":
        words = ["run", str(suite), "--report-dir", reports, "--run-id", run_id, "--no-report"]
        status = main([*words, "--progress", "off", *extra])
    elif driver == "validate":
        status = main(["validate", str(suite), *extra])
    else:
        status = main([driver, *extra])
    captured = capsys.readouterr()
    return status, captured.out + captured.err


@pytest.mark.parametrize(
    ("kind", "driver", "extra", "status", "says"),
    TABLE,
    ids=[f"{row[0]}-{row[1]}-{'-'.join(row[2]) or 'plain'}" for row in TABLE],
)
def test_exit_status_and_line(
    pytester: pytest.Pytester,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    driver: str,
    extra: tuple[str, ...],
    status: int,
    says: str,
) -> None:
    suite = _project(pytester.path, kind)
    got, out = _drive(pytester, capsys, driver, suite, extra)
    assert (got, says in out) == (status, True), out
    assert "Traceback" not in out
    if status == 0:
        assert "policy: " not in out, out


@pytest.mark.parametrize("driver", ["run", "pytest"])
def test_baseline_last_compares_with_the_last_run(
    pytester: pytest.Pytester, capsys: pytest.CaptureFixture[str], driver: str
) -> None:
    """A nightly that forgets --baseline still compares: ``baseline: last`` finds the first
    run, and a changed model is then not comparable (exit 1)."""
    suite = _project(pytester.path, "suite-baseline-last-none")
    first, out = _drive(pytester, capsys, driver, suite, (), run_id="first")
    assert (first, "baseline: none yet" in out) == (0, True), out
    (pytester.path / "models" / "m" / "config.json").write_text(
        json.dumps({"model_type": "fake", "v": 2})
    )
    second, out = _drive(pytester, capsys, driver, suite, (), run_id="second")
    assert second == 1, out
    assert f"baseline: {pytester.path / 'reports' / 'first'} (the last earlier run" in out
    assert "policy: not-comparable: 1 cases" in out and "model files changed" in out
