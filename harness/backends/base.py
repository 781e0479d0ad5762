"""The contract between scenarios and backends: what a backend can do, and the interfaces of
the model it loads.

A backend declares its capabilities statically (``capabilities``, a frozenset of
:class:`BackendCapability`); each capability that has a loaded-model interface is a
``@runtime_checkable`` protocol here (:data:`MODEL_PROTOCOLS`). The runner skips a case whose
scenario requires a capability its backend lacks (``capability_missing: ...``) before any worker
starts, the worker checks once at load that the model delivers what its backend declared
(:func:`check_delivered`), and scenarios narrow the model with ``isinstance``.

These are BACKEND capabilities (what the code that loads the model implements); what the MODEL
can do (text, chat, vision, ...: read from its files by the probe) is
:class:`harness.probe.types.Capability`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from harness.probe.types import ReasonCode

if TYPE_CHECKING:
    from collections.abc import Callable

    import numpy as np
    from numpy.typing import NDArray

    from harness.backends.openai_client import Endpoint
    from harness.backends.weight_quant import QuantizedWeights, WeightQuant
    from harness.core.types import ServerRef
    from harness.probe.types import Probe
    from harness.toolcalls.model import Extraction


class BackendError(Exception):
    """A backend could not do what was asked; the message is one line."""


class ServerUnreachable(BackendError):
    """A ``url:`` server that does not answer: the suite's server, not the harness, so its
    cases are ``failed`` with the server named (not ``errored``)."""


class ServerArgsRefused(BackendError):
    """The suite's server arguments were refused by the server's own argument parser (an
    option its installed release does not have, e.g. mlx_lm.server before 0.31 and
    ``--prefill-step-size``): the case cannot run in this environment, so it is ``skipped``
    with the arguments named, not ``errored`` (nothing of ours broke) and never a pass."""


class QuantUnsupported(BackendError):
    """The backend cannot quantise a model's weights as asked (the installed mlx lacks the mode,
    the model is already quantised, no layer's width divides by the group size); one line."""


class BackendContractError(BackendError):
    """A backend broke its own contract (a bug in the backend, not in the model)."""


class BackendCapability(str, Enum):
    """What a backend implements; scenarios declare the ones they require (``backend_needs``)."""

    TEXT_GENERATION = "text_generation"  # tokenize, stream tokens (:class:`LoadedModel`)
    PROMPT_CACHE = "prompt_cache"  # its KV/state cache, reusable (:class:`PromptCaching`)
    TOOL_PARSING = "tool_parsing"  # its server's tool-call parsing, replayed (:class:`ToolCalling`)
    IMAGES = "images"  # takes images with the prompt
    AUDIO_IN = "audio_in"  # takes audio (speech to text)
    AUDIO_OUT = "audio_out"  # makes audio (text to speech)
    HTTP = "http"  # served over HTTP (a server the runner started or was given)
    DRAFT_DECODING = "draft_decoding"  # decodes with a draft model (:class:`DraftDecoding`)
    # decodes under a JSON Schema (:class:`ConstrainedDecoding`)
    CONSTRAINED_DECODING = "constrained_decoding"
    # decodes several requests as one batch (:class:`BatchGenerating`)
    BATCH_GENERATION = "batch_generation"
    # stores its weights in another precision in process (:class:`WeightQuantizing`)
    WEIGHT_QUANTIZATION = "weight_quantization"

    @property
    def label(self) -> str:
        """Words for a person: ``backend fake has no prompt cache``."""
        return _LABELS[self.value]


_LABELS = MappingProxyType(
    {
        "text_generation": "text generation",
        "prompt_cache": "prompt cache",
        "tool_parsing": "tool parsing",
        "images": "image input",
        "audio_in": "audio input",
        "audio_out": "audio output",
        "http": "HTTP server",
        "draft_decoding": "draft-model decoding",
        "constrained_decoding": "JSON-Schema-constrained decoding",
        "batch_generation": "batched generation",
        "weight_quantization": "weight quantisation",
    }
)


