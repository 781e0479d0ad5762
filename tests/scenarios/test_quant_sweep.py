"""quant_sweep: every weight quantisation mode on the content-bearing zoo llama (bytes ordered,
the model as loaded its own reference, every quantised matmul at its dequantised twin), a
planted wrong matmul in one mode caught and named in one line while the others pass, the
modes that cannot run skipped ``n/a`` with why, and a case through the worker."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends import bandwidth
from harness.backends.base import LoadInfo, QuantUnsupported, WeightQuantizing
from harness.backends.weight_quant import QuantizedWeights, WeightQuant
from harness.core.types import Status
from harness.models.cache_dir import CACHE_ENV
from harness.runner.active_run import ActiveRun
from harness.scenarios.base import ScenarioContext, ScenarioOutput
from harness.scenarios.quant_sweep import MODES, SCENARIO, QuantSweepParams
from harness.scenarios.specs import all_specs
from tests.runner.cases import path_case

GEN = 8
COMMON: dict[str, Any] = {"prompt_tokens": 48, "gen_tokens": GEN}
QUANTS = ("none", "affine8", "affine4", "mxfp4", "nvfp4", "mxfp8")


# (quant, group_size given, the WeightQuant it means)
MEANS = [
    ("affine4", None, WeightQuant("affine", 4, 64)),
    ("affine8", 32, WeightQuant("affine", 8, 32)),
    ("mxfp4", None, WeightQuant("mxfp4", 4, 32)),
    ("nvfp4", 16, WeightQuant("nvfp4", 4, 16)),
    ("mxfp8", None, WeightQuant("mxfp8", 8, 32)),
    ("none", None, None),
]


@pytest.mark.parametrize(("quant", "group", "means"), MEANS)
def test_quant_names_mlx_mode_bits_and_group(
    quant: str, group: int | None, means: WeightQuant | None
) -> None:
    assert QuantSweepParams(quant=quant, group_size=group).weight_quant == means  # type: ignore[arg-type]


# (quant, group_size, what the error names)
REFUSED = [
    ("nvfp4", 32, "group_size 32 is not one nvfp4 takes: 16"),
    ("mxfp4", 64, "group_size 64 is not one mxfp4 takes: 32"),
    ("affine4", 16, "group_size 16 is not one affine4 takes: 32, 64, 128"),
    ("int4", None, "quant"),
]


@pytest.mark.parametrize(("quant", "group", "words"), REFUSED)
def test_a_group_size_the_mode_does_not_take_is_refused(
    quant: str, group: int | None, words: str
) -> None:
    with pytest.raises(ValidationError, match=words):
        QuantSweepParams(quant=quant, group_size=group)  # type: ignore[arg-type]


def test_every_mode_is_one_mlx_takes() -> None:
    assert {mode for mode, *_ in MODES.values()} == {"affine", "mxfp4", "nvfp4", "mxfp8"}


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The bandwidth goes to a cache of the test's own, measured on a small buffer here."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    real = bandwidth.measure
    monkeypatch.setattr(
        bandwidth, "measure_in_child", lambda reason, *_: (real(4 * 2**20, 2, reason), "")
    )


@pytest.fixture(scope="module")
def loaded(tiny_llama: Path) -> Any:
    """The zoo llama: content-bearing (its answer depends on the whole prompt)."""
    from harness.backends import BACKENDS

    model, _info = BACKENDS.get("mlx_lm").load(tiny_llama)
    assert isinstance(model, WeightQuantizing)
    return model


def _run(model: object, **params: Any) -> ScenarioOutput:
    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(model, info, repeats=2, warmup=0, reload=lambda: (model, info))
    return SCENARIO.run(ctx, QuantSweepParams(**{**COMMON, **params}))


def _values(out: ScenarioOutput) -> dict[str, float]:
    return {m.name.split(".", 1)[1]: float(np.median(m.samples)) for m in out.metrics}


@pytest.fixture(scope="module")
def matrix(loaded: Any) -> dict[str, ScenarioOutput]:
    with pytest.MonkeyPatch.context() as patch:
        real = bandwidth.measure
        patch.setattr(
            bandwidth, "measure_in_child", lambda reason, *_: (real(4 * 2**20, 2, reason), "")
        )
        return {quant: _run(loaded, quant=quant) for quant in QUANTS}


@pytest.mark.parametrize("quant", QUANTS)
def test_each_mode_reports_its_metrics_and_passes(
    matrix: dict[str, ScenarioOutput], quant: str
) -> None:
    out = matrix[quant]
    assert out.failures == () and out.skip_reason is None
    values = _values(out)
    quantised = {"matmul_kl", "matmul_divergence_token"} if quant != "none" else set()
    expected = {s.name.split(".", 1)[1] for s in SCENARIO.metrics}
    assert set(values) == expected - ({"matmul_kl", "matmul_divergence_token"} - quantised)
    assert values["prefill_tps"] > 0 and values["decode_tps"] > 0
    assert 0 < values["decode_hw_share"] <= 1 and 0 < values["prefill_hw_share"] <= 1
    assert all(name in all_specs() for name in (m.name for m in out.metrics))
    if quant != "none":
        assert values["matmul_kl"] < 1e-4  # rounding only: float32 kernels
        assert values["matmul_divergence_token"] == GEN
        assert out.artifacts["quantized_layers"] > 0 and out.artifacts["unchecked_layers"] == 0


def test_fewer_bits_hold_fewer_bytes(matrix: dict[str, ScenarioOutput]) -> None:
    held = {quant: _values(out)["weight_bytes"] for quant, out in matrix.items()}
    assert held["mxfp4"] < held["affine4"] < held["affine8"] < held["none"]
    assert held["nvfp4"] < held["affine4"] and held["mxfp8"] < held["affine8"]
    assert _values(matrix["none"])["weight_bytes_ratio"] == 1.0


def test_the_quantised_models_answer_differently(matrix: dict[str, ScenarioOutput]) -> None:
    """The content-bearing llama's answer moves under 4 bits: the quality figures can tell."""
    assert _values(matrix["none"])["kl"] == 0.0
    assert _values(matrix["none"])["divergence_token"] == GEN
    assert _values(matrix["none"])["first_token_agreement"] == 1.0
    assert 0 < _values(matrix["affine8"])["kl"] < _values(matrix["affine4"])["kl"]
    assert _values(matrix["mxfp4"])["divergence_token"] < GEN


