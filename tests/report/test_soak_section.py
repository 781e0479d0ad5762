"""The Cancellation and Soak sections from a real run (``mlx-harness run`` on a ``url:`` suite
against a planted server that keeps 1 MiB per request and serves ``/metrics``): the soak's
failure in one line, its memory chart drawn in the HTML with its data; the cancels' table."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.core.types import Status
from harness.results.store import load_run
from tests.servers.planted_process import planted_server
from tests.servers.planted_requests import Plant


def test_sections_from_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with planted_server(Plant.LEAK_PER_REQUEST, token_delay_ms=5, metrics=True) as url:
        suite = tmp_path / "soak.suite.yaml"
        suite.write_text(
            "schema_version: 1\ndefaults: {warmup: 1, timeout_s: 300}\nmodels:\n"
            f"  - {{name: toy, url: '{url}'}}\n"
            "scenarios:\n"
            "  - scenario: cancellation\n"
            "    params: {long_max_tokens: 400, cancels: 1, prompt_tokens: 16}\n"
            "  - scenario: soak\n"
            "    params: {requests: 150, max_tokens: 4, sample_every_s: 0.05}\n"
        )
        reports = tmp_path / "reports"
        main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"])
    out = capsys.readouterr().out
    assert "passed  soak::toy::cancellation" in out
    results = {r.scenario: r for r in load_run(reports / "r").results}
    assert results["soak"].status is Status.FAILED
    assert results["soak"].reason.startswith("growth: server memory (rss) grew ")
    md = (reports / "r" / "report.md").read_text()
    cancel = md.split("## Cancellation", 1)[1].split("\n## ", 1)[0]
    assert "seen by counters /metrics" in cancel and "unchanged" in cancel
    soak = md.split("## Soak", 1)[1].split("\n## ", 1)[0]
    assert "MiB per 1,000 requests" in soak and "Soak cases that did not pass" in soak
    html = (reports / "r" / "report.html").read_text()
    assert 'id="chart-soak-memory-0"' in html and "<svg" in html.split("chart-soak-memory-0")[1]
