"""The Engines table's cells that are not one metric each: whose memory a row shows, and how its
tokens were counted.

Memory: an in-process row shows the worker's peak RSS (the worker is the engine); an HTTP row
shows the server process's (``http_throughput.server_peak_bytes``) or ``n/a`` with the reason
the record gives (``server_memory``: a remote server, no listener found, ...), never the
worker's, which holds only the HTTP client. Tokens: in process, the token ids themselves; over
HTTP, the model's tokenizer on each chunk's text, or one a chunk when no tokenizer was local
(``counted_by``).
"""

from __future__ import annotations

from collections.abc import Sequence

from harness.core.types import CaseResult
from harness.report.formatting import MISSING
from harness.report.memory import memory_scale
from harness.report.table import Cell, Column, metric_cell, stats
from harness.scenarios import http_throughput as http

WORKER_PEAK = "memory.process_peak_rss_bytes"
NOT_RECORDED = "n/a: not recorded (a run made before the server's memory was read)"
COUNTED = {
    "tokenizer": ("model's tokenizer", "each chunk's text through the model's own tokenizer"),
    "chunks": (
        "1 a chunk",
        "no local tokenizer: each streamed chunk counted as one token (wrong when a chunk "
        "carries several); give the url: model a local source with tokenizer.json",
    ),
}


def memory_column(unit_label: str) -> Column:
    return Column(
        f"memory ({unit_label})" if unit_label else "memory",
        numeric=True,
        title="peak resident memory: the server process (HTTP rows), the worker (in process)",
    )


def memory_cells(rows: Sequence[CaseResult], served: frozenset[str]) -> tuple[Column, list[Cell]]:
    """The memory column for ``rows`` (``served``: the models behind HTTP) and its cells."""
    found = [
        r.metric(http.SERVER_RSS.name) if _http(r, served) else r.metric(WORKER_PEAK) for r in rows
    ]
    medians = [stats(m).median for m in found if m is not None]
    scale = memory_scale(http.SERVER_RSS.unit, medians)
    cells = []
    for result, measured in zip(rows, found, strict=True):
        if measured is not None:
            whose = "server process" if _http(result, served) else "worker process (in process)"
            cell = metric_cell(measured, scale, spread=False)
            note = _server_note(result) if _http(result, served) else None
            cells.append(Cell(cell.text, cell.sort, title=f"{whose}; {cell.title}", note=note))
        elif _http(result, served):
            why = _reason(result)
            cells.append(Cell("n/a", title=why, note=why.removeprefix("n/a: ")))
        else:
            cells.append(Cell(MISSING, title="no worker memory recorded"))
    return memory_column(scale.label), cells


def _http(result: CaseResult, served: frozenset[str]) -> bool:
    return result.model in served or result.scenario == http.SCENARIO.name


def _reason(result: CaseResult) -> str:
    note = http.ServedArtifacts.of(result).server_memory
    if note is not None and note.startswith("n/a"):
        return note
    return NOT_RECORDED


def _server_note(result: CaseResult) -> str | None:
    note = http.ServedArtifacts.of(result).server_memory
    return note if note is not None and "resident" in note else None  # no peak: say so


COUNTED_COLUMN = Column(
    "tokens counted by",
    title="how generated tokens were counted: token ids (in process), the model's tokenizer "
    "on each chunk, or one a chunk (HTTP without a local tokenizer)",
)


def counted_by_cell(result: CaseResult, served: frozenset[str]) -> Cell:
    if not _http(result, served):
        return Cell("token ids", title="in process: the generated token ids themselves")
    how = http.ServedArtifacts.of(result).counted_by
    text, title = COUNTED.get(str(how), (MISSING, "not recorded"))
    return Cell(text, title=title)
