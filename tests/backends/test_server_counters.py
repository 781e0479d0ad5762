"""A server's counters read from llama-server's ``/metrics`` and ``/slots`` (both formats of
``n_decoded``), and nothing from what is not such a page."""

from __future__ import annotations

from typing import Any

import pytest

from harness.backends.server_counters import (
    Activity,
    from_metrics,
    from_slots,
    prometheus_values,
)

LLAMA_METRICS = """# HELP llamacpp:prompt_tokens_total Number of prompt tokens processed.
# TYPE llamacpp:prompt_tokens_total counter
llamacpp:prompt_tokens_total 120
llamacpp:n_decode_total 4321
llamacpp:requests_processing 1
llamacpp:requests_deferred 0
"""


def test_metrics_page() -> None:
    assert from_metrics(LLAMA_METRICS) == Activity(1, 4321, "/metrics")
    assert from_metrics("# nothing\nother_metric 3\n") is None
    assert prometheus_values('x{slot="0"} 2\nbad line\ny nan\nz 1e3') == {"x": 2.0, "z": 1000.0}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            [
                {"id": 0, "is_processing": True, "next_token": [{"n_decoded": 7}]},
                {"id": 1, "is_processing": False, "next_token": [{"n_decoded": 3}]},
            ],
            Activity(1, 10, "/slots"),
        ),
        ([{"id": 0, "is_processing": False, "n_decoded": 5}], Activity(0, 5, "/slots")),
        ([{"id": 0, "is_processing": False}], Activity(0, None, "/slots")),
        ({"error": "slots endpoint disabled"}, None),
        ([], None),
        ([{"id": 0}], None),
    ],
)
def test_slots(body: Any, expected: Activity | None) -> None:
    assert from_slots(body) == expected
