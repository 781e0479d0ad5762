"""The record invariant under planted faults: every planned case ends in run.jsonl with exactly
one status, and the counts agree in the driver's own output, the terminal summary, report.md and
the record, for both drivers (the CLI and pytest).

Each fault is planted in one stage of the harness's own code (monkeypatched in this process, or
a fake model that misbehaves in its worker); the stage's cases must come out ``errored`` with a
one-line reason naming the stage, and every other case must still run.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness import cli
from harness.backends.fake import write_fake_model
from harness.core.types import Status
from harness.results.store import load_run
from harness.runner.messages import RunRequest
from tests.quick_subset import quick_subset

SUITE = """\
schema_version: 1
defaults: {repeats: 2, warmup: 0, timeout_s: 20}
models:
  - {name: one, path: models/one, backend: fake}
  - {name: two, path: models/two, backend: fake}
scenarios:
  - scenario: load
  - scenario: throughput
    params: {gen_tokens: 3, prompt_tokens: 4}
"""
CASES = 4


def _raise(message: str) -> Callable[..., Any]:
    def planted(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(message)

    return planted


def _plant_probe(mp: pytest.MonkeyPatch, root: Path) -> None:
    mp.setattr("harness.runner.preflight.Preflighter.probe", _raise("planted probe fault"))


def _plant_policy(mp: pytest.MonkeyPatch, root: Path) -> None:
    mp.setattr("harness.runner.preflight.decide", _raise("planted policy fault"))


def _plant_probe_record(mp: pytest.MonkeyPatch, root: Path) -> None:
    mp.setattr("harness.runner.preflight.probe_dict", _raise("planted probe serialization fault"))


def _plant_result_serialization(mp: pytest.MonkeyPatch, root: Path) -> None:
    from harness.runner import active_run

    real = active_run.outcome_of

    def unserializable(reply: Any) -> Any:
        outcome = real(reply)
        return active_run.Outcome(outcome.status, outcome.reason, outcome.metrics, {"x": object()})

    mp.setattr(active_run, "outcome_of", unserializable)


def _plant_protocol(mp: pytest.MonkeyPatch, root: Path) -> None:
    """The worker's reply to a ``run`` request arrives as a line that is not JSON."""
    from harness.runner import client

    real_write = client.WorkerClient.request

    def request(self: Any, message: Any, *args: Any) -> Any:
        if isinstance(message, RunRequest):
            self._buffer = b"garbage from the worker\n"
        return real_write(self, message, *args)

    mp.setattr(client.WorkerClient, "request", request)


def _plant_reply_shape(mp: pytest.MonkeyPatch, root: Path) -> None:
    """A JSON reply of the wrong shape (metrics not a list of metric objects)."""
    from harness.runner import client

    real = client.reply_from_wire

    def misshapen(raw: Any) -> Any:
        if isinstance(raw, dict) and raw.get("op") == "result":
            raw = {**raw, "metrics": [7]}
        return real(raw)

    mp.setattr(client, "reply_from_wire", misshapen)


def _plant_judge(mp: pytest.MonkeyPatch, root: Path) -> None:
    mp.setattr("harness.runner.active_run.judge", _raise("planted judge fault"))


def _plant_scenario(mp: pytest.MonkeyPatch, root: Path) -> None:
    """The scenario raises inside the worker (a real subprocess) for model 'two'."""
    write_fake_model(root / "models" / "two", on_generate="error")


def _plant_load(mp: pytest.MonkeyPatch, root: Path) -> None:
    write_fake_model(root / "models" / "two", on_load="error")


def _plant_report_section(mp: pytest.MonkeyPatch, root: Path) -> None:
    import importlib

    from harness.report import contents, sections

    render_module = importlib.import_module("harness.report.render")
    real = contents.default_sections

    def broken(scenarios: Any = None) -> Any:
        built = list(real(scenarios))
        bad = built[-1]
        built[-1] = sections.Section(bad.key, bad.title, _raise("planted section fault"))
        return tuple(built)

    mp.setattr(contents, "default_sections", broken)
    mp.setattr(render_module, "default_sections", broken)


@dataclass(frozen=True)
class Fault:
    name: str
    plant: Callable[[pytest.MonkeyPatch, Path], None]
    statuses: dict[Status, int]  # expected record counts
    reason: str  # text every errored case's reason contains ("" when none errors)


FAULTS = [
    Fault("none", lambda mp, root: None, {Status.PASSED: 4}, ""),
    Fault("probe", _plant_probe, {Status.ERRORED: 4}, "harness error in probe and policy"),
    Fault("policy", _plant_policy, {Status.ERRORED: 4}, "planted policy fault"),
    Fault("probe-record", _plant_probe_record, {Status.ERRORED: 4}, "probe serialization fault"),
    Fault(
        "result-serialization",
        _plant_result_serialization,
        {Status.ERRORED: 4},
        "harness error in recording the result",
    ),
    Fault(
        "worker-protocol",
        _plant_protocol,
        {Status.ERRORED: 4},
        "worker sent a line that is not JSON",
    ),
    Fault(
        "reply-shape",
        _plant_reply_shape,
        {Status.ERRORED: 4},
        "harness error in worker protocol: worker sent a malformed reply: 'result' message",
    ),
    Fault("judge", _plant_judge, {Status.ERRORED: 4}, "planted judge fault"),
    Fault(
        "scenario",
        _plant_scenario,
        {Status.PASSED: 3, Status.ERRORED: 1},
        "RuntimeError: fake backend: failure on purpose",
    ),
    Fault("load", _plant_load, {Status.PASSED: 2, Status.ERRORED: 2}, "load failed"),
    Fault("report-section", _plant_report_section, {Status.PASSED: 4}, ""),
]

