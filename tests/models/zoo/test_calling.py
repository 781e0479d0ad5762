"""The zoo's callers: tiny models trained to answer the harness's tool request with a call.

The parser reading of a call (each family's mlx-lm parser, tabled), the training examples (the
family's template renders the call after the prompt, ending in end of turn), the training's
prefix shortcut (the same logits as the whole prompt run at once), and the prepared callers:
the checks' own request is answered with ``get_weather(city="Paris")`` in the family's markup,
a question about another place with that place, and the untrained model does not call.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.core.tool_request import expected_call, tool_messages, tools_named, weather_question
from harness.models.zoo import calling, training
from harness.models.zoo.families_caller import CALLER_FAMILIES
from harness.models.zoo.families_text import TEXT_FAMILIES
from tests.installed import require

require("mlx_lm")


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        yield


@pytest.mark.parametrize(
    ("parser", "text", "expected"),
    [
        (
            "json_tools",
            '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Rome"}}\n</tool_call>',
            ("get_weather", {"city": "Rome"}),
        ),
        (
            "mistral",
            '[TOOL_CALLS]get_time[ARGS]{"timezone": "Asia/Tokyo"}',
            ("get_time", {"timezone": "Asia/Tokyo"}),
        ),
        (
            "qwen3_coder",
            "<tool_call>\n<function=get_weather>\n<parameter=city>\nRome\n</parameter>\n"
            "</function>\n</tool_call>",
            ("get_weather", {"city": "Rome"}),
        ),
        (
            "pythonic",
            '<|tool_call_start|>[get_time(timezone="Asia/Tokyo")]<|tool_call_end|>',
            ("get_time", {"timezone": "Asia/Tokyo"}),
        ),
        (
            "gemma4",
            '<|tool_call>call:get_weather{city:<|"|>Rome<|"|>}<tool_call|>',
            ("get_weather", {"city": "Rome"}),
        ),
        ("json_tools", "The weather in Paris is sunny.", None),
        ("gemma4", "call me", None),
        ("pythonic", "<|tool_call_start|>[get_weather(<|tool_call_end|>", None),
        ("json_tools", '<tool_call>\n{"name": "get_weather", "argu\n</tool_call>', None),
        ("mistral", "[TOOL_CALLS]get_weather[ARGS]{broken", None),
        ("mistral", "no call here", None),
    ],
)
def test_parse_call(parser: str, text: str, expected: Any) -> None:
    assert calling.parse_call(text, parser) == expected


def test_the_callers_are_variants_not_architectures() -> None:
    assert set(CALLER_FAMILIES) == {
        "qwen2-caller",
        "mistral-caller",
        "qwen3-coder-caller",
        "pythonic-caller",
        "gemma4-caller",
        "gemma4-hyphen-caller",
        "qwen2-pair-caller",
        "mistral-pair-caller",
        "qwen3-think-caller",
        "qwen2-split-caller",
    }
    assert not set(CALLER_FAMILIES) & {f.name for f in TEXT_FAMILIES}
    for family in CALLER_FAMILIES.values():
        assert family.calling and not family.content_bearing
        assert family.expected_parser in {
            "json_tools",
            "mistral",
            "qwen3_coder",
            "pythonic",
            "gemma4",
        }
        assert "trained" in family.tags and "random" not in family.tags
        assert family.tool_names == ("hyphen" if family.name == "gemma4-hyphen-caller" else "snake")


def _tokenizer(family: Any, tmp_path: Path) -> Any:
    from mlx_lm.utils import load_tokenizer

    from harness.models.zoo.common import write_tokenizer

    write_tokenizer(family.resolved(), tmp_path)
    return load_tokenizer(tmp_path)


@pytest.mark.parametrize("name", sorted(CALLER_FAMILIES))
def test_examples_end_with_the_call_then_end_of_turn(name: str, tmp_path: Path) -> None:
    family = CALLER_FAMILIES[name]
    tokenizer = _tokenizer(family, tmp_path)
    # mlx-lm's tokenizer wrapper maps the template to the caller's parser, as the server does
    assert tokenizer.tool_parser.__module__ == f"mlx_lm.tool_parsers.{family.expected_parser}"
    names = family.tool_names
    pairs = calling.questions(names)
    assert len({q for q, _ in pairs}) == len(pairs)
    thought = calling.THOUGHT if family.call_in_thought else None
    for question, call in pairs:
        ex = calling.example(tokenizer, question, call, names, thought)
        assert ex.answer[-1] in set(tokenizer.eos_token_ids)
        assert list(ex.answer).count(ex.answer[-1]) == 1
        text = tokenizer.decode(list(ex.answer[:-1]))
        assert calling.parse_call(text, family.expected_parser, names) == call
        assert (("-" in call[0]) is (names == "hyphen")) and call[0] in text
        prompt = tokenizer.decode(list(ex.prompt))
        assert question in prompt
        # mlx-lm #1160's shape: the prompt opens the think block and the call comes inside it
        assert prompt.endswith("<think>\n") is family.call_in_thought, prompt[-40:]
        if family.call_in_thought:
            assert text.startswith(f"{calling.THOUGHT}\n<tool_call>") and "</think>" not in text


# one caller per architecture: the shortcut stands in for that architecture's KV caches
ONE_PER_ARCHITECTURE = sorted({f.model_type: n for n, f in CALLER_FAMILIES.items()}.values())


@pytest.mark.parametrize("name", ONE_PER_ARCHITECTURE)
def test_the_fixed_prefix_gives_the_whole_prompts_logits(name: str, tmp_path: Path) -> None:
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache
    from mlx_lm.utils import _get_classes

    from harness.models.zoo.common import model_config

    family = CALLER_FAMILIES[name].resolved()
    tokenizer = _tokenizer(family, tmp_path)
    config = model_config(family, tokenizer.vocab)
    model_cls, args_cls = _get_classes(config)
    mx.random.seed(3)
    model = model_cls(args_cls.from_dict(config))
    a = calling.example(tokenizer, weather_question("Rome"), ("get_weather", {"city": "Rome"}))
    b = calling.example(tokenizer, weather_question("Japan"), ("get_weather", {"city": "Japan"}))
    seqs = [(*a.prompt, *a.answer), (*b.prompt, *b.answer)]
    n = training.common_prefix(seqs)
    assert 0 < n < min(len(a.prompt), len(b.prompt))
    width = min(len(s) for s in seqs)
    whole = model(mx.array([list(s[:width]) for s in seqs]))[:, n:]
    cache = make_prompt_cache(model)
    model(mx.array(list(seqs[0][:n]))[None], cache=cache)
    prefix = [
        training.FixedPrefix(
            mx.repeat(c.keys[..., : c.offset, :], 2, axis=0),
            mx.repeat(c.values[..., : c.offset, :], 2, axis=0),
        )
        for c in cache
    ]
    rest = model(mx.array([list(s[n:width]) for s in seqs]), cache=prefix)
    assert mx.allclose(whole, rest, atol=1e-4).item()
    # and the check can fail: another prefix gives other logits
    shifted = [
        training.FixedPrefix(
            mx.repeat(c.keys[..., 1 : c.offset, :], 2, axis=0),
            mx.repeat(c.values[..., 1 : c.offset, :], 2, axis=0),
        )
        for c in cache
    ]
    other = model(mx.array([list(s[n:width]) for s in seqs]), cache=shifted)
    assert not mx.allclose(whole, other, atol=1e-4).item()


def _greedy(path: Path, question: str, names: str = "snake") -> str:
    from mlx_lm import generate, load

    model, tokenizer = load(str(path))
    from harness.core.tool_request import as_served

    prompt = tokenizer.apply_chat_template(
        as_served(tool_messages(question, names)),
        tools=list(tools_named(names)),
        add_generation_prompt=True,
    )
    return str(generate(model, tokenizer, prompt, max_tokens=64, verbose=False))


@pytest.mark.parametrize("name", sorted(CALLER_FAMILIES))
def test_the_prepared_caller_calls_what_the_question_asks(name: str) -> None:
    from harness.models.catalog import prepare_embedded

    family = CALLER_FAMILIES[name]
    path = prepare_embedded(f"zoo/{name}")
    marker = json.loads((path / "harness-model.json").read_text())
    assert marker["content"]["calls_right"] >= 1
    if family.calls_per_turn == 2:  # asked for two cities: both calls, back to back
        from harness.core.tool_request import pair_question
        from harness.models.zoo import calling_pair

        parser = str(family.expected_parser)
        joint = {"json_tools": "</tool_call><tool_call>", "mistral": "}[TOOL_CALLS]"}[parser]
        both = _greedy(path, pair_question("Paris", "Rome"))
        assert joint in both, both
        assert calling_pair.parse_calls(both, parser) == list(
            calling_pair.pair_calls("Paris", "Rome")
        ), both
        return
    parser, names = str(family.expected_parser), family.tool_names
    paris = _greedy(path, weather_question("Paris"), names)
    assert calling.parse_call(paris, parser, names) == expected_call(names), paris
    # the argument comes from the prompt: another place gives another call
    answers = {
        place: calling.parse_call(_greedy(path, weather_question(place), names), parser, names)
        for place in calling.PLACES
    }
    assert len({json.dumps(a) for a in answers.values()}) > 1, answers


@pytest.mark.parametrize(("fails", "seed"), [(0, 0), (1, 1), (2, None)])
def test_the_build_tries_another_seed_then_fails_in_one_line(
    fails: int, seed: int | None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Training that falls short (other numerics: another machine, Metal) gets a second seed;
    when that falls short too the build fails with the one-line reason."""
    from harness.models.zoo.build import build

    seeds: list[int] = []

    def train(
        model: Any,
        tokenizer: Any,
        *,
        name: str,
        parser: str,
        seed: int,
        names: str,
        thought: str | None = None,
    ) -> Any:
        seeds.append(seed)
        if len(seeds) <= fails:
            raise calling.NotCalling(f"zoo/{name}: planted shortfall {seed}")
        return calling.CallingReport(1, 0.5, 0.1, 9, 9, "<tool_call>")

    monkeypatch.setattr(calling, "train_to_call", train)
    family = CALLER_FAMILIES["qwen2-caller"]
    if seed is None:
        with pytest.raises(calling.NotCalling, match="planted shortfall 1"):
            build(family, tmp_path / "caller")
        assert seeds == [0, 1] and not (tmp_path / "caller").exists()
        return
    marker = json.loads((build(family, tmp_path / "caller") / "harness-model.json").read_text())
    assert marker["content"]["seed"] == seed and seeds == list(range(fails + 1))