def capability_missing(backend: str, missing: Iterable[BackendCapability]) -> str:
    """``backend NAME has no X or Y``: the message of a ``capability_missing`` skip."""
    order = list(BackendCapability)
    labels = [c.label for c in sorted(set(missing), key=order.index)]
    return f"backend {backend} has no {' or '.join(labels)}"


def capability_missing_reason(backend: str, missing: Iterable[BackendCapability]) -> str:
    """``capability_missing: backend NAME has no X``: the one-line reason of the skip."""
    return f"{ReasonCode.CAPABILITY_MISSING.value}: {capability_missing(backend, missing)}"


@dataclass(frozen=True)
class LoadInfo:
    load_s: float
    weights_bytes: int
    device: str
    details: Mapping[str, Any] = field(default_factory=dict)


@runtime_checkable
class LoadedModel(Protocol):
    """Text generation (:attr:`BackendCapability.TEXT_GENERATION`): a model held in memory by a
    backend, ready to tokenize and stream tokens."""

    @property
    def eos_token_ids(self) -> frozenset[int]: ...

    def encode(self, text: str) -> list[int]: ...

    def decode(self, tokens: Sequence[int]) -> str: ...

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]: ...

    def stream_tokens(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        """Yield generated token ids as the backend produces them (first one after prefill)."""
        ...

    def vocab_size(self) -> int: ...


@runtime_checkable
class PromptEncoding(Protocol):
    """Optional on a text model: encode a raw prompt as a server encodes a ``/v1/completions``
    prompt, with the tokenizer's special tokens (BOS), which :meth:`LoadedModel.encode` leaves
    out. Gemma answers garbage without its BOS."""

    def encode_prompt(self, text: str) -> list[int]: ...


@dataclass(frozen=True)
class ThinkMarkers:
    """The tokens that open and close a model's think block, and their text."""

    start: tuple[int, ...]
    end: tuple[int, ...]
    start_text: str
    end_text: str


@runtime_checkable
class Thinking(Protocol):
    """Optional on a text model: the think markers its engine recognises in its tokenizer
    (mlx-lm's ``has_thinking``; None: it recognises none, the model does not think), and chat
    prompts rendered with thinking on, off, or as the template defaults (``enable_thinking``)."""

    def think_markers(self) -> ThinkMarkers | None: ...

    def thinking_chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, enable_thinking: bool | None
    ) -> list[int]: ...


@runtime_checkable
class PromptCaching(LoadedModel, Protocol):
    """:attr:`BackendCapability.PROMPT_CACHE`: a text model whose KV/state cache can be made,
    filled, trimmed, copied, saved and reused (mlx-lm's can)."""

    def make_cache(self, *, max_kv_size: int | None = None) -> Any: ...

    def prefill(self, cache: Any, tokens: Sequence[int]) -> None:
        """Process ``tokens`` into ``cache`` without sampling anything."""
        ...

    def generate_cached(
        self,
        cache: Any,
        tokens: Sequence[int],
        *,
        max_tokens: int,
        kv_bits: int | None = None,
        kv_group_size: int = 64,
    ) -> Iterator[int]:
        """Greedy tokens for ``tokens`` appended to what ``cache`` already holds."""
        ...

    def cache_types(self, cache: Any) -> list[str]: ...

    def cache_offset(self, cache: Any) -> int: ...

    def cache_nbytes(self, cache: Any) -> int: ...

    def untrimmable(self, cache: Any) -> str | None:
        """None when the cache can be trimmed, else why not (one line)."""
        ...

    def trim(self, cache: Any, n: int) -> int: ...

    def save_cache(self, cache: Any, path: Path) -> None: ...

    def load_cache(self, path: Path) -> Any: ...


