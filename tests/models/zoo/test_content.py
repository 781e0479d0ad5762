"""The zoo's content-bearing text models: their greedy answers depend on the whole prompt.

On every text family as prepared by ``make models``: two different prompts give different greedy
answers, a planted cache mix-up (the first tokens' keys and values from another request) changes
the answer, and the answer is text that round-trips (no lone bytes, control or special tokens).
A random model built without the step answers the probes alike, so the probe can fail, and the
step says in one line when no setting works.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models.zoo import content
from harness.models.zoo.build import MARKER, build
from harness.models.zoo.families_draft import DRAFT_FAMILIES
from harness.models.zoo.families_text import LLAMA, TEXT_FAMILIES
from tests.installed import require

require("mlx_lm")

REQUIRED = {"llama", "qwen3", "qwen3_moe", "gemma3_text", "lfm2", "mistral"}


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


def _prepared(name: str) -> Path:
    from harness.models.catalog import prepare_embedded

    return prepare_embedded(f"zoo/{name}")


def _load(path: Path) -> tuple[Any, Any]:
    from mlx_lm import load

    return load(str(path))


def test_table() -> None:
    names = {f.name for f in TEXT_FAMILIES}
    assert names >= REQUIRED
    assert all(f.content_bearing for f in TEXT_FAMILIES)
    assert {"sliding-window", "hybrid"} <= {t for f in TEXT_FAMILIES for t in f.tags}
    assert not any(f.content_bearing for f in DRAFT_FAMILIES.values())


@pytest.mark.parametrize("family", TEXT_FAMILIES, ids=lambda f: f.name)
def test_answers_depend_on_the_whole_prompt(family: Any) -> None:
    import json

    path = _prepared(family.name)
    marker = json.loads((path / MARKER).read_text())
    assert marker["content"]["mixups_caught"] == marker["content"]["mixups"] == 3
    model, tokenizer = _load(path)
    long_a, long_b = content.PROBES[0]
    answers = [
        content._greedy(model, content._prompt_ids(tokenizer, text))
        for text in (long_a, long_b, "voyage number 1", "voyage number 2")
    ]
    assert len({tuple(a) for a in answers}) == 4  # the first word of a long prompt decides
    prompt = content._prompt_ids(tokenizer, long_a)
    silenced = set(content.silenced_ids(tokenizer, len(tokenizer.vocab)))
    for position, other in content._plants(tokenizer, prompt, silenced):
        assert content._mixup_changes(model, prompt, position, other), position
    for answer in answers:
        assert not silenced & set(answer)
        text = tokenizer.decode(answer)
        assert "\ufffd" not in text
        assert not any(content._unprintable(ch) for ch in text)


def test_a_random_model_is_caught_by_the_probe(tmp_path: Path) -> None:
    """The same llama without the step answers every probe alike: the probe can fail."""
    random_llama = dataclasses.replace(LLAMA, content_bearing=False)
    path = build(random_llama, tmp_path / "llama")
    model, tokenizer = _load(path)
    report = content.content_report(model, tokenizer, scale=1.0, query_key=1.0, silenced=())
    assert not report.bearing
    assert report.distinct_answers < report.prompts


def test_no_setting_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    random_llama = dataclasses.replace(LLAMA, content_bearing=False)
    path = build(random_llama, tmp_path / "llama")
    model, tokenizer = _load(path)
    monkeypatch.setattr(content, "EMBEDDING_SCALES", (1.0,))
    monkeypatch.setattr(content, "QUERY_KEY_SCALES", (1.0,))
    with pytest.raises(content.NotContentBearing) as raised:
        content.make_content_bearing(model, tokenizer, vocab_size=512, name="llama")
    line = str(raised.value)
    assert "\n" not in line
    assert line.startswith("zoo/llama: no embedding scale")
    assert "planted cache mix-ups caught" in line


def test_build_records_the_probe_and_is_seeded(tmp_path: Path) -> None:
    import json

    first = build(LLAMA, tmp_path / "a")
    second = build(LLAMA, tmp_path / "b")
    marker = json.loads((first / MARKER).read_text())
    assert marker["content"]["distinct_answers"] == marker["content"]["prompts"]
    assert (first / "model.safetensors").read_bytes() == (second / "model.safetensors").read_bytes()
