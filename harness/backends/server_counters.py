"""What a server says it is doing now, from its own counters: the requests it is processing and
the decode steps it has run, where it publishes them.

llama-server publishes both: ``/metrics`` (Prometheus text, with ``--metrics``):
``llamacpp:requests_processing`` and ``llamacpp:n_decode_total``; and ``/slots`` (JSON, on by
default): each slot's ``is_processing`` and its tokens decoded (``n_decoded``, under
``next_token`` in newer builds). mlx_lm.server and mlx_vlm.server publish neither: then there is
no reading (None), and a scenario falls back on what a client can see.

A reading never raises: an endpoint that is missing, refuses, or answers with something else is
no reading from it.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from harness.backends.openai_client import Endpoint, fetch

if TYPE_CHECKING:
    import httpx

METRICS_PATH = "/metrics"
SLOTS_PATH = "/slots"
PROCESSING = "llamacpp:requests_processing"
DECODES = "llamacpp:n_decode_total"
CAP_BYTES = 1 << 20  # a counters page is a few KiB


@dataclass(frozen=True)
class Activity:
    """One reading: requests the server is processing, the decode steps (or tokens) it has run
    so far (None: it does not say), and where the reading came from (``/metrics``, ``/slots``)."""

    processing: int
    decoded: int | None
    source: str

    @property
    def idle(self) -> bool:
        return self.processing == 0


def prometheus_values(text: str) -> dict[str, float]:
    """``name value`` lines of a Prometheus text page (labels dropped, the last line of a name
    kept; comments and malformed lines skipped)."""
    values: dict[str, float] = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 2:
            continue
        name = parts[0].split("{", 1)[0]
        try:
            value = float(parts[1])
        except ValueError:
            continue
        if math.isfinite(value):
            values[name] = value
    return values


def from_metrics(text: str) -> Activity | None:
    """An :class:`Activity` from llama-server's ``/metrics`` page (None: not such a page)."""
    values = prometheus_values(text)
    if PROCESSING not in values:
        return None
    decoded = values.get(DECODES)
    return Activity(
        int(values[PROCESSING]), None if decoded is None else int(decoded), METRICS_PATH
    )


def _slot_decoded(slot: Mapping[str, Any]) -> int | None:
    nested = slot.get("next_token")
    if isinstance(nested, list) and nested and isinstance(nested[0], Mapping):
        nested = nested[0]
    for source in (nested, slot):
        if isinstance(source, Mapping):
            value = source.get("n_decoded")
            if isinstance(value, int) and not isinstance(value, bool):
                return value
    return None


def from_slots(body: Any) -> Activity | None:
    """An :class:`Activity` from llama-server's ``/slots`` JSON (None: not such a list). Slots'
    ``n_decoded`` count the tokens of their current or last request, summed."""
    if not isinstance(body, list) or not body or not all(isinstance(s, Mapping) for s in body):
        return None
    if not all(isinstance(s.get("is_processing"), bool) for s in body):
        return None
    processing = sum(1 for s in body if s["is_processing"])
    counts = [_slot_decoded(s) for s in body]
    decoded = (
        sum(c for c in counts if c is not None) if all(c is not None for c in counts) else None
    )
    return Activity(processing, decoded, SLOTS_PATH)


def read_activity(
    client: httpx.Client, endpoint: Endpoint, prefer: str | None = None
) -> Activity | None:
    """The server's activity now, from ``/metrics`` or else ``/slots`` (``prefer``: the one that
    answered before, asked first); None when neither answers with counters."""
    paths: tuple[str, ...] = (METRICS_PATH, SLOTS_PATH)
    if prefer in paths:
        paths = (prefer, *(p for p in paths if p != prefer))
    for path in paths:
        answer = fetch(client, endpoint, "GET", path, cap_bytes=CAP_BYTES)
        if answer.error is not None or answer.status != 200:
            continue
        text = answer.data.decode("utf-8", errors="replace")
        if path == METRICS_PATH:
            found = from_metrics(text)
        else:
            try:
                found = from_slots(json.loads(text))
            except ValueError:
                found = None
        if found is not None:
            return found
    return None
