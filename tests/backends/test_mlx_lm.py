"""The mlx-lm adapter on a real tiny model generated in the test run (no downloads)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.mlx_lm import BACKEND


@pytest.fixture(scope="module")
def loaded(tiny_llama: Path):  # type: ignore[no-untyped-def]
    return BACKEND.load(tiny_llama)


def test_load_info(loaded, tiny_llama: Path) -> None:  # type: ignore[no-untyped-def]
    _model, info = loaded
    assert info.load_s > 0
    assert info.weights_bytes == (tiny_llama / "model.safetensors").stat().st_size
    assert info.device.startswith(("cpu", "gpu"))
    assert info.details["mlx_active_bytes"] > 0


def test_stream_ignores_eos_and_matches_mlx_lm(loaded) -> None:  # type: ignore[no-untyped-def]
    from mlx_lm import stream_generate

    model, _info = loaded
    prompt = model.encode("The capital of France is")
    ours = list(model.stream_tokens(prompt, max_tokens=12, ignore_eos=True))
    assert len(ours) == 12
    assert ours == list(model.stream_tokens(prompt, max_tokens=12))  # greedy is deterministic
    saved = model.tokenizer._eos_token_ids
    model.tokenizer._eos_token_ids = set()  # as mlx_lm.benchmark does, to avoid early stops
    try:
        theirs = [
            r.token for r in stream_generate(model.model, model.tokenizer, prompt, max_tokens=12)
        ]
    finally:
        model.tokenizer._eos_token_ids = saved
    assert ours == theirs


def test_stops_at_eos_when_asked(loaded) -> None:  # type: ignore[no-untyped-def]
    """The tiny random model never emits its own EOS, so one is planted: the fourth token it
    generates greedily is made an end-of-sequence id. Asked to stop, the stream ends just
    before it; told to ignore EOS, it runs on past it."""
    model, _ = loaded
    prompt = model.encode("hello")
    free = list(model.stream_tokens(prompt, max_tokens=12, ignore_eos=True))
    planted = free[3]
    first = free.index(planted)  # the planted id may occur earlier too
    saved = model.tokenizer._eos_token_ids
    model.tokenizer._eos_token_ids = {planted}
    try:
        assert model.eos_token_ids == frozenset({planted})
        stopped = list(model.stream_tokens(prompt, max_tokens=12, ignore_eos=False))
        ignored = list(model.stream_tokens(prompt, max_tokens=12, ignore_eos=True))
    finally:
        model.tokenizer._eos_token_ids = saved
    assert stopped == free[:first] and planted not in stopped
    assert ignored == free and len(ignored) == 12


def test_chat_template_is_applied(loaded) -> None:  # type: ignore[no-untyped-def]
    model, _ = loaded
    tokens = model.chat_tokens([{"role": "user", "content": "hi"}])
    text = model.decode(tokens)
    assert "<|im_start|>user" in text and text.rstrip().endswith("<|im_start|>assistant")


def test_load_error_is_one_line(tmp_path: Path) -> None:
    from harness.backends.base import BackendError

    (tmp_path / "config.json").write_text('{"model_type": "no_such_arch"}')
    with pytest.raises(BackendError) as info:
        BACKEND.load(tmp_path)
    assert "\n" not in str(info.value) and str(info.value).startswith("mlx_lm.load failed")


@pytest.mark.parametrize(
    "source",
    [
        "zoo/gemma3_text",
        pytest.param("gemma3-270m", marks=(pytest.mark.real_model, pytest.mark.nightly)),
    ],
)
def test_encode_prompt_adds_bos_as_a_server_does(
    source: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """encode() is bare text; encode_prompt() is a completions prompt as mlx_lm.server makes it,
    with Gemma's BOS (greedy_text uses it in process: Gemma answers garbage without it). The zoo
    Gemma 3 (its tokenizer adds ``<bos>`` as Gemma's does) in `make test`; the real 270M, whose
    weights take seconds to load, nightly."""
    from harness.backends.base import PromptEncoding
    from harness.models.catalog import find_embedded
    from tests.zoo_shared import zoo_family

    if source.startswith("zoo/"):
        path = zoo_family(tmp_path_factory, source.removeprefix("zoo/"))
    else:
        gemma = find_embedded(source)
        if gemma is None or not gemma.prepared:
            pytest.skip(f"{source} is not prepared (run `mlx-harness models prepare`)")
        path = gemma.path
    model, _ = BACKEND.load(path)
    assert isinstance(model, PromptEncoding)
    bare = model.encode("The capital of France is")
    assert bare and bare[0] != model.tokenizer.bos_token_id
    assert model.encode_prompt("The capital of France is") == [model.tokenizer.bos_token_id, *bare]