@runtime_checkable
class ToolCalling(LoadedModel, Protocol):
    """:attr:`BackendCapability.TOOL_PARSING`: a text model whose backend infers a tool-call
    parser and can replay what its server returns for generated tokens (mlx-lm's can)."""

    def tool_parser_name(self) -> str | None:
        """The parser the backend inferred for this model (e.g. ``json_tools``), or None."""
        ...

    def tool_markers(self) -> tuple[str, ...]:
        """The start and end markers of a call, as the inferred parser defines them."""
        ...

    def chat_template_text(self) -> str | None: ...

    def with_chat_template(self, template: str) -> ToolCalling:
        """The same weights with a tokenizer loaded as the backend's server loads it for
        ``--chat-template TEMPLATE`` (so the parser is inferred again, from ``template``)."""
        ...

    def replay_server(
        self,
        prompt: Sequence[int],
        generated: Sequence[int],
        tools: Sequence[Mapping[str, Any]] | None,
        finish_reason: Literal["stop", "length"],
    ) -> tuple[Extraction, Extraction]:
        """(non-streamed, streamed): what a client gets for ``generated`` (EOS excluded)."""
        ...


@dataclass(frozen=True)
class DraftedToken:
    """One token of speculative decoding: ``from_draft`` when the draft proposed it and the
    target accepted it, False when the target gave it (a rejection's correction, or the token
    after a fully accepted draft)."""

    token: int
    from_draft: bool


@runtime_checkable
class DraftDecoding(LoadedModel, Protocol):
    """:attr:`BackendCapability.DRAFT_DECODING`: a text model that decodes speculatively with
    a draft model over the same tokenizer (mlx-lm's ``draft_model``): the draft proposes
    tokens, the model verifies them in one pass, so greedy output must be what the model
    alone gives, token for token."""

    def load_draft(self, path: Path) -> object:
        """The draft model at ``path``, loaded beside this one (opaque to scenarios);
        :class:`BackendError` (one line) when it cannot be loaded or its vocabulary is not
        this model's."""
        ...

    def stream_drafted(
        self,
        prompt: Sequence[int],
        draft: object,
        *,
        max_tokens: int,
        num_draft_tokens: int,
    ) -> Iterator[DraftedToken]:
        """Greedy tokens for ``prompt``, EOS ignored, drafted ``num_draft_tokens`` at a time
        by ``draft`` (from :meth:`load_draft`) and verified by this model."""
        ...


@runtime_checkable
class ConstrainedDecoding(LoadedModel, Protocol):
    """:attr:`BackendCapability.CONSTRAINED_DECODING`: a text model that decodes under a JSON
    Schema, each token masked to those the schema still allows (mlx-lm's, through
    llguidance), so the text it makes is JSON that conforms, or was cut by ``max_tokens``."""

    def constraint_library(self) -> str:
        """The library that builds the masks, with its version (``llguidance 1.9.1``);
        :class:`BackendError` (one line, with the fix) when it is not installed."""
        ...

    def stream_constrained(
        self, prompt: Sequence[int], schema: Mapping[str, Any], *, max_tokens: int
    ) -> Iterator[int]:
        """Greedy tokens for ``prompt``, each one ``schema`` allows, until the JSON is complete
        (the EOS that ends it is not yielded) or ``max_tokens``; :class:`BackendError` (one
        line) when the schema cannot be compiled."""
        ...


@runtime_checkable
class BatchGenerating(LoadedModel, Protocol):
    """:attr:`BackendCapability.BATCH_GENERATION`: a text model that decodes several requests
    as one batch (mlx-lm's ``BatchGenerator``): each request's prompt prefilled together (the
    shorter ones padded), then one forward pass a step for all of them, greedy, EOS ignored. Each
    request's tokens must be what it gets alone."""

    def stream_batch(
        self, prompts: Sequence[Sequence[int]], *, max_tokens: int
    ) -> Iterator[Sequence[tuple[int, int]]]:
        """Each decode step of the batch: ``(request index, token)`` for every request that
        got a token in that step (the index into ``prompts``); ``max_tokens`` each."""
        ...


@runtime_checkable
class WeightQuantizing(LoadedModel, Protocol):
    """:attr:`BackendCapability.WEIGHT_QUANTIZATION`: a text model whose weights the backend can
    store in another precision in process (mlx-lm's ``quantize_model``, as ``mlx_lm.convert -q
    --q-mode`` does it), leaving this model as it is (:mod:`harness.backends.weight_quant`)."""

    def weight_bytes(self) -> int:
        """Bytes of this model's parameters as loaded (quantised ones: data, scales, biases)."""
        ...

    def quantize_weights(self, quant: WeightQuant) -> QuantizedWeights:
        """This model's weights quantised as ``quant`` says (a copy), with their dequantised
        twin; :class:`QuantUnsupported` (one line) when they
        cannot be."""
        ...


