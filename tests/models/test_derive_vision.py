"""Tiny VLM configurations derived from mlx-vlm's config classes: a few families end to end."""

from __future__ import annotations

import pytest

from harness.models.zoo.derive_vision import (
    MAX_PARAMS,
    TrialStatus,
    shrink,
    tiny_config,
    try_family,
)


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        ({"hidden_size": 4096, "rope_theta": 1e6}, {"hidden_size": 64, "rope_theta": 1e6}),
        ({"hidden_size": None}, {"hidden_size": 64}),  # required and unset
        ({"use_bias": True, "num_hidden_layers": 32}, {"use_bias": True, "num_hidden_layers": 2}),
        ({"intermediate_size": [1, 2]}, {"intermediate_size": [1, 2]}),  # not an int: kept
    ],
)
def test_shrink(values: dict[str, object], expected: dict[str, object]) -> None:
    assert shrink(values, {"hidden_size": 64, "num_hidden_layers": 2, "intermediate_size": 8}) == (
        expected
    )


def test_tiny_config_comes_from_the_dataclasses() -> None:
    config = tiny_config("paligemma")
    assert config["model_type"] == "paligemma"
    assert config["text_config"]["hidden_size"] == 64
    assert config["vision_config"]["num_hidden_layers"] == 2


@pytest.mark.parametrize("family", ["paligemma", "pixtral"])
def test_families_that_build_tiny(family: str) -> None:
    trial = try_family(family)
    assert trial.status is TrialStatus.BUILT, trial.reason
    assert 0 < trial.params < MAX_PARAMS


def test_a_family_that_fails_says_why_in_one_line() -> None:
    trial = try_family("no_such_family_here")
    assert trial.status is TrialStatus.FAILED
    assert trial.reason.startswith("ModuleNotFoundError") and "\n" not in trial.reason
