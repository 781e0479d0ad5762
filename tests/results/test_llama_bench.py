"""The llama-bench JSON export: every field llama.cpp's compare-llama-bench.py needs, in
llama-bench's units, and read by that script itself (a copy of it, unchanged, in
tests/results/data/llama_cpp) into its comparison table."""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.results.llama_bench import DB_FIELDS, llama_bench_json
from harness.results.store import load_run

SCRIPT = Path(__file__).parent / "data" / "llama_cpp" / "compare-llama-bench.py"
SUITE = """\
schema_version: 1
defaults: {repeats: 3, warmup: 1}
models:
  - {name: m, path: m, backend: fake}
scenarios:
  - scenario: throughput
    params: {gen_tokens: 6}
    sweep: {prompt_tokens: [8, 16]}
"""


def _runs(tmp_path: Path, run_ids: tuple[str, ...]) -> list[Path]:
    write_fake_model(tmp_path / "m", per_token_s=0.001)
    (tmp_path / "s.suite.yaml").write_text(SUITE)
    out = []
    for run_id in run_ids:
        args = ["run", str(tmp_path / "s.suite.yaml"), "--report-dir", str(tmp_path / "r")]
        assert main([*args, "--run-id", run_id]) == 0
        out.append(tmp_path / "r" / run_id)
    return out


def test_one_entry_per_test_with_every_field_in_llama_bench_units(tmp_path: Path) -> None:
    (run_dir,) = _runs(tmp_path, ("run-a",))
    record = load_run(run_dir)
    entries = llama_bench_json(record)
    names = [(e["n_prompt"], e["n_gen"], e["n_depth"]) for e in entries]
    assert names == [(8, 0, 0), (0, 6, 0), (16, 0, 0), (0, 6, 0)]  # pp8 tg6 pp16 tg6
    for entry in entries:
        assert set(DB_FIELDS) <= set(entry)
        assert all(entry[f] is not None for f in DB_FIELDS)  # a NULL key never joins in SQL
        assert entry["build_commit"] == "run-a"
        assert entry["backends"].startswith("MLX (")
        tokens = entry["n_prompt"] + entry["n_gen"]
        assert len(entry["samples_ts"]) == 3  # the warm-up left out, as llama-bench does
        for ts, ns in zip(entry["samples_ts"], entry["samples_ns"], strict=True):
            assert ns == round(tokens / ts * 1e9)  # nanoseconds for the test's tokens
        assert entry["avg_ts"] == pytest.approx(sum(entry["samples_ts"]) / 3)
        assert entry["avg_ns"] == round(sum(entry["samples_ns"]) / 3)
        assert isinstance(entry["avg_ns"], int) and isinstance(entry["stddev_ns"], int)
        assert entry["test_time"].endswith("Z") and "T" in entry["test_time"]
    case = record.results[0]
    prefill = case.metric("throughput.prefill_tps")
    decode = case.metric("throughput.decode_tps")
    assert prefill is not None and decode is not None
    assert entries[0]["samples_ts"] == list(prefill.samples)
    assert entries[1]["samples_ts"] == list(decode.samples)
    # prefill's nanoseconds are the time to first token
    ttft = case.metric("throughput.ttft_s")
    assert ttft is not None
    for ns, s in zip(entries[0]["samples_ns"], ttft.samples, strict=True):
        assert math.isclose(ns / 1e9, s, rel_tol=1e-6)


def test_the_cli_says_when_a_run_has_no_throughput_case(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (run_dir,) = _runs(tmp_path, ("run-a",))
    out = tmp_path / "lb.json"
    assert main(["export", str(run_dir), "--llama-bench-json", str(out)]) == 0
    assert len(json.loads(out.read_text())) == 4
    record = run_dir / "run.jsonl"
    kept = [ln for ln in record.read_text().splitlines() if '"event": "case"' not in ln]
    record.write_text("\n".join(kept) + "\n")
    capsys.readouterr()
    assert main(["export", str(run_dir), "--llama-bench-json", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "no throughput case" in err and len(err.splitlines()) == 1


def test_compare_llama_bench_reads_two_exported_runs(tmp_path: Path) -> None:
    missing = [m for m in ("git", "tabulate") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"compare-llama-bench.py needs {' and '.join(missing)} (the dev extra)")
    runs = _runs(tmp_path, ("run-a", "run-b"))
    files = []
    for run_dir in runs:
        out = tmp_path / f"{run_dir.name}.json"
        assert main(["export", str(run_dir), "--llama-bench-json", str(out)]) == 0
        files.append(out)
    work = tmp_path / "outside-git"  # the script looks for a git repository from its cwd
    work.mkdir()
    inputs = [a for f in files for a in ("-i", str(f))]
    done = subprocess.run(
        [sys.executable, str(SCRIPT), *inputs, "-t", "llama-bench", "-b", "run-a", "-c", "run-b"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=work,
    )
    assert done.returncode == 0, done.stderr
    rows = [ln for ln in done.stdout.splitlines() if ln.startswith("|")]
    header = [c.strip() for c in rows[0].strip("|").split("|")]
    assert header[-4:] == ["Test", "t/s run-a", "t/s run-b", "Speedup"]
    table = {
        cells[-4]: cells for ln in rows[2:] if (cells := [c.strip() for c in ln.split("|")[1:-1]])
    }
    assert set(table) == {"pp8", "pp16", "tg6"}
    by_test = {
        (e["n_prompt"], e["n_gen"]): e["avg_ts"]
        for e in json.loads(files[0].read_text())
        if e["n_gen"] == 0
    }
    assert float(table["pp8"][-3]) == pytest.approx(by_test[(8, 0)], abs=0.01)  # t/s run-a
    assert float(table["pp16"][-3]) == pytest.approx(by_test[(16, 0)], abs=0.01)
