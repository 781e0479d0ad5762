"""The backend contract: declared capabilities, the protocol of each, and the check at load."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.backends import BACKENDS
from harness.backends.base import (
    MODEL_PROTOCOLS,
    Backend,
    BackendCapability,
    BackendContractError,
    BackendError,
    DraftDecoding,
    LoadedModel,
    LoadInfo,
    Probing,
    PromptCaching,
    ToolCalling,
    capability_missing,
    capability_missing_reason,
    check_delivered,
    declared_capabilities,
    protocol_members,
)
from harness.backends.fake import FakeModel
from harness.backends.http import ServedModel
from harness.backends.mlx_lm import MlxLmModel
from harness.backends.openai_client import Endpoint

TEXT = BackendCapability.TEXT_GENERATION
CACHE = BackendCapability.PROMPT_CACHE
TOOLS = BackendCapability.TOOL_PARSING
DRAFT = BackendCapability.DRAFT_DECODING
CONSTRAINED = BackendCapability.CONSTRAINED_DECODING
BATCH = BackendCapability.BATCH_GENERATION
QUANT = BackendCapability.WEIGHT_QUANTIZATION


class TextOnly:
    """A text model and nothing else."""

    eos_token_ids = frozenset({0})

    def encode(self, text: str) -> list[int]:
        return [1]

    def decode(self, tokens: Sequence[int]) -> str:
        return ""

    def chat_tokens(self, messages: Any, *, tools: Any = None) -> list[int]:
        return [1]

    def stream_tokens(self, prompt: Sequence[int], **_: Any) -> Iterator[int]:
        yield 1

    def vocab_size(self) -> int:
        return 2


class HalfCache(TextOnly):
    """Claims a cache but implements only part of it."""

    def make_cache(self, *, max_kv_size: int | None = None) -> list[Any]:
        return []


def _mlx_lm_model() -> MlxLmModel:
    return MlxLmModel(None, SimpleNamespace(eos_token_ids=[0]), None)


# (backend registered as, what it declares)
DECLARED = [
    ("fake", frozenset({TEXT})),
    ("mlx_lm", frozenset({TEXT, CACHE, TOOLS, DRAFT, CONSTRAINED, BATCH, QUANT})),
]


@pytest.mark.parametrize(("name", "declared"), DECLARED)
def test_builtin_backends_declare_their_capabilities(
    name: str, declared: frozenset[BackendCapability]
) -> None:
    backend = BACKENDS.get(name)
    assert isinstance(backend, Backend) and backend.name == name
    assert declared_capabilities(backend, name) == declared


# (model, protocols it satisfies)
SATISFIES: list[tuple[str, Any, set[type]]] = [
    ("fake", FakeModel({}), {LoadedModel}),
    ("text_only", TextOnly(), {LoadedModel}),
    ("half_cache", HalfCache(), {LoadedModel}),
    ("mlx_lm", _mlx_lm_model(), {LoadedModel, PromptCaching, ToolCalling, DraftDecoding}),
    ("nothing", object(), set()),
]


@pytest.mark.parametrize(
    ("model", "protocols"), [r[1:] for r in SATISFIES], ids=[r[0] for r in SATISFIES]
)
def test_models_are_narrowed_by_their_protocols(model: Any, protocols: set[type]) -> None:
    assert {
        p for p in (LoadedModel, PromptCaching, ToolCalling, DraftDecoding) if isinstance(model, p)
    } == protocols


def test_the_fake_probes_its_own_files_and_mlx_lm_does_not() -> None:
    assert isinstance(BACKENDS.get("fake"), Probing)
    assert not isinstance(BACKENDS.get("mlx_lm"), Probing)


# (id, declared, model, error fragments: None when the model delivers)
DELIVERY: list[tuple[str, frozenset[BackendCapability], Any, tuple[str, ...] | None]] = [
    ("text_delivered", frozenset({TEXT}), TextOnly(), None),
    ("all_delivered", frozenset({TEXT, CACHE, TOOLS, DRAFT}), _mlx_lm_model(), None),
    (
        "http_delivered",
        frozenset({BackendCapability.HTTP}),
        ServedModel(Endpoint("http://127.0.0.1:9"), "url", None),
        None,
    ),
    (
        "http_not_delivered",
        frozenset({BackendCapability.HTTP}),
        object(),
        ("declares HTTP server", "implement Served or drop http"),
    ),
    (
        "cache_declared_not_delivered",
        frozenset({TEXT, CACHE}),
        HalfCache(),
        (
            "backend toy declares prompt cache",
            "(HalfCache) lacks cache_nbytes, cache_offset, cache_types and 6 more",
            "PromptCaching",
        ),
    ),
    (
        "text_declared_not_delivered",
        frozenset({TEXT, TOOLS}),
        object(),
        ("backend toy declares text generation", "lacks chat_tokens, decode, encode and 3 more"),
    ),
]


@pytest.mark.parametrize(
    ("declared", "model", "fragments"), [r[1:] for r in DELIVERY], ids=[r[0] for r in DELIVERY]
)
def test_a_model_must_deliver_what_its_backend_declares(
    declared: frozenset[BackendCapability], model: Any, fragments: tuple[str, ...] | None
) -> None:
    if fragments is None:
        check_delivered("toy", declared, model)
        return
    with pytest.raises(BackendContractError) as caught:
        check_delivered("toy", declared, model)
    message = str(caught.value)
    assert "\n" not in message and "a bug in the backend" in message
    for fragment in fragments:
        assert fragment in message


class _Loads:
    name = "old"

    def load(self, path: Path) -> tuple[object, LoadInfo]:
        return object(), LoadInfo(0.0, 0, "none")


class _Declares(_Loads):
    def __init__(self, capabilities: Any) -> None:
        self.capabilities = capabilities


# (id, backend object, declared or error fragment)
DECLARATIONS: list[tuple[str, object, frozenset[BackendCapability] | str]] = [
    ("enum_values", _Declares(frozenset({CACHE, TEXT})), frozenset({CACHE, TEXT})),
    (
        "plain_strings",
        _Declares({"text_generation", "http"}),
        frozenset({TEXT, BackendCapability.HTTP}),
    ),
    ("nothing_declared", _Declares(frozenset()), frozenset()),
    ("no_capabilities_attribute", _Loads(), "backend toy declares no capabilities: give it"),
    ("unknown_capability", _Declares({"telepathy"}), "backend toy: bad capabilities ('telepathy'"),
    ("not_iterable", _Declares(3), "backend toy: bad capabilities"),
]


@pytest.mark.parametrize(
    ("backend", "expected"), [r[1:] for r in DECLARATIONS], ids=[r[0] for r in DECLARATIONS]
)
def test_declared_capabilities(
    backend: object, expected: frozenset[BackendCapability] | str
) -> None:
    if isinstance(expected, frozenset):
        assert declared_capabilities(backend, "toy") == expected
        return
    with pytest.raises(BackendError) as caught:
        declared_capabilities(backend, "toy")
    assert str(caught.value).startswith(expected) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("missing", "message"),
    [
        ({CACHE}, "backend fake has no prompt cache"),
        ({TOOLS, TEXT}, "backend fake has no text generation or tool parsing"),
        ({BackendCapability.HTTP}, "backend fake has no HTTP server"),
        ({DRAFT}, "backend fake has no draft-model decoding"),
    ],
)
def test_missing_capabilities_in_words(missing: set[BackendCapability], message: str) -> None:
    assert capability_missing("fake", missing) == message
    assert capability_missing_reason("fake", missing) == f"capability_missing: {message}"


def test_every_capability_has_words_and_protocols_extend_text_generation() -> None:
    labels = [c.label for c in BackendCapability]
    assert len(set(labels)) == len(labels) and all(labels)
    text = set(protocol_members(LoadedModel))
    assert {"encode", "eos_token_ids", "stream_tokens"} <= text
    for capability, protocol in MODEL_PROTOCOLS.items():
        # speech needs no tokens; a server is spoken to over HTTP, not token by token
        speech = (BackendCapability.AUDIO_IN, BackendCapability.AUDIO_OUT)
        if capability not in (*speech, BackendCapability.HTTP):
            assert text <= set(protocol_members(protocol)), capability
    assert set(protocol_members(MODEL_PROTOCOLS[BackendCapability.AUDIO_IN])) == {
        "sample_rate",
        "transcribe",
    }
    assert set(protocol_members(MODEL_PROTOCOLS[BackendCapability.AUDIO_OUT])) == {
        "streams",
        "synthesize",
    }
    assert set(protocol_members(MODEL_PROTOCOLS[BackendCapability.HTTP])) == {
        "close",
        "endpoint",
        "engine",
        "server_memory",
        "token_counter",
    }
    assert "make_cache" in protocol_members(PromptCaching)
    assert "replay_server" in protocol_members(ToolCalling)
    assert {"load_draft", "stream_drafted"} <= set(protocol_members(DraftDecoding))
