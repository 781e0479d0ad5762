"""kv_sweep: each KV setting on a zoo model (bytes ordered, the unquantized cache identical to
its reference), a planted break that changes the answer caught by ``require_same_tokens`` and
by a gate, and a case through the worker."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends.kv_runs import KVQuantizedRuns, KVRun, KVSetting
from harness.core.types import Case, Gate, Status
from harness.runner.active_run import ActiveRun
from harness.runner.judge import judge
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.kv_sweep import SCENARIO, KVSweepParams, divergence
from harness.scenarios.specs import all_specs
from tests.runner.cases import path_case

GEN = 8
COMMON: dict[str, Any] = {"context_tokens": 300, "gen_tokens": GEN, "kv_group_size": 32}


@pytest.mark.parametrize(
    ("given", "bits"), [(None, None), ("none", None), ("None", None), (8, 8), (4, 4)]
)
def test_kv_bits_accepts_none_and_what_mlx_quantizes(given: object, bits: int | None) -> None:
    assert KVSweepParams(kv_bits=given).kv_bits == bits  # type: ignore[arg-type]


@pytest.mark.parametrize("given", [7, 16, "four"])
def test_kv_bits_refuses_the_rest(given: object) -> None:
    with pytest.raises(ValidationError, match="kv_bits"):
        KVSweepParams(kv_bits=given)  # type: ignore[arg-type]


def _onehot(tokens: Sequence[int], vocab: int = 5) -> np.ndarray:
    rows = np.full((len(tokens), vocab), -10.0, dtype=np.float32)
    rows[np.arange(len(tokens)), list(tokens)] = 0.0
    return rows


@pytest.mark.parametrize(
    ("reference", "greedy", "at"),
    [((1, 2, 3), (1, 2, 3), 3), ((1, 2, 3), (0, 2, 3), 0), ((1, 2, 3), (1, 2, 4), 2), ((), (), 0)],
)
def test_divergence_is_the_first_differing_position(
    reference: tuple[int, ...], greedy: tuple[int, ...], at: int
) -> None:
    assert divergence(reference, _onehot(greedy)) == at


@pytest.fixture(scope="module")
def qwen3(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The zoo's qwen3 (head_dim 32, so its KV quantizes in groups of 32), plainly random: these
    tests plant breaks from a given token on, which needs a 4-bit cache that keeps the first
    tokens; the content-bearing qwen3's answer already moves at its first token at 4 bits."""
    import dataclasses

    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    plain = dataclasses.replace(FAMILIES["qwen3"], content_bearing=False)
    return build(plain, tmp_path_factory.mktemp("zoo") / "qwen3")


@pytest.fixture(scope="module")
def loaded(qwen3: Path) -> Any:
    from harness.backends import BACKENDS

    model, _info = BACKENDS.get("mlx_lm").load(qwen3)
    assert isinstance(model, KVQuantizedRuns)
    return model


def _run(model: object, **params: Any) -> ScenarioOutput:
    from harness.backends.base import LoadInfo

    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(model, info, repeats=2, warmup=0, reload=lambda: (model, info))
    return SCENARIO.run(ctx, KVSweepParams(**{**COMMON, **params}))


def _values(out: ScenarioOutput) -> dict[str, float]:
    return {m.name.split(".", 1)[1]: float(np.median(m.samples)) for m in out.metrics}


@pytest.fixture(scope="module")
def sweep(loaded: Any) -> dict[int | None, ScenarioOutput]:
    return {bits: _run(loaded, kv_bits=bits) for bits in (None, 8, 4)}


# (kv_bits, KV bytes / unquantized: float32 cache, groups of 32 with a float32 scale and bias)
SETTINGS = [(None, 1.0), (8, (8 + 64 / 32) / 32), (4, (4 + 64 / 32) / 32)]


@pytest.mark.parametrize(("bits", "ratio"), SETTINGS, ids=["none", "8", "4"])
def test_each_setting_reports_its_metrics(
    sweep: dict[int | None, ScenarioOutput], bits: int | None, ratio: float
) -> None:
    out = sweep[bits]
    assert out.failures == () and out.skip_reason is None
    values = _values(out)
    assert set(values) == {s.name.split(".", 1)[1] for s in SCENARIO.metrics}
    assert values["kv_bytes_ratio"] == pytest.approx(ratio)
    assert values["prefill_tps"] > 0 and values["decode_tps"] > 0 and values["peak_bytes"] > 0
    assert out.artifacts["cache_types"] == (["KVCache"] if bits is None else ["QuantizedKVCache"])
    assert all(name in all_specs() for name in (m.name for m in out.metrics))


def test_fewer_bits_hold_fewer_bytes(sweep: dict[int | None, ScenarioOutput]) -> None:
    held = {bits: _values(out)["kv_bytes"] for bits, out in sweep.items()}
    assert held[4] < held[8] < held[None]
    # 300 tokens x 2 layers x 2 KV heads x 32 dims x (keys + values) x 4 bytes
    assert held[None] == 300 * 2 * 2 * 32 * 2 * 4


