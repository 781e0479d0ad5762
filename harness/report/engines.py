"""Engines section: the same model through several engines (in process, mlx_lm.server,
llama-server, any OpenAI-compatible URL) side by side: prefill, decode, time to first token and
memory per engine, whether their greedy answers (``greedy_text``) agree, pair by pair, and
what each server's prompt cache gives (``http_prompt_cache``).

Where a server timed itself (llama-server's ``timings``), its own prefill and decode sit beside
the client's, with what lies between (TTFT overhead, client/server decode): HTTP and SSE apart
from the engine. Memory is the server process's for HTTP rows (n/a with the reason when it
could not be measured, never the worker's), and every row says how its tokens were counted."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from harness.core.types import CaseResult, RunRecord, Status
from harness.report.engine_cells import COUNTED_COLUMN, counted_by_cell, memory_cells
from harness.report.sections import METRICS, Section
from harness.report.table import (
    Cell,
    Column,
    MetricColumn,
    Table,
    case_metric_table,
    find_metric,
)
from harness.scenarios import greedy_text
from harness.scenarios import http_prompt_cache as hpc
from harness.scenarios import http_throughput as http
from harness.scenarios import throughput as local
from harness.scenarios.prefix import common_prefix

COLUMNS: tuple[MetricColumn, ...] = (
    MetricColumn("prefill", (local.PREFILL.name, http.PREFILL.name), "prompt tokens/s"),
    MetricColumn("server prefill", (http.SERVER_PREFILL.name,), http.SERVER_PREFILL.description),
    MetricColumn("decode", (local.DECODE.name, http.DECODE.name), "generated tokens/s"),
    MetricColumn("server decode", (http.SERVER_DECODE.name,), http.SERVER_DECODE.description),
    MetricColumn("decode / server", (http.DECODE_RATIO.name,), http.DECODE_RATIO.description),
    MetricColumn("TTFT", (local.TTFT.name, http.TTFT.name), "time to first token"),
    MetricColumn("TTFT overhead", (http.TTFT_OVERHEAD.name,), http.TTFT_OVERHEAD.description),
    MetricColumn("ITL p50", (local.ITL_P50.name, http.ITL_P50.name), "inter-token latency p50"),
    MetricColumn(
        "tokens/chunk", (http.PER_CHUNK.name,), "generated tokens per streamed chunk (HTTP)"
    ),
)
SCENARIOS = (local.SCENARIO.name, http.SCENARIO.name)
CACHE_COLUMNS: tuple[MetricColumn, ...] = tuple(
    MetricColumn(label, (spec.name,), spec.description)
    for label, spec in (
        ("cold TTFT", hpc.COLD),
        ("warm TTFT", hpc.WARM),
        ("repeat TTFT", hpc.AGAIN),
        ("speed-up", hpc.SPEEDUP),
        ("cached tokens", hpc.CACHED),
        ("hit share", hpc.HIT),
    )
)


@dataclass(frozen=True)
class Engines:
    engines: Table  # model -> engine and version
    speed: Table
    agreement: Table
    prompts: int
    cache: Table  # http_prompt_cache: cold vs warm TTFT, cached tokens


def engine_of(run: RunRecord, model: str) -> str:
    identity = run.models.get(model)
    if identity is None:
        return "?"
    if identity.server:
        return identity.server
    version = run.packages.get(identity.backend.replace("_", "-"))
    return f"in process: {identity.backend}" + (f" {version}" if version else "")


def agreement_table(answers: Mapping[str, Sequence[str]]) -> Table:
    """Pair by pair: how many prompts got the same greedy answer, and where the first
    differing answer parts (characters in, with both continuations)."""
    rows = []
    for a, b in itertools.combinations(sorted(answers), 2):
        pairs = list(zip(answers[a], answers[b], strict=False))
        same = sum(x.strip() == y.strip() for x, y in pairs)
        first = next(((x, y) for x, y in pairs if x.strip() != y.strip()), None)
        if first is None:
            where = Cell("—")
        else:
            x, y = first[0].strip(), first[1].strip()
            at = common_prefix(x, y)
            where = Cell(f"char {at}: {x[at : at + 24]!r} vs {y[at : at + 24]!r}", sort=at)
        rows.append((Cell(a), Cell(b), Cell(f"{same}/{len(pairs)}", sort=same), where))
    columns = (
        Column("model"),
        Column("model"),
        Column("same answers", numeric=True),
        Column("first difference"),
    )
    return Table(columns, tuple(rows))


def build(run: RunRecord) -> Engines | None:
    served = {k for k, m in run.models.items() if m.server}
    if not served:
        return None
    passed = [r for r in run.results if r.status is Status.PASSED]
    speed_rows = sorted(
        (r for r in passed if r.scenario in SCENARIOS),
        key=lambda r: (r.case_id.rsplit("::", 1)[1].replace(r.scenario, ""), r.model),
    )
    greedy = [r for r in passed if r.scenario == greedy_text.SCENARIO.name]
    answers = _answers(greedy)
    models = sorted({r.model for r in passed if r.model in served or r.scenario in SCENARIOS})
    engines = Table(
        (Column("model"), Column("engine")),
        tuple((Cell(m), Cell(engine_of(run, m))) for m in models),
    )
    prompts = max((len(v) for v in answers.values()), default=0)
    cache_rows = [r for r in passed if r.scenario == hpc.SCENARIO.name]
    return Engines(
        engines,
        speed_table(speed_rows, frozenset(served)),
        agreement_table(answers),
        prompts,
        case_metric_table(cache_rows, CACHE_COLUMNS),
    )


def speed_table(rows: Sequence[CaseResult], served: frozenset[str]) -> Table:
    """The metric columns, then each row's memory (whose it is) and how it counted tokens."""
    table = case_metric_table(rows, COLUMNS)
    kept = [r for r in rows if any(find_metric(r, c.names) for c in COLUMNS)]
    memory, cells = memory_cells(kept, served)
    body = tuple(
        (*row, memory_cell, counted_by_cell(result, served))
        for row, result, memory_cell in zip(table.rows, kept, cells, strict=True)
    )
    return Table((*table.columns, memory, COUNTED_COLUMN), body, table.css)


def _answers(results: Sequence[CaseResult]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for result in results:
        outputs = greedy_text.GreedyTextArtifacts.of(result).outputs
        if outputs is not None:
            out[result.model] = list(outputs)
    return out


SECTION = Section(
    "engines",
    "Engines",
    build,
    claims=(f"{http.PREFIX}.", f"{hpc.PREFIX}.", f"{greedy_text.E2E.name}"),
    order=METRICS + 10,
)