def test_decode_ceiling_rises_as_bits_fall(matrix: dict[str, ScenarioOutput]) -> None:
    per_token = {q: out.artifacts["bytes_per_token"] for q, out in matrix.items()}
    assert per_token["affine4"] < per_token["affine8"] < per_token["none"]
    ceiling = {q: out.artifacts["decode_ceiling_tps"] for q, out in matrix.items()}
    assert ceiling["affine4"] > ceiling["none"]


class WrongMatmul:
    """A backend whose quantised matmul is wrong in one mode (mlx#3854's class): every output of
    that mode's quantised linear layers comes out rolled by one column, while the same weights
    dequantised (the twin) multiply correctly."""

    def __init__(self, model: Any, mode: str) -> None:
        self._model = model
        self._mode = mode

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def quantize_weights(self, quant: WeightQuant) -> QuantizedWeights:
        weights: QuantizedWeights = self._model.quantize_weights(quant)
        if quant.mode == self._mode:
            _perturb(weights.model.model)  # type: ignore[attr-defined]
        return weights


def _perturb(model: Any) -> None:
    import mlx.core as mx
    import mlx.nn as nn

    class Rolled(nn.QuantizedLinear):
        def __call__(self, x: Any) -> Any:
            return mx.roll(super().__call__(x), 1, axis=-1)

    for _path, module in model.named_modules():
        if type(module) is nn.QuantizedLinear:
            module.__class__ = Rolled


def test_a_wrong_matmul_in_one_mode_is_caught_and_named(loaded: Any) -> None:
    broken = WrongMatmul(loaded, "nvfp4")
    outs = {quant: _run(broken, quant=quant) for quant in QUANTS}
    failed = {quant for quant, out in outs.items() if out.failures}
    assert failed == {"nvfp4"}
    (line,) = outs["nvfp4"].failures
    assert line.startswith("nvfp4: the quantised matmul disagrees with its own weights dequantised")
    assert "\n" not in line and "max_matmul_kl 0.001" in line
    assert _values(outs["nvfp4"])["matmul_kl"] > 0.1
    assert _values(outs["nvfp4"])["matmul_divergence_token"] < GEN


def test_the_wrong_matmul_passes_when_the_limit_is_loosened(loaded: Any) -> None:
    """The verdict follows the limit: the same break at ``max_matmul_kl: 1000`` passes."""
    out = _run(WrongMatmul(loaded, "mxfp8"), quant="mxfp8", max_matmul_kl=1000.0)
    assert out.failures == ()
    assert _values(out)["matmul_kl"] > 0.1


