"""The pytest-benchmark export read back by pytest-benchmark itself (its ``compare`` command), so
users who keep pytest-benchmark dashboards and ``compare`` workflows can feed them our runs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main

SUITE = """\
schema_version: 1
defaults: {repeats: 4, warmup: 0}
models:
  - {name: m, path: m, backend: fake}
scenarios:
  - scenario: throughput
    params: {gen_tokens: 6, prompt_tokens: 8}
"""


def test_pytest_benchmark_compare_reads_two_exported_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = shutil.which("pytest-benchmark") or shutil.which(
        "pytest-benchmark", path=str(Path(__file__).parents[1] / ".venv" / "bin")
    )
    if tool is None:
        pytest.skip("pytest-benchmark is not installed (pip install -e '.[dev]')")
    write_fake_model(tmp_path / "m", per_token_s=0.001)
    (tmp_path / "s.suite.yaml").write_text(SUITE)
    exported = []
    for run_id in ("before", "after"):
        args = ["run", str(tmp_path / "s.suite.yaml"), "--report-dir", str(tmp_path / "r")]
        assert main([*args, "--run-id", run_id]) == 0
        out = tmp_path / f"{run_id}.json"
        assert main(["export", str(tmp_path / "r" / run_id), "--benchmark-json", str(out)]) == 0
        exported.append(str(out))
    capsys.readouterr()
    done = subprocess.run(
        [tool, "compare", *exported, "--columns=min,median,max", "--group-by=name"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    ttft = [ln for ln in done.stdout.splitlines() if ln.startswith("s::m::throughput::")]
    names = {ln.split()[0] for ln in ttft}
    assert "s::m::throughput::throughput.ttft_s" in names  # seconds metrics, read as timings
    assert not any("decode_tps" in n for n in names)  # rates are not timings: left out
    labels = {ln.split()[1] for ln in ttft}
    assert any("before" in x for x in labels) and any("after" in x for x in labels)  # side by side
