"""A static history site over nightly reports: one self-contained folder of HTML pages.

``index.html`` lists the machines (open regressions counted); ``machine-N/index.html`` shows a
machine's open regressions first (series whose latest step made the metric worse and still
holds at the last clean run), then every case; ``machine-N/case-M.html`` draws each metric of
one case over the runs, one chart per model identity (a new revision starts a new series and
names what changed), steps marked and attributed, runs on a dirty machine marked (shown, not
fitted), and links each run to its ``report.html`` where one exists. File names are numbers,
never a case id; every text from a record goes through the HTML environment's escaping
(:func:`harness.report.escape.html_finalize`, then autoescape); the pages load nothing (no
script, no outside CSS). Runs are read once and kept in an index in the output folder
(:mod:`harness.results.history_index`), so a rebuild reads only new records.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

import jinja2

from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.report.formatting import NO_CLEAN_RUN, figure
from harness.report.history_chart import ChartPoint, history_svg
from harness.report.render import HTML_FILE, template_environment
from harness.results.history import Collector, Series, regression_in_effect
from harness.results.history_index import INDEX_FILE, IndexCounts, indexed_digests
from harness.results.report_dir import make_dir, write_text_atomic
from harness.scenarios.specs import all_specs

_HIGHER_UNITS = frozenset({Unit.TOKENS_PER_SECOND.value, Unit.REQUESTS_PER_SECOND.value})


@dataclass(frozen=True)
class StepView:
    run: str  # the started_at of the first run at the new level
    change: float  # relative
    before: float
    after: float
    causes: tuple[str, ...]
    regression: bool


@dataclass(frozen=True)
class SeriesView:
    metric: str
    unit: str
    model: str
    identity: str
    changed_from_before: tuple[str, ...]
    chart: object  # Markup
    steps: tuple[StepView, ...]
    runs: int
    flagged: int
    latest: str  # the latest clean run's median; "no clean run" when every run was flagged


@dataclass(frozen=True)
class RunRow:
    started_at: str
    run_id: str
    link: str | None
    identity: str
    dirty: tuple[str, ...]
    values: tuple[str, ...]  # per metric of the case: "median (low..high)", "" when absent


@dataclass(frozen=True)
class Regression:
    case_id: str
    case_page: str
    metric: str
    identity: str
    step: StepView


@dataclass(frozen=True)
class CaseRow:
    case_id: str
    page: str
    metrics: int
    runs: int
    steps: int
    flagged: int


@dataclass(frozen=True)
class MachineView:
    key: str
    page: str
    runs: int
    cases: tuple[CaseRow, ...]
    regressions: tuple[Regression, ...]


@dataclass(frozen=True)
class SiteResult:
    out: Path
    machines: int
    pages: int
    runs: int
    counts: IndexCounts = field(default_factory=IndexCounts)


def higher_is_better(metric: str, unit: str, specs: Mapping[str, MetricSpec]) -> bool:
    spec = specs.get(metric)
    return spec.higher_is_better if spec is not None else unit in _HIGHER_UNITS


def _link(source: str, page_dir: Path, cache: dict[str, str | None]) -> str | None:
    """The run's report.html relative to ``page_dir``, when the run folder has one."""
    if source not in cache:
        report = Path(source).parent / HTML_FILE if source else None
        cache[source] = (
            # "./" first: a folder named "javascript:..." stays a path, never a scheme
            quote("./" + Path(os.path.relpath(report, page_dir)).as_posix())
            if report is not None and report.is_file()
            else None
        )
    return cache[source]


def _step_views(s: Series, higher: bool) -> tuple[StepView, ...]:
    return tuple(
        StepView(
            s.points[step.index].started_at,
            step.change,
            step.before,
            step.after,
            step.causes,
            step.change < 0 if higher else step.change > 0,
        )
        for step in s.steps
    )


def _series_view(s: Series, higher: bool) -> SeriesView:
    chart = history_svg(
        [ChartPoint(p.median, p.low, p.high, bool(p.dirty)) for p in s.points],
        s.levels,
        [step.index for step in s.steps],
    )
    clean = [p for p in s.points if not p.dirty]
    return SeriesView(
        s.metric,
        s.unit,
        s.model,
        s.identity,
        s.changed_from_before,
        chart,
        _step_views(s, higher),
        len(s.points),
        len(s.points) - len(clean),
        figure(clean[-1].median if clean else None, NO_CLEAN_RUN),
    )


def _value(median: float, low: float, high: float) -> str:
    if math.isfinite(median) and math.isfinite(low) and math.isfinite(high) and low != high:
        return f"{median:.4g} ({low:.4g}..{high:.4g})"
    return figure(median)


