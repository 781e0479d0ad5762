"""The command-line driver: same functions as the plugin, one-line errors, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main

BAD_SUITES = {
    "typo.suite.yaml": "schema_version: 1\ndefaults:\n  repeets: 3\nscenarios:\n"
    "  - scenario: load\n",
    "type.suite.yaml": "schema_version: 1\ndefaults:\n  repeats: many\nscenarios:\n"
    "  - scenario: load\n",
    "indent.suite.yaml": "schema_version: 1\nmodels:\n  - path: x\n   backend: fake\n"
    "scenarios:\n  - scenario: load\n",
    "missing.suite.yaml": "schema_version: 1\nmodels:\n  - path: ./nope\nscenarios:\n"
    "  - scenario: load\n",
}


def test_validate_prints_one_line_per_problem_and_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name, text in BAD_SUITES.items():
        (tmp_path / name).write_text(text)
    assert main(["validate", str(tmp_path)]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 4
    expected = {
        "indent.suite.yaml:4:4: invalid YAML",
        "missing.suite.yaml:3:5: model path './nope' does not exist",
        "type.suite.yaml:3:12: defaults.repeats: expected a whole number, got 'many'",
        "typo.suite.yaml:3:3: unknown key 'repeets' in defaults; did you mean 'repeats'?",
    }
    for line, fragment in zip(sorted(lines), sorted(expected), strict=True):
        assert fragment in line


def test_validate_ok(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_fake_model(tmp_path / "m")
    suite = tmp_path / "ok.suite.yaml"
    suite.write_text(
        f"schema_version: 1\nmodels:\n  - {{path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: load\n"
    )
    assert main(["validate", str(suite)]) == 0
    assert "ok (1 models, 1 cases)" in capsys.readouterr().out


def test_schema_is_json_schema(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema["title"] == "mlx-harness suite"
    assert {"schema_version", "models", "scenarios", "gates"} <= set(schema["properties"])
    assert schema["additionalProperties"] is False


def test_run_report_export(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    model = write_fake_model(tmp_path / "m")
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(
        f"schema_version: 1\ndefaults: {{repeats: 2}}\nmodels:\n"
        f"  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 4}\n"
    )
    reports = tmp_path / "reports"
    assert main(["run", str(suite), "--report-dir", str(reports), "--run-id", "r"]) == 0
    out = capsys.readouterr().out
    assert "passed  s::m::throughput" in out and "report:" in out
    assert main(["report", str(reports / "r")]) == 0
    assert main(["export", str(reports / "r"), "--csv", str(tmp_path / "x.csv")]) == 0
    assert "throughput.decode_tps" in (tmp_path / "x.csv").read_text()


def test_unreadable_run_is_a_one_line_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "run.jsonl").write_text("garbage\n")
    assert main(["report", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlx-harness: error: ") and err.count("\n") == 1


def test_models_list_json(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path))
    assert main(["models", "list", "--json"]) == 0
    models = json.loads(capsys.readouterr().out)
    assert "zoo/llama" in [m["name"] for m in models]
    assert all(m["prepared"] is False for m in models)


def test_console_script_entry_point() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "--help"], capture_output=True, text=True, check=True
    )
    assert "validate" in out.stdout and "schema" in out.stdout


def _fake_run(tmp_path: Path, run_id: str, per_token_s: float) -> Path:
    model = write_fake_model(tmp_path / "m", per_token_s=per_token_s, prefill_per_token_s=0.001)
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(
        f"schema_version: 1\ndefaults: {{repeats: 5}}\nmodels:\n"
        f"  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: throughput\n    params: {gen_tokens: 12, prompt_tokens: 20}\n"
    )
    assert (
        main(["run", str(suite), "--report-dir", str(tmp_path / "reports"), "--run-id", run_id])
        == 0
    )
    return tmp_path / "reports" / run_id


def test_compare_history_and_benchmark_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = _fake_run(tmp_path, "a", 0.002)
    _fake_run(tmp_path, "b", 0.002)
    # 15x slower decode: a gap no load on a shared box closes
    slow = _fake_run(tmp_path, "c", 0.03)
    _fake_run(tmp_path, "d", 0.03)  # a step holds up with two runs on each side
    capsys.readouterr()
    # a run against itself: every sample equal, so nothing moved and no strip is drawn (two
    # timed runs of the fake may differ by the machine's noise and be drawn, rightly)
    assert main(["compare", str(base), str(base), "--out", str(tmp_path / "cmp")]) == 0
    assert main(["compare", str(base), str(slow), "--out", str(tmp_path / "slow")]) == 1
    out = capsys.readouterr().out
    assert "  regressed: s::m::throughput: throughput.decode_tps -" in out
    assert "🟥 regressed" in (tmp_path / "slow" / "compare.md").read_text()
    assert (tmp_path / "cmp" / "compare.html").read_text().count("<svg") == 0  # nothing moved

    assert (
        main(
            [
                "history",
                str(tmp_path / "reports"),
                "--metric",
                "throughput.decode_tps",
                "--min-effect",
                "0.2",
            ]
        )
        == 0
    )
    history = capsys.readouterr().out
    assert "step -" in history and "1 step(s) over 4 runs" in history

    out_json = tmp_path / "bench.json"
    assert main(["export", str(base), "--benchmark-json", str(out_json)]) == 0
    bench = json.loads(out_json.read_text())
    names = {b["name"].rsplit("::", 1)[1] for b in bench["benchmarks"]}
    assert "throughput.ttft_s" in names and "throughput.decode_tps" not in names
    first = bench["benchmarks"][0]["stats"]
    assert first["rounds"] == 5 and len(first["data"]) == 5 and first["min"] <= first["median"]


def _arch_file(path: Path, arch: str) -> Path:
    import numpy as np

    from harness.models.gguf.synthetic import write_gguf

    return write_gguf(path, arch, {}, {"x.weight": (np.zeros((4, 32), np.float32), "F32")})


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: (p.write_bytes(b"not a gguf at all" * 10), p)[1], "not a GGUF file"),
        (lambda p: _arch_file(p, "mamba"), "unsupported architecture 'mamba'"),
        (lambda p: (p.write_bytes(_arch_file(p, "llama").read_bytes()[:60]), p)[1], "truncated"),
    ],
    ids=["not-gguf", "unsupported-arch", "truncated"],
)
def test_import_gguf_errors_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], make, message: str
) -> None:  # type: ignore[no-untyped-def]
    source = make(tmp_path / "in.gguf")
    assert main(["import", "gguf", str(source), str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("mlx-harness: error: ") and err.count("\n") == 1 and message in err


def test_import_gguf_converts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from harness.models.gguf.synthetic import tiny_llama

    tiny = tiny_llama(tmp_path / "tiny.gguf")
    assert main(["import", "gguf", str(tiny.path), str(tmp_path / "out")]) == 0
    assert "llama" in capsys.readouterr().out
    assert (tmp_path / "out" / "config.json").is_file()


def test_a_report_dir_that_is_a_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = write_fake_model(tmp_path / "m")
    suite = tmp_path / "s.suite.yaml"
    suite.write_text(
        f"schema_version: 1\nmodels:\n  - {{name: m, path: {model}, backend: fake}}\n"
        "scenarios:\n  - scenario: load\n"
    )
    a_file = tmp_path / "reports"
    a_file.write_text("not a folder")
    assert main(["run", str(suite), "--report-dir", str(a_file)]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"mlx-harness: error: {a_file}: is a file, not a folder; "
        "pass --report-dir to a writable folder\n"
    )


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    from harness import __version__

    with pytest.raises(SystemExit) as exit_info:
        main(["--version"])
    assert exit_info.value.code == 0
    assert capsys.readouterr().out.strip() == f"mlx-harness {__version__}"
