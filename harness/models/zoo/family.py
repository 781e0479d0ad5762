"""The :class:`Family` record: everything needed to generate one tiny model of an architecture."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal

LibraryName = Literal["mlx_lm", "mlx_vlm", "mlx_audio"]
BACKENDS: tuple[LibraryName, ...] = ("mlx_lm", "mlx_vlm", "mlx_audio")

# The version of :mod:`harness.models.zoo.content`'s procedure: a content-bearing family built by
# another version is rebuilt.
CONTENT_VERSION = 2
CALLING_VERSION = 1  # bump when the callers' training or its data change: they are rebuilt
THINKING_VERSION = 2  # bump when the thinker's training or its data change: it is rebuilt

# The trained BPE vocabulary of every text family (the corpus supports up to ~540 tokens).
VOCAB_SIZE = 512


def frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    """A deep read-only copy of ``mapping``: nested mappings become read-only views, lists become
    tuples (the tables hold no module-level mutable state). :func:`plain` reverses it."""
    return MappingProxyType({str(k): _freeze(v) for k, v in mapping.items()})


def _freeze(value: Any) -> Any:
    if isinstance(value, Mapping):
        return frozen(value)
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def _empty() -> Mapping[str, Any]:
    return MappingProxyType({})


class ConfigOrigin(enum.Enum):
    """Where a family's ``config.json`` comes from."""

    DERIVED = "derived"  # the installed mlx-lm's tiny config of the model type, plus the family's
    HAND_MADE = "hand-made"  # written out in full in the family table


class DerivationError(Exception):
    """The installed mlx-lm cannot derive a derived family's config (one line: what and the fix)."""