def _run_rows(
    found: Sequence[Series], metrics: Sequence[str], page_dir: Path, links: dict[str, str | None]
) -> list[RunRow]:
    """One row per run of the case, newest first, its value of each metric."""
    rows: dict[tuple[str, str, str], dict[str, object]] = {}
    for s in found:
        for p in s.points:
            row = rows.setdefault(
                (p.started_at, p.run_id, p.source),
                {"identity": s.identity, "dirty": p.dirty, "values": {}},
            )
            values = row["values"]
            assert isinstance(values, dict)
            values[s.metric] = _value(p.median, p.low, p.high)
    out = []
    for (started_at, run_id, source), row in sorted(rows.items(), reverse=True):
        values = row["values"]
        assert isinstance(values, dict)
        dirty = row["dirty"]
        assert isinstance(dirty, tuple)
        out.append(
            RunRow(
                started_at,
                run_id,
                _link(source, page_dir, links),
                str(row["identity"]),
                dirty,
                tuple(str(values.get(m, "")) for m in metrics),
            )
        )
    return out


def _write(env: jinja2.Environment, path: Path, template: str, **context: object) -> None:
    write_text_atomic(path, env.get_template(template).render(**context), durable=False)


def _drop_stale(out: Path, machines: int, cases: Mapping[str, int]) -> None:
    """Remove the pages of an earlier build that this one did not write (a machine or case
    no longer in the records): only files named as this module names them."""
    written = {out / f"machine-{n}" / "index.html" for n in range(1, machines + 1)}
    for n, count in enumerate(cases.values(), start=1):
        written.update(out / f"machine-{n}" / f"case-{c}.html" for c in range(1, count + 1))
    for folder in out.glob("machine-*"):
        if not folder.is_dir() or not re.fullmatch(r"machine-\d+", folder.name):
            continue
        for page in folder.iterdir():
            if re.fullmatch(r"(case-\d+|index)\.html", page.name) and page not in written:
                page.unlink()
        with contextlib.suppress(OSError):
            folder.rmdir()  # only when empty


def build_site(
    paths: Iterable[Path],
    out: Path,
    *,
    min_effect: float = 0.05,
    incremental: bool = True,
    fit_dirty: bool = False,
) -> SiteResult:
    """Build the site for the records under ``paths`` into ``out``; returns what it did.
    ``fit_dirty``: fit runs measured on a dirty machine too (still marked)."""
    make_dir(out)
    index = out / INDEX_FILE
    if not incremental:
        index.unlink(missing_ok=True)
    counts = IndexCounts()
    collector = Collector(fit_dirty=fit_dirty)
    for digest in indexed_digests(paths, index, counts):
        collector.add(digest)
    specs = all_specs()
    env = template_environment("html")  # one per build: each template compiled once
    links: dict[str, str | None] = {}
    machines: list[MachineView] = []
    pages = 0
    for number, (machine, case_ids) in enumerate(collector.cases().items(), start=1):
        folder = out / f"machine-{number}"
        make_dir(folder)
        rows: list[CaseRow] = []
        regressions: list[Regression] = []
        runs: set[tuple[str, str]] = set()
        for case_number, case_id in enumerate(case_ids, start=1):
            page = f"case-{case_number}.html"
            found = list(collector.series(min_effect, only=(machine, case_id)))
            metrics = list(dict.fromkeys(s.metric for s in found))
            views = []
            # a series of model files the case no longer runs holds no open regression
            latest = max((s.points[-1].started_at for s in found if s.points), default="")
            for s in found:
                higher = higher_is_better(s.metric, s.unit, specs)
                views.append(_series_view(s, higher))
                runs.update((p.run_id, p.started_at) for p in s.points)
                current = bool(s.points) and s.points[-1].started_at == latest
                step = regression_in_effect(s, higher) if current else None
                if step is not None:
                    shown = _step_views(s, higher)[s.steps.index(step)]
                    regressions.append(Regression(case_id, page, s.metric, s.identity, shown))
            run_rows = _run_rows(found, metrics, folder, links)
            _write(
                env,
                folder / page,
                "site_case.html.j2",
                machine=machine,
                case_id=case_id,
                series=views,
                metrics=metrics,
                runs=run_rows,
            )
            pages += 1
            rows.append(
                CaseRow(
                    case_id,
                    page,
                    len(metrics),
                    len(run_rows),
                    sum(len(v.steps) for v in views),
                    sum(1 for r in run_rows if r.dirty),
                )
            )
        view = MachineView(
            machine, f"machine-{number}/index.html", len(runs), tuple(rows), tuple(regressions)
        )
        _write(env, folder / "index.html", "site_machine.html.j2", machine=view)
        pages += 1
        machines.append(view)
    _write(env, out / "index.html", "site_index.html.j2", machines=machines, runs=collector.runs)
    _drop_stale(out, len(machines), {m.key: len(m.cases) for m in machines})
    return SiteResult(out, len(machines), pages + 1, collector.runs, counts)
