"""The tiny-architecture zoo: every family builds, loads through its real backend and generates.

Table-driven over ``FAMILIES``. Each family is built once per session into a temporary directory.
A family with a ``known_incompatibility`` must still fail with exactly that error, so an upstream
fix shows up as a failing test (then clear the field).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.models.zoo.build import MARKER, build, family_names, is_current
from harness.models.zoo.families import BACKENDS, FAMILIES, Family
from harness.models.zoo.probe import probe

ALL = list(FAMILIES.values())
TEXT = [f for f in ALL if f.backend == "mlx_lm"]
REQUIRED = {
    "llama",
    "qwen2",
    "qwen3",
    "gemma3_text",
    "mistral",
    "phi3",
    "qwen3_moe",
    "lfm2",
    "qwen2_vl",
    "whisper",
}
COMMON_FILES = {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"}
BACKEND_FILES = {
    "mlx_lm": COMMON_FILES,
    "mlx_vlm": COMMON_FILES | {"chat_template.json", "preprocessor_config.json"},
    "mlx_audio": COMMON_FILES | {"preprocessor_config.json", "generation_config.json"},
}
MAX_DIR_BYTES = 8 * 1024 * 1024

WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather in a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string", "description": "City name."}},
            "required": ["city"],
        },
    },
}
WEATHER_CALL = {
    "id": "call00001",  # Mistral's template wants 9-character ids
    "type": "function",
    "function": {"name": "get_weather", "arguments": {"city": "Paris"}},
}


@pytest.fixture(scope="module", autouse=True)
def offline() -> Iterator[None]:
    """No hub: processors look there for files a checkpoint lacks (and swallow the errors)."""
    import huggingface_hub.constants

    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        patch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
        yield


@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory) -> Callable[[Family], Path]:
    """Each family built at most once for the run (:mod:`tests.zoo_shared`: the probe tests and
    others read the same builds); returns ``family -> model dir``."""
    from tests.zoo_shared import zoo_family

    root = tmp_path_factory.mktemp("zoo")
    dirs: dict[str, Path] = {}

    def get(family: Family) -> Path:
        if family.name not in dirs:
            shared = FAMILIES.get(family.name) == family
            dirs[family.name] = (
                zoo_family(tmp_path_factory, family.name)
                if shared
                else build(family, root / family.name)
            )
        return dirs[family.name]

    return get


def _needs_backend(family: Family) -> None:
    """mlx-vlm and mlx-audio are not dependencies of the package: skip, saying so, without them."""
    pytest.importorskip(family.backend, reason=f"{family.name} needs {family.backend} installed")


def _dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def test_table() -> None:
    assert set(FAMILIES) >= REQUIRED
    assert family_names() == list(FAMILIES)
    for name, family in FAMILIES.items():
        assert family.name == name
        assert family.backend in BACKENDS
        assert family.model_type == family.config["model_type"]
        assert family.expected_caches
    tags = {tag for f in ALL for tag in f.tags}
    assert {"moe", "hybrid", "sliding-window", "vision", "audio"} <= tags
    assert {f.backend for f in ALL} == set(BACKENDS)


@pytest.mark.parametrize("family", ALL, ids=[f.name for f in ALL])
def test_build(family: Family, built: Callable[[Family], Path]) -> None:
    import mlx.core as mx
    from tokenizers import Tokenizer

    _needs_backend(family)
    path = built(family)
    assert BACKEND_FILES[family.backend] <= {p.name for p in path.iterdir()}
    assert is_current(path, family)
    assert not is_current(path, family, seed=1)
    assert _dir_bytes(path) < MAX_DIR_BYTES
    config = json.loads((path / "config.json").read_text())
    assert config["model_type"] == family.model_type
    weights = mx.load(str(path / "model.safetensors"))
    assert isinstance(weights, dict)
    assert weights and all(w.dtype == mx.float32 for w in weights.values())
    marker = json.loads((path / MARKER).read_text())
    assert marker["parameters"] > 0
    # Every special token of the family is one token of the tokenizer.
    tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
    for token in (*family.special_tokens, *family.appended_special_tokens):
        assert tokenizer.encode(token, add_special_tokens=False).tokens == [token]
    assert tokenizer.get_vocab_size() <= config["vocab_size"]


@pytest.mark.parametrize("family", ALL, ids=[f.name for f in ALL])
def test_generates_through_backend(
    family: Family,
    built: Callable[[Family], Path],
    record_property: Callable[[str, Any], None],
) -> None:
    _needs_backend(family)
    path = built(family)
    record_property("backend", family.backend)
    if family.known_incompatibility is not None:
        with pytest.raises(Exception) as failure:
            probe(family, path)
        record_property("known_incompatibility", str(failure.value))
        assert str(failure.value) == family.known_incompatibility
        return
    result = probe(family, path, max_tokens=4)
    record_property("cache_classes", ",".join(result.cache_classes))
    record_property("device", result.device)
    assert result.backend == family.backend
    assert result.cache_classes == tuple(sorted(family.expected_caches))
    assert 1 <= result.generated_tokens <= 4
    assert result.prompt_tokens >= 1
    if family.backend != "mlx_audio":
        assert result.detail["max_offset"] >= result.prompt_tokens
    if "RotatingKVCache" in family.expected_caches:
        # The prompt is longer than the window: the rotating path really ran.
        assert result.detail["window_exceeded"], result.detail
    if family.backend == "mlx_vlm":
        assert result.detail["image_tokens"] > 0
    if family.backend == "mlx_lm":
        assert result.detail["tool_parser"] == family.expected_parser


@pytest.mark.parametrize("family", TEXT, ids=[f.name for f in TEXT])
def test_template_infers_parser(family: Family, built: Callable[[Family], Path]) -> None:
    from mlx_lm.tokenizer_utils import load

    tokenizer = load(built(family))
    if family.expected_parser is None:
        assert tokenizer._tool_parser is None
        assert tokenizer.tool_call_start is None
        return
    module = importlib.import_module(f"mlx_lm.tool_parsers.{family.expected_parser}")
    assert tokenizer._tool_parser is module.parse_tool_call
    assert tokenizer.tool_call_start == module.tool_call_start
    assert tokenizer.tool_call_end == module.tool_call_end
    # The tool-call marker is a single token, as in the real vocabulary.
    assert len(tokenizer.encode(module.tool_call_start, add_special_tokens=False)) == 1
    if family.name == "lfm2":
        return  # LFM2's template leaves calls inside the assistant content; nothing to render.
    # The call the template renders parses back with the inferred parser.
    messages = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
    ]
    text = tokenizer.apply_chat_template(messages, tools=[WEATHER_TOOL], tokenize=False)
    body = text.rsplit(module.tool_call_start, 1)[1]  # the last one: the call, not the example
    body = body.split(module.tool_call_end, 1)[0] if module.tool_call_end else body
    body = body.split(family.eos_token, 1)[0]
    parsed = module.parse_tool_call(body, [WEATHER_TOOL])
    call = parsed[0] if isinstance(parsed, list) else parsed
    assert call["name"] == "get_weather"
    assert call["arguments"] == {"city": "Paris"}


def test_chatml_template_renders_like_hermes(built: Callable[[Family], Path]) -> None:
    from mlx_lm.tokenizer_utils import load

    tokenizer = load(built(FAMILIES["llama"]))
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": "", "tool_calls": [WEATHER_CALL]},
        {"role": "tool", "content": "sunny"},
    ]
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    assert text == (
        "<|im_start|>system\nBe brief.<|im_end|>\n"
        "<|im_start|>user\nWeather in Paris?<|im_end|>\n"
        "<|im_start|>assistant\n<tool_call>\n"
        '{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n'
        "<|im_start|>user\n<tool_response>\nsunny\n</tool_response><|im_end|>\n"
        "<|im_start|>assistant\n"
    )


def test_build_is_seeded_and_deterministic(tmp_path: Path, built: Callable[[Family], Path]) -> None:
    family = FAMILIES["llama"]
    first = build(family, tmp_path / "a", seed=0)
    again = built(family)  # the same family and seed, built in another process or folder
    other = build(family, tmp_path / "c", seed=1)
    for name in ("model.safetensors", "tokenizer.json", "config.json", "tokenizer_config.json"):
        assert (first / name).read_bytes() == (again / name).read_bytes(), name
    assert (first / "model.safetensors").read_bytes() != (other / "model.safetensors").read_bytes()
    assert is_current(other, family, seed=1) and not is_current(other, family, seed=0)
    # Rebuilding over an existing directory replaces it atomically.
    assert build(family, first, seed=1) == first
    assert is_current(first, family, seed=1)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]