@runtime_checkable
class Transcribing(Protocol):
    """:attr:`BackendCapability.AUDIO_IN`: a speech-to-text model (mlx-audio's Whisper is one)."""

    @property
    def sample_rate(self) -> int:
        """The rate (Hz) of the mono audio :meth:`transcribe` takes."""
        ...

    def transcribe(self, audio: NDArray[np.float32]) -> str:
        """Greedy transcript of mono float32 ``audio`` in [-1, 1] at :attr:`sample_rate`;
        long audio is chunked as the backend does it (Whisper: 30 s windows)."""
        ...


@dataclass(frozen=True)
class SpeechChunk:
    """A piece of synthesised speech: mono float32 samples at ``sample_rate`` (Hz)."""

    audio: NDArray[np.float32]
    sample_rate: int


@runtime_checkable
class Synthesizing(Protocol):
    """:attr:`BackendCapability.AUDIO_OUT`: a text-to-speech model (mlx-audio's TTS models)."""

    @property
    def streams(self) -> bool:
        """Whether :meth:`synthesize` yields audio while it still generates (not per segment)."""
        ...

    def synthesize(self, text: str) -> Iterator[SpeechChunk]:
        """Speech for ``text``, chunk by chunk as the model produces it (greedy where the
        model samples)."""
        ...


@dataclass(frozen=True)
class ImagePrompt:
    """A chat turn with images, preprocessed by the backend: token counts, the time the
    processor took (``preprocess_s``, image decoding, resizing, patching and tokenizing), and
    the backend's own inputs (opaque to scenarios)."""

    prompt_tokens: int
    image_tokens: int  # placeholder tokens the images became in the prompt
    images: int
    preprocess_s: float
    inputs: Any = field(default=None, repr=False, compare=False)