@dataclass(frozen=True)
class Family:
    """A tiny random-weight model of one architecture family.

    ``config`` is written to ``config.json`` as is, plus ``token_ids``: config keys whose values
    are the ids of the named tokens in the generated tokenizer (a tuple of names gives a list).
    ``special_tokens`` take the first ids; ``appended_special_tokens`` follow the trained
    vocabulary (Qwen and Whisper layout). ``files`` are further JSON files written verbatim
    (``preprocessor_config.json``, ...).

    ``expected_parser`` is the mlx-lm tool parser module the real model's template makes mlx-lm
    infer; ``expected_caches`` the cache class names generation must use. A family the backend
    cannot load or run here keeps its row, with the exact error in ``known_incompatibility``.

    A derived family (``generator`` set, :attr:`config_origin` DERIVED) keeps in ``config`` only
    its own keys; ``generator(model_type)`` gives the tiny configuration derived from the
    installed mlx-lm's ``ModelArgs`` that they are set over (:meth:`full_config`, which imports
    mlx-lm only then). ``checkpoint_keys`` are keys of a derived family's ``config`` that real
    checkpoints carry but the model type's ``ModelArgs`` does not read (beside
    ``architectures``). A hand-made family's ``config`` is the whole configuration, and
    ``origin_reason`` says why a text family could not be derived.

    ``content_bearing``: after its random initialisation the model is made to answer from its
    whole prompt (:mod:`harness.models.zoo.content`), so checks that compare answers can fail.
    ``calling``: the model is trained to answer the harness's tool request with a call in the
    family's markup (:mod:`harness.models.zoo.calling`), so tool-call checks have calls to judge.
    ``thinking``: the model is trained to answer with a ``<think>`` block, then the answer
    (:mod:`harness.models.zoo.thinking`), so reasoning timing has reasoning to time.
    """

    name: str
    backend: LibraryName
    config: Mapping[str, Any]
    chat_template: str | None
    special_tokens: tuple[str, ...]
    bos_token: str | None
    eos_token: str
    expected_parser: str | None = None
    tags: tuple[str, ...] = field(default_factory=tuple)
    appended_special_tokens: tuple[str, ...] = field(default_factory=tuple)
    add_bos_token: bool = False
    token_ids: Mapping[str, str | tuple[str, ...]] = field(default_factory=_empty)
    files: Mapping[str, Mapping[str, Any]] = field(default_factory=_empty)
    expected_caches: tuple[str, ...] = ("KVCache",)
    known_incompatibility: str | None = None
    notes: str = ""
    generator: Callable[[str], Mapping[str, Any]] | None = None
    origin_reason: str = ""
    checkpoint_keys: tuple[str, ...] = ()
    content_bearing: bool = False
    calling: bool = False
    tool_names: str = "snake"  # a caller's tool names: "snake" (get_weather) or "hyphen"
    calls_per_turn: int = 1  # 2: a caller asked for two cities calls twice, back to back
    # a caller whose prompt opens <think> calls inside the block, never closing it (mlx-lm #1160)
    call_in_thought: bool = False
    thinking: bool = False
    # the tokenizer's pre-tokenizer (harness.models.zoo.tokenizer.PRE_TOKENIZERS): "gpt2", or
    # "qwen2" (punctuation keeps its newlines: ">\n" one token; mlx-lm #1335)
    pre_tokenizer: str = "gpt2"

    @property
    def model_type(self) -> str:
        return str(self.config["model_type"])

    @property
    def config_origin(self) -> ConfigOrigin:
        return ConfigOrigin.HAND_MADE if self.generator is None else ConfigOrigin.DERIVED

    def full_config(self) -> Mapping[str, Any]:
        """The whole configuration: ``config`` as is when hand-made; when derived, the generator's
        tiny config of :attr:`model_type` (imports mlx-lm) with ``config``'s keys set over it."""
        if self.generator is None:
            return self.config
        try:
            derived = dict(self.generator(self.model_type))
        except Exception as exc:  # an mlx-lm whose ModelArgs the generator cannot fill
            first = (str(exc).splitlines() or [""])[0]
            raise DerivationError(
                f"zoo/{self.name}: the installed mlx-lm cannot derive a {self.model_type!r} config "
                f"({type(exc).__name__}: {first}); run `mlx-harness models arch-matrix --only "
                f"{self.model_type}` to see why, and install an mlx-lm it can derive from"
            ) from None
        derived.update(plain(self.config))
        return frozen(derived)

    def resolved(self) -> Family:
        """This family with :meth:`full_config` as its ``config`` (the same family when hand-made;
        resolving a resolved family again gives the same config)."""
        if self.generator is None:
            return self
        return dataclasses.replace(self, config=self.full_config())

    def fingerprint(self) -> dict[str, Any]:
        """The JSON-able content that determines the generated files (for staleness checks); a
        derived family's holds its full config, so a change in the generator or in the installed
        mlx-lm's ``ModelArgs`` that changes the config changes it."""
        fingerprint = {
            "config": plain(self.full_config()),
            "chat_template": self.chat_template,
            "special_tokens": list(self.special_tokens),
            "appended_special_tokens": list(self.appended_special_tokens),
            "bos_token": self.bos_token,
            "eos_token": self.eos_token,
            "add_bos_token": self.add_bos_token,
            "token_ids": plain(self.token_ids),
            "files": plain(self.files),
        }
        if self.content_bearing:  # only then: the other families' files stay current
            fingerprint["content_bearing"] = CONTENT_VERSION
        if self.calling:
            fingerprint["calling"] = CALLING_VERSION
            if self.tool_names != "snake":  # only then: the other callers' files stay current
                fingerprint["tool_names"] = self.tool_names
            if self.calls_per_turn != 1:
                fingerprint["calls_per_turn"] = self.calls_per_turn
            if self.call_in_thought:
                fingerprint["call_in_thought"] = True
        if self.thinking:
            fingerprint["thinking"] = THINKING_VERSION
        if self.pre_tokenizer != "gpt2":  # only then: the other families' files stay current
            fingerprint["pre_tokenizer"] = self.pre_tokenizer
        return fingerprint


def plain(value: Any) -> Any:
    """``value`` with mappings and tuples turned into dicts and lists (JSON-ready)."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value