def test_the_unquantized_cache_is_its_own_reference(
    sweep: dict[int | None, ScenarioOutput],
) -> None:
    values = _values(sweep[None])
    assert values["kl"] == 0.0
    assert values["first_token_agreement"] == 1.0
    assert values["divergence_token"] == GEN


class ChangesTheAnswer:
    """A model whose quantized path gives a different answer from generated token ``at`` on:
    the most likely token of each later position moves to the next vocabulary entry."""

    def __init__(self, model: Any, at: int) -> None:
        self._model = model
        self._at = at

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def kv_run(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        kv: KVSetting,
        forced: Sequence[int] | None = None,
    ) -> KVRun:
        run: KVRun = self._model.kv_run(prompt, max_tokens=max_tokens, kv=kv, forced=forced)
        if kv.bits is None:
            return run
        logprobs = run.logprobs.copy()
        logprobs[self._at :] = np.roll(logprobs[self._at :], 1, axis=-1)
        return replace(run, logprobs=logprobs)


def _verdict(out: ScenarioOutput, gates: tuple[Gate, ...] = ()) -> Status:
    case = replace(_case(Path("."), kv_bits=4), gates=gates)
    status = Status.FAILED if out.failures else Status.PASSED
    return judge(case, status, out.metrics, None, all_specs())[0]


# (the break from token, require_same_tokens, agreement, divergence, failed)
BREAKS = [
    (0, GEN, 0.0, 0, True),
    (3, GEN, 1.0, 3, True),
    (3, 3, 1.0, 3, False),  # the first 3 are the same: what was asked
    (3, None, 1.0, 3, False),  # measured only
]


@pytest.mark.parametrize(("at", "require", "agreement", "diverges", "failed"), BREAKS)
def test_a_planted_break_is_caught(
    loaded: Any, at: int, require: int | None, agreement: float, diverges: int, failed: bool
) -> None:
    out = _run(ChangesTheAnswer(loaded, at), kv_bits=4, require_same_tokens=require)
    values = _values(out)
    assert values["first_token_agreement"] == agreement
    assert values["divergence_token"] == diverges
    assert values["kl"] > 0.1  # far from the clean 4-bit figure
    assert bool(out.failures) is failed
    if failed:
        assert (
            f"changes the answer: the greedy output differs from the unquantized cache's at "
            f"generated token {diverges}" in out.failures[0]
        )


def test_a_gate_on_the_divergence_catches_the_break_and_passes_the_clean_run(
    loaded: Any, sweep: dict[int | None, ScenarioOutput]
) -> None:
    gate = (Gate("kv_sweep.divergence_token", ">=", float(GEN)),)
    broken = _run(ChangesTheAnswer(loaded, 2), kv_bits=4)
    assert _verdict(broken, gate) is Status.FAILED
    assert _verdict(sweep[None], gate) is Status.PASSED
    assert _verdict(sweep[None], (Gate("kv_sweep.kl", "<=", 0.0),)) is Status.PASSED


def _case(path: Path, **params: Any) -> Case:
    bits = params.get("kv_bits")
    return path_case(
        path,
        "qwen3",
        "kv_sweep",
        KVSweepParams(**{**COMMON, **params}).model_dump(),
        case_id=f"t::qwen3::kv_sweep[kv_bits={bits}]",
    )


@pytest.fixture()
def session(tmp_path: Path) -> Iterator[ActiveRun]:
    session = ActiveRun(tmp_path, [], run_id="r")
    try:
        yield session
    finally:
        session.close_worker()


def test_through_the_worker(qwen3: Path, session: ActiveRun) -> None:
    result = session.run_case(_case(qwen3, kv_bits=8, require_same_tokens=1))
    assert result.status is Status.PASSED, result.reason
    ratio = result.metric("kv_sweep.kv_bytes_ratio")
    assert ratio is not None and ratio.median == pytest.approx(SETTINGS[1][1])
    assert result.artifacts["kv"] == "8-bit"


# (zoo family, params, what the skip names)
UNSUPPORTED = [
    ("qwen3", {"kv_group_size": 64}, "group size 64"),  # heads of 32
    ("gemma3_text", {"kv_group_size": 32}, "RotatingKVCache"),  # sliding-window layers
]


@pytest.mark.parametrize(("family", "params", "fragment"), UNSUPPORTED, ids=["group", "window"])
def test_a_cache_that_cannot_be_quantized_is_skipped_with_why(
    tmp_path_factory: pytest.TempPathFactory, family: str, params: dict[str, Any], fragment: str
) -> None:
    from harness.backends import BACKENDS
    from tests.zoo_shared import zoo_family

    model, _info = BACKENDS.get("mlx_lm").load(zoo_family(tmp_path_factory, family))
    out = _run(model, kv_bits=4, **params)
    assert out.metrics == ()
    assert out.skip_reason is not None and out.skip_reason.startswith("not quantizable: ")
    assert fragment in out.skip_reason