@runtime_checkable
class ImageInput(LoadedModel, Protocol):
    """:attr:`BackendCapability.IMAGES`: a model that takes images with the prompt (mlx-vlm's)."""

    def prepare_images(self, text: str, images: Sequence[Any]) -> ImagePrompt:
        """One user turn of ``text`` with ``images`` (PIL images) through the chat template and
        the image processor; :class:`BackendError` (one line) when the processor fails."""
        ...

    def stream_image_prompt(
        self,
        prompt: ImagePrompt,
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        """Yield generated token ids for ``prompt`` (the vision encoder runs before the first)."""
        ...


@dataclass(frozen=True)
class ServerMemory:
    """A server process's resident memory now and at its peak (None where the OS cannot say);
    ``pids``: the process(es) measured (several: workers sharing one listening socket, summed)."""

    rss_bytes: int
    peak_bytes: int | None
    pids: tuple[int, ...] = ()


@dataclass(frozen=True)
class MemoryUnavailable:
    """Why a server's memory cannot be measured, one line (a remote host, no process found
    listening on its port, a process this user may not read): shown as ``n/a: <reason>``."""

    reason: str


@runtime_checkable
class Served(Protocol):
    """:attr:`BackendCapability.HTTP`: a model behind an OpenAI-compatible HTTP server, started
    by the harness or already running; scenarios talk to it with
    :mod:`harness.backends.openai_client`."""

    @property
    def endpoint(self) -> Endpoint: ...

    @property
    def engine(self) -> str:
        """``mlx_lm.server``, ``mlx_vlm.server``, ``llama-server`` or ``url``."""
        ...

    @property
    def token_counter(self) -> Callable[[str], int] | None:
        """Tokens in a text by the model's own tokenizer (None: no local tokenizer)."""
        ...

    def server_memory(self) -> ServerMemory | MemoryUnavailable | None:
        """The server process's memory (the process the harness started, or the one found
        listening on a local ``url:``'s port); why not when it cannot be measured (None: no
        reason known). Never the measuring worker's own memory."""
        ...

    def close(self) -> None: ...


MODEL_PROTOCOLS: Mapping[BackendCapability, type] = MappingProxyType(
    {
        BackendCapability.TEXT_GENERATION: LoadedModel,
        BackendCapability.PROMPT_CACHE: PromptCaching,
        BackendCapability.TOOL_PARSING: ToolCalling,
        BackendCapability.AUDIO_IN: Transcribing,
        BackendCapability.AUDIO_OUT: Synthesizing,
        BackendCapability.IMAGES: ImageInput,
        BackendCapability.HTTP: Served,
        BackendCapability.DRAFT_DECODING: DraftDecoding,
        BackendCapability.CONSTRAINED_DECODING: ConstrainedDecoding,
        BackendCapability.BATCH_GENERATION: BatchGenerating,
        BackendCapability.WEIGHT_QUANTIZATION: WeightQuantizing,
    }
)
"""The loaded-model interface of each capability that has one (the others: with the backends
that bring them)."""


@runtime_checkable
class Backend(Protocol):
    """Loads a model. ``capabilities`` says what it implements; ``load`` returns the model,
    which has the interface of each declared capability (:data:`MODEL_PROTOCOLS`)."""

    name: str
    capabilities: frozenset[BackendCapability]

    def load(self, path: Path) -> tuple[object, LoadInfo]: ...


@runtime_checkable
class ServerLoading(Protocol):
    """A backend whose models are served over HTTP (``serve:`` / ``url:`` in the suite): the
    worker loads them with :meth:`load_server` instead of ``load``."""

    def load_server(
        self, path: Path | None, server: ServerRef, log_dir: Path
    ) -> tuple[object, LoadInfo]: ...


@runtime_checkable
class Probing(Protocol):
    """Optional on a backend the probe does not know (the fake, plug-ins): read a model's own
    files, without loading it, for the probe-and-policy step (``harness.runner.preflight``);
    raise ``harness.probe.ProbeError`` when the path is not such a model."""

    def probe(self, path: Path) -> Probe: ...


def declared_capabilities(backend: object, name: str) -> frozenset[BackendCapability]:
    """What ``backend`` (registered as ``name``) declares; BackendError (one line, with the fix)
    when it is no :class:`Backend` or declares a capability that does not exist."""
    if not isinstance(backend, Backend):
        raise BackendError(
            f"backend {name} declares no capabilities: give it `name`, `capabilities` (a "
            "frozenset of harness.backends.base.BackendCapability) and `load(path)`"
        )
    try:
        return frozenset(BackendCapability(c) for c in backend.capabilities)
    except (TypeError, ValueError) as exc:
        known = ", ".join(c.value for c in BackendCapability)
        raise BackendError(f"backend {name}: bad capabilities ({exc}); known: {known}") from None


def protocol_members(protocol: type) -> list[str]:
    """The public members a protocol (and the protocols it extends) asks for."""
    names: set[str] = set()
    for klass in protocol.__mro__:
        if getattr(klass, "_is_protocol", False):
            names.update(vars(klass))
            names.update(getattr(klass, "__annotations__", {}))
    return sorted(n for n in names if not n.startswith("_"))


def check_delivered(backend: str, declared: Iterable[BackendCapability], model: object) -> None:
    """Raise :class:`BackendContractError` when ``model`` lacks the interface of a capability
    its backend declared (a bug in the backend: one line naming it and the capability)."""
    order = list(BackendCapability)
    for capability in sorted(set(declared), key=order.index):
        protocol = MODEL_PROTOCOLS.get(capability)
        if protocol is None or isinstance(model, protocol):
            continue
        lacking = [n for n in protocol_members(protocol) if n not in dir(model)]
        shown = ", ".join(lacking[:3]) + (
            f" and {len(lacking) - 3} more" if len(lacking) > 3 else ""
        )
        raise BackendContractError(
            f"backend {backend} declares {capability.label}, but its loaded model "
            f"({type(model).__name__}) lacks {shown or 'part of it'}: a bug in the backend "
            f"(implement {protocol.__name__} or drop {capability.value})"
        )


def weights_bytes(path: Path) -> int:
    """Bytes of weight files only (safetensors, npz, gguf), not the whole folder."""
    suffixes = (".safetensors", ".npz", ".gguf", ".bin")
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and p.suffix in suffixes)