def test_the_pair_callers_examples_put_the_two_calls_back_to_back(tmp_path: Path) -> None:
    """mlx-lm #1170 shows only on calls with nothing between their markers: the template's
    newline between the two calls is left out, and each answer parses to its two calls."""
    from harness.models.zoo import calling_pair

    family = CALLER_FAMILIES["qwen2-pair-caller"]
    tokenizer = _tokenizer(family, tmp_path)
    pairs = calling_pair.questions()
    assert len(pairs) == 30 and len({q for q, _ in pairs}) == 30
    for question, calls in pairs[:4]:
        ex = calling_pair.example(tokenizer, question, calls, "</tool_call>")
        text = tokenizer.decode(list(ex.answer[:-1]))
        assert text.count("</tool_call><tool_call>") == 1, text
        assert calling_pair.parse_calls(text, "json_tools") == list(calls)
        assert ex.answer[-1] in set(tokenizer.eos_token_ids)


def test_the_mistral_pair_callers_examples_write_the_calls_as_its_template_does(
    tmp_path: Path,
) -> None:
    """Mistral has no end marker: the template's two calls are already back to back
    (``}[TOOL_CALLS]``, mlx-lm #1448), kept as rendered, and each answer parses to its calls."""
    from harness.models.zoo import calling_pair

    family = CALLER_FAMILIES["mistral-pair-caller"]
    tokenizer = _tokenizer(family, tmp_path)
    for question, calls in calling_pair.questions()[:4]:
        ex = calling_pair.example(tokenizer, question, calls, "")
        text = tokenizer.decode(list(ex.answer[:-1]))
        assert text.count("}[TOOL_CALLS]") == 1 and text.startswith("[TOOL_CALLS]"), text
        assert calling_pair.parse_calls(text, "mistral") == list(calls)
        assert ex.answer[-1] in set(tokenizer.eos_token_ids)