PYTEST_OUTCOME = {
    Status.PASSED: "passed",
    Status.SKIPPED: "skipped",
    Status.XFAILED: "xfailed",
    Status.XPASSED: "failed",
    Status.FAILED: "failed",
    Status.ERRORED: "failed",
    Status.CRASHED: "failed",
    Status.TIMED_OUT: "failed",
}
SUMMARY = re.compile(r"^(\d+) cases: (.*)$", re.MULTILINE)
REPORT = re.compile(r"^\*\*(\d+) cases:\*\* (.*)$", re.MULTILINE)


def _counts(text: str) -> Counter[str]:
    return Counter({m.group(2): int(m.group(1)) for m in re.finditer(r"(\d+) ([a-z_]+)", text)})


def _summary_counts(stdout: str) -> Counter[str]:
    found = SUMMARY.findall(stdout)
    assert len(found) == 1, stdout
    total, counts = found[0]
    parsed = _counts(counts)
    assert sum(parsed.values()) == int(total)
    return parsed


def _report_counts(report_md: str) -> Counter[str]:
    found = REPORT.findall(report_md)
    assert len(found) == 1
    total, counts = found[0]
    parsed = _counts(counts)
    assert sum(parsed.values()) == int(total)
    return parsed


def _check_record(run_dir: Path, fault: Fault) -> Counter[str]:
    lines = [json.loads(x) for x in (run_dir / "run.jsonl").read_text().splitlines()]
    ids = [e["result"]["case_id"] for e in lines if e["event"] == "case"]
    assert len(ids) == CASES and len(set(ids)) == CASES, ids  # exactly one status per case
    run = load_run(run_dir)
    record = Counter(r.status for r in run.results)
    assert record == Counter(fault.statuses)
    for result in run.results:
        if result.status is Status.ERRORED:
            assert fault.reason in (result.reason or ""), result.reason
            assert "\n" not in (result.reason or "")
    return Counter({s.value: n for s, n in record.items()})


def _project(root: Path, fault: Fault, mp: pytest.MonkeyPatch) -> Path:
    write_fake_model(root / "models" / "one", per_token_s=0.0)
    write_fake_model(root / "models" / "two", per_token_s=0.0)
    suite = root / "f.suite.yaml"
    suite.write_text(SUITE)
    fault.plant(mp, root)
    return suite


# each fault through one driver in `make test` (the cheap ones, faults before any worker,
# through both); every fault through both drivers nightly
BEFORE_WORKER = {"probe", "policy", "probe-record"}
QUICK_CLI = {"none", "result-serialization", "reply-shape", "load", *BEFORE_WORKER}
QUICK_PYTEST = {"worker-protocol", "judge", "scenario", "report-section", *BEFORE_WORKER}
assert {f.name for f in FAULTS} == QUICK_CLI | QUICK_PYTEST


@pytest.mark.parametrize(
    "fault", quick_subset([(f,) for f in FAULTS], [f.name for f in FAULTS], QUICK_CLI)
)
def test_cli_counts_agree_under_fault(
    fault: Fault,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    suite = _project(tmp_path, fault, monkeypatch)
    reports = tmp_path / "reports"
    code = cli.main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    record = _check_record(reports / "r", fault)
    statuses = {s.value for s in Status}
    case_lines = Counter(
        words[0]
        for words in (line.split() for line in out.splitlines())
        if len(words) > 1 and words[0] in statuses and words[1].startswith("f::")
    )
    assert case_lines == record
    assert _summary_counts(out) == record
    assert _report_counts((reports / "r" / "report.md").read_text()) == record
    assert code == (0 if set(fault.statuses) == {Status.PASSED} else 1)
    if fault.name == "report-section":
        assert "planted section fault" in (reports / "r" / "report.md").read_text()


@pytest.mark.parametrize(
    "fault", quick_subset([(f,) for f in FAULTS], [f.name for f in FAULTS], QUICK_PYTEST)
)
def test_pytest_counts_agree_under_fault(
    fault: Fault, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    _project(pytester.path, fault, monkeypatch)
    result = pytester.runpytest_inprocess("--run-id", "r", "-p", "no:cacheprovider")
    out = result.stdout.str()
    assert "Traceback" not in out
    record = _check_record(pytester.path / "reports" / "r", fault)
    outcomes = Counter(
        {k: v for k, v in result.parseoutcomes().items() if k in set(PYTEST_OUTCOME.values())}
    )
    expected = Counter()
    for status, n in fault.statuses.items():
        expected[PYTEST_OUTCOME[status]] += n
    assert outcomes == expected
    assert _summary_counts(out) == record
    assert _report_counts((pytester.path / "reports" / "r" / "report.md").read_text()) == record
