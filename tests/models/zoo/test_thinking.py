"""The zoo's thinker: a tiny model trained to answer with a ``<think>`` block, then the answer.

The training examples (the template renders the think block and the answer after the prompt,
ending in end of turn; thinking off: the answer alone, the prompt closing an empty block), and
the prepared thinker (`make models`): each question answered as trained, thinking on and off,
its reasoning and answer depending on the prompt.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.models.zoo import thinking
from harness.models.zoo.families_thinker import THINKER_FAMILIES
from tests.installed import require

require("mlx_lm")

NAME = "qwen3-thinker"


@pytest.fixture(scope="module")
def tokenizer(tmp_path_factory: pytest.TempPathFactory) -> Any:
    from mlx_lm.utils import load_tokenizer

    from harness.models.zoo.common import write_tokenizer

    folder = tmp_path_factory.mktemp("thinker")
    write_tokenizer(THINKER_FAMILIES[NAME].resolved(), folder)
    return load_tokenizer(folder)


def test_the_thinker_is_a_trained_variant_mlx_lm_sees_thinking(tokenizer: Any) -> None:
    family = THINKER_FAMILIES[NAME]
    assert family.thinking and not family.calling and not family.content_bearing
    assert "trained" in family.tags and "thinking" in family.tags
    assert tokenizer.has_thinking and tokenizer.think_start == "<think>"


@pytest.mark.parametrize("on", [True, False])
def test_examples_hold_the_think_block_then_the_answer(tokenizer: Any, on: bool) -> None:
    for city, country in thinking.PLACES:
        ex = thinking.example(tokenizer, city, country, thinking=on)
        assert ex.answer[-1] in set(tokenizer.eos_token_ids)
        said = tokenizer.decode(list(ex.answer[:-1]), skip_special_tokens=False)
        assert said == thinking.expected_text(city, country, thinking=on)
        prompt = tokenizer.decode(list(ex.prompt), skip_special_tokens=False)
        assert thinking.question(city) in prompt
        assert prompt.endswith("<think>\n\n</think>\n\n") is (not on)


def test_the_prepared_thinker_thinks_about_what_it_is_asked() -> None:
    from mlx_lm import load

    from harness.models.catalog import find_embedded

    found = find_embedded(f"zoo/{NAME}")
    if found is None or not found.prepared:
        pytest.skip(f"not prepared: zoo/{NAME} (run `make models`)")
    marker = json.loads((Path(found.path) / "harness-model.json").read_text())
    assert marker["content"]["answers_right"] == marker["content"]["questions"]
    model, tok = load(str(found.path))
    answers = {}
    for city, country in thinking.PLACES:
        for on in (True, False):
            ex = thinking.example(tok, city, country, thinking=on)
            answers[(city, on)] = thinking.greedy(model, tok, ex.prompt)
            assert answers[(city, on)] == thinking.expected_text(city, country, thinking=on)
    # the reasoning and the answer come from the prompt: each city its own
    assert len({answers[(c, True)] for c, _ in thinking.PLACES}) == len(thinking.PLACES)


def test_the_prepared_thinker_has_its_gguf_for_llama_server() -> None:
    """The same weights, vocabulary and template for llama-server (the suite serves it)."""
    from gguf import GGUFReader
    from safetensors.numpy import load_file

    from harness.models.catalog import find_embedded
    from harness.models.zoo.thinker_gguf import GGUF_NAME

    found = find_embedded(f"zoo/{NAME}")
    if found is None or not found.prepared:
        pytest.skip(f"not prepared: zoo/{NAME} (run `make models`)")
    reader = GGUFReader(str(Path(found.path) / GGUF_NAME))

    def text(key: str, index: int = -1) -> str:
        field = reader.fields[key]
        return bytes(field.parts[field.data[index]]).decode()

    assert text("general.architecture") == "qwen3"
    assert "<think>" in text("tokenizer.chat_template")
    tokens = reader.fields["tokenizer.ggml.tokens"]
    assert text("tokenizer.ggml.tokens", 510) == "<think>" and len(tokens.data) == 512
    weights = load_file(str(Path(found.path) / "model.safetensors"))
    tensors = {t.name: t for t in reader.tensors}
    assert len(tensors) == len(weights)  # the output head is tied: no output.weight
    embedding = tensors["token_embd.weight"].data
    assert (embedding == weights["model.embed_tokens.weight"]).all()
