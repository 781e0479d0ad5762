"""``quality``: perplexity, agreement and KL (pure, table-driven), and the scenario on a real
tiny llama compared with itself and with another model."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from pydantic import ValidationError

from harness.backends.fake import BACKEND as FAKE
from harness.backends.mlx_lm import BACKEND
from harness.scenarios import quality
from harness.scenarios.base import ScenarioContext
from harness.scenarios.quality import SCENARIO, QualityParams


def logs(*rows: list[float]) -> np.ndarray:
    probs = np.asarray(rows, dtype=np.float64)
    return np.log(probs / probs.sum(axis=-1, keepdims=True)).astype(np.float32)


UNIFORM4 = logs([1, 1, 1, 1], [1, 1, 1, 1])
SURE = logs([1e-9, 1, 1e-9, 1e-9], [1e-9, 1e-9, 1, 1e-9])


@pytest.mark.parametrize(
    ("logprobs", "tokens", "expected"),
    [
        (UNIFORM4, [0, 3, 2], 4.0),  # uniform over 4: perplexity 4 whatever the tokens
        (SURE, [0, 1, 2], 1.0),  # certain and right
        (logs([1, 3]), [0, 1], 4 / 3),
    ],
)
def test_perplexity(logprobs: np.ndarray, tokens: list[int], expected: float) -> None:
    assert quality.perplexity(logprobs, tokens) == pytest.approx(expected, rel=1e-5)


@pytest.mark.parametrize(
    ("model", "reference", "agree", "kl"),
    [
        (SURE, SURE, 1.0, 0.0),
        (UNIFORM4, UNIFORM4, 1.0, 0.0),
        (logs([3, 1]), logs([1, 3]), 0.0, 0.5 * math.log(3)),  # KL(ref || model), one row
        (logs([1, 1]), logs([1, 3]), 0.0, 0.75 * math.log(1.5) + 0.25 * math.log(0.5)),
    ],
)
def test_agreement_and_kl(
    model: np.ndarray, reference: np.ndarray, agree: float, kl: float
) -> None:
    assert quality.agreement(model, reference) == pytest.approx(agree)
    assert quality.kl_divergence(model, reference) == pytest.approx(kl, abs=1e-6)


@pytest.mark.parametrize(
    ("n", "size", "count", "expected"),
    [
        (10, 4, 5, [4, 4]),  # the short tail is dropped
        (10, 4, 1, [4]),
        (3, 4, 2, [3]),  # shorter than one item: the whole text
        (1, 4, 2, []),
    ],
)
def test_chunked(n: int, size: int, count: int, expected: list[int]) -> None:
    items = quality.chunked(list(range(n)), size, count)
    assert [len(i) for i in items] == expected
    assert [t for i in items for t in i] == list(range(sum(expected)))


def test_reference_needs_one_source() -> None:
    with pytest.raises(ValidationError, match="exactly one"):
        QualityParams.model_validate({"reference": {}})
    with pytest.raises(ValidationError, match="exactly one"):
        QualityParams.model_validate({"reference": {"embedded": "a", "path": "b"}})


def test_shipped_text_exists() -> None:
    assert quality.text_path("public_domain").stat().st_size > 2000


@pytest.fixture(scope="module")
def loaded(tiny_llama: Path):  # type: ignore[no-untyped-def]
    return BACKEND.load(tiny_llama)


def ctx(model: object, info: object, backend: str = "mlx_lm") -> ScenarioContext:
    return ScenarioContext(model, info, 3, 1, lambda: (model, info), backend)  # type: ignore[arg-type]


def test_against_itself(loaded, tiny_llama: Path) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    params = QualityParams(
        chunk_tokens=32, chunks=3, reference=quality.ReferenceModel(path=str(tiny_llama))
    )
    out = SCENARIO.run(ctx(model, info), params)
    assert not out.failures, out.failures
    found = {m.name: m.samples for m in out.metrics}
    assert len(found[quality.PERPLEXITY.name]) == 3  # one sample per item
    assert found[quality.PERPLEXITY.name] == pytest.approx(found[quality.REFERENCE_PERPLEXITY.name])
    assert found[quality.AGREEMENT.name] == (1.0, 1.0, 1.0)
    assert max(found[quality.KL.name]) == pytest.approx(0.0, abs=1e-5)
    assert out.artifacts["item_tokens"] == [32, 32, 32]


def test_against_another_model(loaded, tiny_llama: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Same tokenizer, perturbed weights: the figures tell the two apart."""
    import shutil

    import mlx.core as mx

    other = tmp_path / "other"
    shutil.copytree(tiny_llama, other)
    weights = mx.load(str(other / "model.safetensors"))
    assert isinstance(weights, dict)
    noisy = {
        k: v + 0.05 * mx.random.normal(v.shape, key=mx.random.key(1)) for k, v in weights.items()
    }
    mx.save_safetensors(str(other / "model.safetensors"), noisy)
    model, info = loaded
    params = QualityParams(
        chunk_tokens=32, chunks=2, reference=quality.ReferenceModel(path=str(other))
    )
    out = SCENARIO.run(ctx(model, info), params)
    found = {m.name: m.samples for m in out.metrics}
    assert found[quality.PERPLEXITY.name] != found[quality.REFERENCE_PERPLEXITY.name]
    assert min(found[quality.KL.name]) > 1e-4
    assert max(found[quality.AGREEMENT.name]) <= 1.0


def test_perplexity_only_without_reference(loaded) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    out = SCENARIO.run(ctx(model, info), QualityParams(chunk_tokens=16, chunks=2))
    assert [m.name for m in out.metrics] == [quality.PERPLEXITY.name]
    assert all(p > 1 for p in out.metrics[0].samples)


def test_short_text_and_unloadable_reference_fail_in_one_line(loaded, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    out = SCENARIO.run(ctx(model, info), QualityParams(text=str(empty)))
    assert out.failures == (f"text {empty} has fewer than 2 tokens",)
    not_a_model = tmp_path / "not-a-model"
    not_a_model.mkdir()
    params = QualityParams(
        chunk_tokens=16, chunks=1, reference=quality.ReferenceModel(path=str(not_a_model))
    )
    out = SCENARIO.run(ctx(model, info), params)
    assert len(out.failures) == 1
    assert out.failures[0].startswith("reference not-a-model could not be loaded: ")
    assert "\n" not in out.failures[0]
    assert [m.name for m in out.metrics] == [quality.PERPLEXITY.name]  # still measured


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"text": "no-such-text"}, "text 'no-such-text' is neither a shipped set"),
        ({"reference": {"path": "/no/such/dir"}}, "reference path /no/such/dir is not a model"),
        ({"reference": {"embedded": "nope"}}, "reference 'nope' is no embedded model"),
    ],
)
def test_bad_inputs_are_one_line(loaded, params: dict[str, object], message: str) -> None:  # type: ignore[no-untyped-def]
    model, info = loaded
    out = SCENARIO.run(ctx(model, info), QualityParams.model_validate(params))
    assert len(out.failures) == 1 and out.failures[0].startswith(message)
    assert "\n" not in out.failures[0]


def test_backend_without_logprobs_is_skipped(fake_model: Path) -> None:
    model, info = FAKE.load(fake_model)
    out = SCENARIO.run(ctx(model, info, "fake"), QualityParams())
    assert out.skip_reason is not None
    assert out.skip_reason.startswith("capability_missing: backend fake gives no next-token")
