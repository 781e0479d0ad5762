"""mlx-lm's tool-parser and thinking-marker inference, applied to files instead of a tokenizer.

The rules come from the installed ``mlx_lm/tokenizer_utils.py`` (``_infer_tool_parser``,
``_infer_thinking``), compiled from its source without importing mlx (see :mod:`.source`).
When that fails (mlx-lm missing, or a version whose functions are not self-contained) a copy of
the mlx-lm 0.32.2 rules is used; a test checks both against the real functions.

The functions are called on :class:`TokenizerView`, a stand-in exposing what they read:
``chat_template`` exactly as transformers would set it and ``get_vocab()`` as a lazy mapping that
answers membership from the added tokens and a byte search of the vocabulary files (parsing a
14 MB tokenizer.json costs over a second; searching it costs milliseconds).
"""

from __future__ import annotations

import inspect
import json
import struct
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.probe.source import SourceError, functions, package_dir, parse

# mlx-lm 0.32.2 rules, in its order: (template markers that must all appear, parser).
TEMPLATE_RULES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("<minimax:tool_call>",), "minimax_m2"),
    (("<|tool_call>", "<tool_call|>"), "gemma4"),
    (("<start_function_call>",), "function_gemma"),
    (("<longcat_tool_call>",), "longcat"),
    (("<arg_key>",), "glm47"),
    (("<|tool_list_start|>",), "pythonic"),
    (("<|tool_call_start|>",), "pythonic"),
    (("<tool_call>\\n<function=",), "qwen3_coder"),
    (("<tool_call>\n<function=",), "qwen3_coder"),
    (("<|tool_calls_section_begin|>",), "kimi_k2"),
    (('<function name="', '<param name="'), "minicpm5"),
    (("[TOOL_CALLS]",), "mistral"),
    (("<atem:function_calls>",), "muse_spark"),
    (("<tool_call>", "tool_call.name"), "json_tools"),
)
XTML_TOKENS = ("<|open|>", "<|close|>", "<|sep|>", "<|end_of_msg|>")
THINK_TOKENS = (
    ("<think>", "</think>"),
    ("<longcat_think>", "</longcat_think>"),
    ("<|think:start|>", "<|think:end|>"),
)


def builtin_infer_tool_parser(tokenizer: Any) -> str | None:
    """Copy of ``mlx_lm.tokenizer_utils._infer_tool_parser`` (mlx-lm 0.32.2)."""
    template = tokenizer.chat_template
    if isinstance(template, str):
        for markers, parser in TEMPLATE_RULES:
            if all(m in template for m in markers):
                return parser
    vocab = tokenizer.get_vocab()
    if all(t in vocab for t in XTML_TOKENS):
        return "kimi_k3"
    if "<|tool_call_start|>" in vocab and "<|tool_call_end|>" in vocab:
        return "pythonic"
    return None


def builtin_infer_thinking(tokenizer: Any) -> tuple[Any, Any, Any, Any]:
    """Copy of ``mlx_lm.tokenizer_utils._infer_thinking`` (mlx-lm 0.32.2), markers only."""
    vocab = tokenizer.get_vocab()
    for start, end in THINK_TOKENS:
        if start in vocab and end in vocab:
            return start, end, None, None
    if "<|channel>" in vocab and "<channel|>" in vocab:
        return "<|channel>thought", "<channel|>", None, None
    if all(t in vocab for t in XTML_TOKENS):
        return "<|open|>think<|sep|>", "<|close|>think<|sep|>", None, None
    return None, None, None, None


@dataclass(frozen=True)
class ToolRules:
    """The inference functions in use and where they came from."""

    infer_tool_parser: Callable[[Any], str | None]
    infer_thinking: Callable[[Any], tuple[Any, Any, Any, Any]]
    source: str  # "installed" or "builtin (mlx-lm 0.32.2)"


def builtin_rules() -> ToolRules:
    return ToolRules(builtin_infer_tool_parser, builtin_infer_thinking, "builtin (mlx-lm 0.32.2)")


def installed_rules(mlx_lm_dir: Path | None = None) -> ToolRules:
    """The rules of the installed mlx-lm, or the builtin copy when they cannot be read."""
    root = mlx_lm_dir if mlx_lm_dir is not None else package_dir("mlx_lm")
    if root is None:
        return builtin_rules()
    path = root / "tokenizer_utils.py"
    try:
        tree = parse(path)
        tool = functions(tree, ("_infer_tool_parser",), origin=str(path))["_infer_tool_parser"]
    except SourceError:
        return builtin_rules()
    try:
        thinking = functions(tree, ("_infer_thinking",), origin=str(path))["_infer_thinking"]
    except SourceError:  # mlx-lm before 0.32 finds think tokens elsewhere: the builtin copy
        return ToolRules(
            on_tokenizer(tool), builtin_infer_thinking, "installed (thinking: builtin)"
        )
    return ToolRules(on_tokenizer(tool), thinking, "installed")


def on_tokenizer(infer: Callable[..., Any]) -> Callable[[Any], Any]:
    """``infer`` called on a tokenizer: mlx-lm before 0.32 passes ``_infer_tool_parser`` the
    chat template itself (``_infer_tool_parser(tokenizer.chat_template)``), later releases the
    tokenizer."""
    parameters = list(inspect.signature(infer).parameters)
    if parameters[:1] == ["chat_template"]:
        return lambda view: infer(view.chat_template)
    return infer


