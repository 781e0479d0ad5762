"""The history site over generated nights: a planted step found and attributed, a noisy stretch
of flagged nights shown but raising nothing, a model revision starting a new series, hostile
names escaped, and a rebuild reading only the new night."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest
from markupsafe import escape

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "results"))

from history_nights import BUSY, DECODE, TTFT, Plan, case_id, write_night, write_nights

from harness.report.site import build_site
from harness.results.history_index import INDEX_FILE

PLAN = Plan(nights=30, cases=2, step_at=12, flagged=range(20, 24), seed=3)


def _text(page: Path) -> str:
    return page.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("nights")
    write_nights(root / "reports", PLAN)
    (root / "reports" / "night-0003" / "report.html").write_text("<p>night 3</p>")
    built = build_site([root / "reports"], root / "site")
    assert (built.machines, built.runs, len(built.counts.read)) == (1, 30, 30)
    return root / "site"


def test_the_planted_step_is_an_open_regression_attributed_to_the_bump(site: Path) -> None:
    machine = _text(site / "machine-1" / "index.html")
    regressions = machine.split('id="regressions"')[1].split('id="cases"')[0]
    # decode got 20% slower and time to first token longer: both regressions, both still open
    for case in range(2):
        assert html.escape(case_id(PLAN, case)) in regressions
    assert regressions.count(DECODE) == 2 and regressions.count(TTFT) == 2
    assert regressions.count("mlx: 0.32.4 -&gt; 0.33.0") == 4
    assert "2024-01-13" in regressions  # night 12 started on 13 January
    assert re.search(r"-(19|20|21)\.\d%", regressions)
    index = _text(site / "index.html")
    assert '<td class="regression">4</td>' in index


def test_flagged_nights_are_shown_and_raise_no_step(site: Path) -> None:
    case = _text(site / "machine-1" / "case-1.html")
    assert case.count(f"flagged: {BUSY}") == len(PLAN.flagged)
    assert case.count("No step.") == 1  # prefill: nothing planted, nothing found
    steps = re.findall(r"<tr><td>(2024-[^<]+)</td><td class=\"(regression|improvement)\"", case)
    assert [s[0][:10] for s in steps] == ["2024-01-13", "2024-01-13"]  # decode and ttft only
    assert 'fill="white" stroke="#d97706"' in case  # flagged runs drawn open


def test_runs_link_to_their_report_where_one_exists(site: Path) -> None:
    case = _text(site / "machine-1" / "case-1.html")
    assert case.count('<a href="./../../reports/night-0003/report.html">nightly</a>') == 1
    assert (site / "machine-1" / "./../../reports/night-0003/report.html").is_file()


def test_pages_load_nothing_from_outside(site: Path) -> None:
    for page in site.rglob("*.html"):
        text = _text(page)
        assert "<script" not in text and "http://" not in text.replace(
            "http://www.w3.org/2000/svg", ""
        )
        assert "https://" not in text


def test_a_model_revision_starts_a_new_series_naming_the_change(tmp_path: Path) -> None:
    plan = Plan(nights=12, cases=1, revision_at=6)
    write_nights(tmp_path / "reports", plan)
    build_site([tmp_path / "reports"], tmp_path / "site")
    case = _text(tmp_path / "site" / "machine-1" / "case-1.html")
    new = "a new series: model files changed: revision aaaaaaaaaaaa -&gt; bbbbbbbbbbbb"
    assert case.count(new) == 3  # one per metric
    assert case.count("model m; model files: mlx_lm, revision aaaaaaaaaaaa") == 3
    assert case.count("model m; model files: mlx_lm, revision bbbbbbbbbbbb") == 3
    machine = _text(tmp_path / "site" / "machine-1" / "index.html")
    assert "None: no series" in machine  # a new series is not a step


def test_a_step_in_model_files_no_longer_run_is_not_open(tmp_path: Path) -> None:
    """A slower mlx on revision a, then the case moved to revision b with no step: the step
    stays on the case's page, but the machine's open regressions are those of what runs now."""
    plan = Plan(nights=30, cases=1, step_at=10, revision_at=20)
    write_nights(tmp_path / "reports", plan)
    build_site([tmp_path / "reports"], tmp_path / "site")
    case = _text(tmp_path / "site" / "machine-1" / "case-1.html")
    assert "mlx: 0.32.4 -&gt; 0.33.0" in case  # the step is shown where it happened
    machine = _text(tmp_path / "site" / "machine-1" / "index.html")
    regressions = machine.split('id="regressions"')[1].split('id="cases"')[0]
    assert DECODE not in regressions and TTFT not in regressions


HOSTILE = ["<script>alert(1)</script>", "\"quoted\" & 'single'", "a&amp;b <b>bold</b>"]


def test_hostile_names_are_escaped(tmp_path: Path) -> None:
    plan = Plan(
        nights=6,
        cases=3,
        models=("<img src=x onerror=alert(1)>",),
        case_names={i: f"s::{name}::throughput" for i, name in enumerate(HOSTILE)},
    )
    write_nights(tmp_path / "reports", plan)
    build_site([tmp_path / "reports"], tmp_path / "site")
    pages = {p: _text(p) for p in (tmp_path / "site").rglob("*.html")}
    everything = "".join(pages.values())
    assert "<script>" not in everything and "<img" not in everything and "<b>" not in everything
    machine = pages[tmp_path / "site" / "machine-1" / "index.html"]
    for name in HOSTILE:
        assert str(escape(f"s::{name}::throughput")) in machine
    case = pages[tmp_path / "site" / "machine-1" / "case-1.html"]
    assert "<h1>s::&lt;script&gt;alert(1)&lt;/script&gt;::throughput</h1>" in case
    assert "model &lt;img src=x onerror=alert(1)&gt;; model files" in case


def test_adding_a_night_reads_only_the_new_run(tmp_path: Path) -> None:
    plan = Plan(nights=8, cases=2)
    write_nights(tmp_path / "reports", plan)
    first = build_site([tmp_path / "reports"], tmp_path / "site")
    assert len(first.counts.read) == 8 and first.counts.reused == 0
    assert (tmp_path / "site" / INDEX_FILE).is_file()
    new = write_night(tmp_path / "reports", Plan(nights=9, cases=2), 8)
    second = build_site([tmp_path / "reports"], tmp_path / "site")
    assert second.counts.read == [str(new / "run.jsonl")] and second.counts.reused == 8
    assert second.runs == 9
    assert _text(tmp_path / "site" / "machine-1" / "case-1.html").count("<tr><td>2024-") == 9
    again = build_site([tmp_path / "reports"], tmp_path / "site", incremental=False)
    assert len(again.counts.read) == 9


def test_a_rebuild_drops_the_pages_of_cases_no_longer_found(tmp_path: Path) -> None:
    write_nights(tmp_path / "reports", Plan(nights=4, cases=3))
    build_site([tmp_path / "reports"], tmp_path / "site")
    assert (tmp_path / "site" / "machine-1" / "case-3.html").is_file()
    (tmp_path / "site" / "machine-1" / "notes.html").write_text("mine")
    for night in range(4):
        (tmp_path / "reports" / f"night-{night:04d}" / "run.jsonl").unlink()
    write_nights(tmp_path / "reports", Plan(nights=4, cases=2))
    build_site([tmp_path / "reports"], tmp_path / "site")
    pages = sorted(p.name for p in (tmp_path / "site" / "machine-1").iterdir())
    assert pages == ["case-1.html", "case-2.html", "index.html", "notes.html"]


def test_a_series_whose_every_run_was_flagged_says_no_clean_run_never_nan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.cli import main

    monkeypatch.delenv("MLX_HARNESS_ALLOW_DIRTY_MACHINE", raising=False)
    plan = Plan(nights=4, cases=1, flagged=range(4))
    write_nights(tmp_path / "reports", plan)
    build_site([tmp_path / "reports"], tmp_path / "site")
    case = _text(tmp_path / "site" / "machine-1" / "case-1.html")
    assert "latest clean median no clean run" in case
    assert "No step can be found: no clean run" in case and "No step." not in case
    assert not re.search(r"\bnan\b", case, re.IGNORECASE)

    args = ["history", str(tmp_path / "reports"), "--metric", DECODE]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "no clean run: all 4 runs flagged, so no step can be found" in out
    assert out.count("  no clean run  (flagged") == 4
    assert not re.search(r"\bnan\b", out, re.IGNORECASE)