def test_the_matmul_check_can_be_left_out(loaded: Any) -> None:
    """``check_matmul: false`` (a model too large to hold twice): no twin, no matmul figures,
    no verdict on the kernels, even on a wrong one."""
    out = _run(WrongMatmul(loaded, "mxfp8"), quant="mxfp8", check_matmul=False)
    assert out.failures == ()
    assert "matmul_kl" not in _values(out) and "kl" in _values(out)


class Refuses:
    """A backend that cannot quantise (as the installed mlx without a mode would say)."""

    def __init__(self, model: Any, why: str) -> None:
        self._model = model
        self._why = why

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def quantize_weights(self, quant: WeightQuant) -> QuantizedWeights:
        raise QuantUnsupported(self._why)


def test_a_mode_that_cannot_run_is_na_with_why(loaded: Any) -> None:
    out = _run(Refuses(loaded, "mlx 0.29.0 cannot quantise nvfp4: Invalid mode"), quant="nvfp4")
    assert out.metrics == () and out.failures == ()
    assert out.skip_reason == "n/a: mlx 0.29.0 cannot quantise nvfp4: Invalid mode"


# (what is asked of the mlx-lm backend, what the refusal names)
UNSUPPORTED = [
    (WeightQuant("mxfp6", 6, 32), "cannot quantise mxfp6: ValueError: [quantize] Invalid"),
    (
        WeightQuant("affine", 4, 4096),
        "cannot quantise affine 4-bit g4096: ValueError: [quantize] The requested group size "
        "4096 is not supported",
    ),
]


@pytest.mark.parametrize(("quant", "words"), UNSUPPORTED, ids=["mode", "group"])
def test_the_backend_refuses_in_one_line(loaded: Any, quant: WeightQuant, words: str) -> None:
    with pytest.raises(QuantUnsupported, match=r"^[^\n]*$") as caught:
        loaded.quantize_weights(quant)
    assert words in str(caught.value)


def test_an_already_quantised_model_is_refused(loaded: Any) -> None:
    weights = loaded.quantize_weights(WeightQuant("affine", 4, 64))
    with pytest.raises(QuantUnsupported, match="already quantised"):
        weights.model.quantize_weights(WeightQuant("affine", 8, 64))


def test_the_loaded_model_is_left_as_it_was(loaded: Any) -> None:
    before = loaded.weight_bytes()
    loaded.quantize_weights(WeightQuant("mxfp4", 4, 32))
    assert loaded.weight_bytes() == before


def test_a_backend_without_the_capability_is_skipped(fake_model: Path) -> None:
    from harness.backends.fake import BACKEND as FAKE

    model, _info = FAKE.load(fake_model)
    out = _run(model, quant="affine4")
    assert out.skip_reason is not None and "weight quantisation" in out.skip_reason


@pytest.fixture()
def session(tmp_path: Path) -> Iterator[ActiveRun]:
    session = ActiveRun(tmp_path, [], run_id="r")
    try:
        yield session
    finally:
        session.close_worker()


def test_through_the_worker(tiny_llama: Path, session: ActiveRun) -> None:
    params = QuantSweepParams(**{**COMMON, "quant": "affine8"}).model_dump()
    case = path_case(
        tiny_llama, "llama", "quant_sweep", params, case_id="t::llama::quant_sweep[affine8]"
    )
    result = session.run_case(replace(case))
    assert result.status is Status.PASSED, result.reason
    ratio = result.metric("quant_sweep.weight_bytes_ratio")
    assert ratio is not None and 0 < ratio.median < 0.5
    assert result.artifacts["quant"] == "affine 8-bit g64"


def test_a_mixture_of_experts_twin_expands_the_experts(tmp_path: Path) -> None:
    """The experts' quantised gather_qmm is checked too: the twin holds them dequantised."""
    from harness.backends import BACKENDS
    from harness.models.zoo.build import build
    from harness.models.zoo.families import FAMILIES

    model, _info = BACKENDS.get("mlx_lm").load(build(FAMILIES["qwen3_moe"], tmp_path / "moe"))
    out = _run(model, quant="nvfp4")
    assert out.failures == () and out.skip_reason is None
    assert out.artifacts["unchecked_layers"] == 0
    assert _values(out)["matmul_kl"] < 1e-4