class LazyVocab(Mapping[str, int]):
    """Membership in a tokenizer's vocabulary without parsing the vocabulary files.

    ``tokens`` are known exactly; ``blobs`` are searched for each token as a JSON string
    (tokenizer.json, vocab.json) or, with ``gguf=True``, as a GGUF length-prefixed string.
    Ids are not resolved (every value is -1); only ``in`` is meaningful, which is what the
    inference rules use to pick a parser or thinking markers.
    """

    def __init__(
        self, blobs: tuple[bytes, ...], tokens: frozenset[str] = frozenset(), *, gguf: bool = False
    ) -> None:
        self._blobs = blobs
        self._tokens = tokens
        self._gguf = gguf

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        if key in self._tokens:
            return True
        if self._gguf:
            raw = key.encode("utf-8")
            needle = struct.pack("<Q", len(raw)) + raw
            return any(needle in blob for blob in self._blobs)
        needles = {json.dumps(key).encode(), json.dumps(key, ensure_ascii=False).encode()}
        return any(_quoted_in(n, blob) for blob in self._blobs for n in needles)

    def __getitem__(self, key: str) -> int:
        if key not in self:
            raise KeyError(key)
        return -1

    def __iter__(self) -> Iterator[str]:
        return iter(self._tokens)

    def __len__(self) -> int:
        return len(self._tokens)


def _quoted_in(needle: bytes, blob: bytes) -> bool:
    """``needle`` (a JSON string literal) occurs as a whole string, not inside an escaped one."""
    start = blob.find(needle)
    while start >= 0:
        if start == 0 or blob[start - 1] != 0x5C:  # not preceded by a backslash
            return True
        start = blob.find(needle, start + 1)
    return False


class TokenizerView:
    """What mlx-lm's inference functions read from a tokenizer, built from files."""

    def __init__(self, chat_template: str | Mapping[str, str] | None, vocab: LazyVocab) -> None:
        self.chat_template = chat_template
        self._vocab = vocab

    def get_vocab(self) -> Mapping[str, int]:
        return self._vocab

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return []


def tokenizer_template(
    template: str | None, extra: Mapping[str, str], tokenizer_config: Mapping[str, Any]
) -> Any:
    """``tokenizer.chat_template`` as transformers 5 sets it for a local directory.

    chat_template.jinja (``template``) and additional_chat_templates/*.jinja (``extra``, by
    name) win over tokenizer_config.json; several named templates become a dict.
    chat_template.json is a processor file: the tokenizer (and so mlx-lm's inference) does not
    read it.
    """
    named: dict[str, str] = {}
    if template is not None:
        named["default"] = template
    named.update(extra)
    if named:
        return named["default"] if list(named) == ["default"] else named
    value = tokenizer_config.get("chat_template")
    if isinstance(value, list):
        return {
            t["name"]: t["template"]
            for t in value
            if isinstance(t, dict) and "name" in t and "template" in t
        }
    return value


def vocab_view(
    blobs: tuple[bytes, ...], tokenizer_config: Mapping[str, Any], added: Any, special: Any
) -> LazyVocab:
    """A :class:`LazyVocab` over a tokenizer's files.

    ``blobs`` are tokenizer.json and vocab.json as stored (only searched); the added tokens of
    tokenizer_config.json, ``added`` (added_tokens.json) and ``special``
    (special_tokens_map.json) are known exactly.
    """
    tokens: set[str] = set()
    decoder = tokenizer_config.get("added_tokens_decoder")
    if isinstance(decoder, Mapping):
        tokens.update(
            str(v["content"]) for v in decoder.values() if isinstance(v, Mapping) and "content" in v
        )
    if isinstance(added, Mapping):
        tokens.update(str(k) for k in added)
    if isinstance(special, Mapping):
        tokens.update(_special_tokens(special.values()))
    return LazyVocab(blobs, frozenset(tokens))


def _special_tokens(values: Any) -> Iterator[str]:
    for value in values:
        if isinstance(value, str):
            yield value
        elif isinstance(value, Mapping) and isinstance(value.get("content"), str):
            yield value["content"]
        elif isinstance(value, list):
            yield from _special_tokens(value)


def _call(installed: Callable[[Any], Any], builtin: Callable[[Any], Any], view: Any) -> Any:
    """The installed rule on the stand-in; the builtin copy if the installed code fails on it."""
    try:
        return installed(view)
    except Exception:  # installed code on a stand-in object: never let it break the probe
        return builtin(view)


@dataclass(frozen=True)
class TokenizerFacts:
    parser: str | None
    parser_source: str | None  # tokenizer_config | model_defaults | inferred
    thinking: tuple[str, str] | None


def tokenizer_facts(
    view: TokenizerView,
    tokenizer_config: Mapping[str, Any],
    defaults: Mapping[str, Any],
    rules: ToolRules,
) -> TokenizerFacts:
    """The parser mlx-lm's ``tokenizer_utils.load`` would pick, and its thinking markers."""
    parser: str | None = None
    source: str | None = None
    if tokenizer_config.get("tool_parser_type") is not None:
        parser, source = str(tokenizer_config["tool_parser_type"]), "tokenizer_config"
    elif defaults.get("tool_parser_type") is not None:
        parser, source = str(defaults["tool_parser_type"]), "model_defaults"
    else:
        inferred = _call(rules.infer_tool_parser, builtin_infer_tool_parser, view)
        if inferred is not None:
            parser, source = str(inferred), "inferred"
    start, end, *_ = _call(rules.infer_thinking, builtin_infer_thinking, view)
    thinking = (str(start), str(end)) if start is not None and end is not None else None
    return TokenizerFacts(parser, source, thinking)
