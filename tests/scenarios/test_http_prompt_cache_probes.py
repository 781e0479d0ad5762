"""``http_prompt_cache`` in ``mode: probes``: the verdict rules on what each step reused (a
table), then the real mlx_lm.server on the content-bearing zoo/llama with a two-entry cache, as
released (its cache evicts in insertion order: mlx-lm #1495, the order check fails) and with the
one-line fix planted (fetches refresh recency: the same check passes). Both keep a longer entry
trimmed to the prompt correct."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.check_types import CheckStatus
from harness.scenarios.http_prompt_cache.probes import (
    Asked,
    ProbeRun,
    order_verdict,
    trim_verdict,
)

A_TOKENS = 100  # A's prompt tokens: a whole reuse is 99
SHARED = 80  # what D shares with A


def _run(
    *,
    d_cached: int | None = SHARED,
    a_again: int | None = A_TOKENS - 1,
    unused: int | None = 1,
    d_cold_cached: int | None = 1,
    d_warm: str = "dee",
    d_cold: str = "dee",
    a_cold: str = "ay",
) -> ProbeRun:
    return ProbeRun(
        a_cold=Asked(a_cold, A_TOKENS, 0),
        d_warm=Asked(d_warm, 90, d_cached),
        a_again=Asked("ay", A_TOKENS, a_again),
        unused=(Asked("u", 40, unused),),
        d_cold=Asked(d_cold, 90, d_cold_cached),
    )


@pytest.mark.parametrize(
    ("run", "status", "reason"),
    [
        (_run(), CheckStatus.PASS, "A reused 99 of 99 tokens"),
        (_run(a_again=SHARED), CheckStatus.FAIL, "LRU order: in a cache of 2 entries, the entry"),
        (_run(a_again=SHARED + 1), CheckStatus.FAIL, "LRU order: in a cache of 2 entries"),
        (_run(unused=39), CheckStatus.UNJUDGED, "nothing was evicted: the cache kept 3 entries"),
        (_run(a_again=90), CheckStatus.UNJUDGED, "LRU order: A reused 90 of 99 tokens, neither"),
        (_run(d_cached=0), CheckStatus.NOT_APPLICABLE, "no reuse: a prompt sharing a long"),
        (_run(d_cached=None), CheckStatus.NOT_APPLICABLE, "the server gives no usage.prompt"),
    ],
)
def test_the_order_verdict(run: ProbeRun, status: CheckStatus, reason: str) -> None:
    verdict = order_verdict(run, 2)
    assert (verdict.name, verdict.status) == ("lru_order", status)
    assert verdict.reason.startswith(reason)


@pytest.mark.parametrize(
    ("run", "status", "reason"),
    [
        (_run(), CheckStatus.PASS, "D reused 80 tokens of A's entry, same answer"),
        (_run(d_warm="ay"), CheckStatus.FAIL, "longer entry trimmed: a prompt served 80 tokens"),
        (_run(d_cold_cached=50), CheckStatus.UNJUDGED, "the cold control was not cold"),
        (_run(a_cold="dee"), CheckStatus.UNJUDGED, "not judged: the model's answer does not"),
        (_run(d_cached=1), CheckStatus.NOT_APPLICABLE, "no reuse"),
    ],
)
def test_the_trim_verdict(run: ProbeRun, status: CheckStatus, reason: str) -> None:
    verdict = trim_verdict(run)
    assert (verdict.name, verdict.status) == ("longer_trimmed", status)
    assert verdict.reason.startswith(reason)


def test_a_failing_reason_quotes_no_model_text() -> None:
    verdict = trim_verdict(_run(d_warm="\x1b[2Jsecret"))
    assert "secret" not in verdict.reason and "from character 0" in verdict.reason


FIXED = Path(__file__).resolve().parents[1] / "servers" / "lru_fixed"


@pytest.mark.real_model
@pytest.mark.slow
@pytest.mark.parametrize(
    ("env", "order"),
    [
        ((), CheckStatus.FAIL),  # as released: mlx-lm #1495
        ((("PYTHONPATH", str(FIXED)),), CheckStatus.PASS),  # fetches refresh recency
    ],
    ids=["released", "fixed"],
)
def test_mlx_lm_server_tells_fifo_from_lru(
    tmp_path: Path, env: tuple[tuple[str, str], ...], order: CheckStatus
) -> None:
    from harness.backends.http import BACKEND
    from harness.core.types import ServerRef
    from harness.models.catalog import find_embedded
    from harness.scenarios.base import ScenarioContext
    from harness.scenarios.http_prompt_cache import SCENARIO, HttpPromptCacheParams

    found = find_embedded("zoo/llama")
    if found is None or not found.prepared:
        pytest.skip("needs zoo/llama prepared")
    server = ServerRef(engine="mlx_lm", args=("--prompt-cache-size", "2"), env=env)
    model, info = BACKEND.load_server(found.path, server, tmp_path)
    try:
        ctx = ScenarioContext(model, info, 1, 0, lambda: (model, info))
        params = HttpPromptCacheParams(mode="probes", prefix_tokens=96, max_tokens=8)
        out = SCENARIO.run(ctx, params)
    finally:
        model.close()  # type: ignore[attr-defined]
    verdicts = {c.name: c for c in out.checks}
    assert verdicts["lru_order"].status is order, verdicts
    assert verdicts["longer_trimmed"].status is CheckStatus.PASS, verdicts
    steps = out.artifacts["probes"]
    assert steps["d_warm"]["cached_tokens"] > 64  # D was served from A's entry cut back
    assert [m.name for m in out.metrics] == ["http_prompt_cache.probes_held"]
