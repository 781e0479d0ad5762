"""Callers of the zoo: tiny models trained to answer the harness's tool request with a call.

Kept apart from :data:`harness.models.zoo.families.FAMILIES` (whose table tests and family
matrices hold one row per architecture), like the drafts: a caller is a trained variant of an
architecture, not one. Each is trained (:mod:`harness.models.zoo.calling`) to answer
``api_contracts``' tool request with the call its question asks for, in its template's markup:

- ``qwen2-caller``: Qwen2.5's ChatML template, Hermes ``<tool_call>{...}</tool_call>`` (one token
  each marker) -> mlx-lm's ``json_tools``; the markup mlx-lm #782 (``finish_reason:
  "tool_call"``) shows on.
- ``mistral-caller``: Mistral-Small/Devstral's template, ``[TOOL_CALLS]name[ARGS]{...}`` closed by
  the end of turn, no end marker -> ``mistral``; the markup mlx-lm #1307 (calls dropped) shows on.
- ``gemma4-hyphen-caller``: ``gemma4-caller`` trained on the same request with its tools named
  ``get-weather``/``get-time`` (``tool_names="hyphen"``); mlx-lm #1150 (0.31.2's Gemma 4 parser
  reads ``call:(\\w+)``, so a hyphenated name is no call) shows on it.
- ``qwen2-pair-caller``: ``qwen2-caller`` asked for the weather in two cities, answering with
  two calls back to back (``calls_per_turn=2``, :mod:`harness.models.zoo.calling_pair`); mlx-lm
  #1170 (0.31.2 joins adjacent calls into one unparsable text) shows on it.
- ``mistral-pair-caller``: ``mistral-caller`` asked for the weather in two cities, answering
  with two calls back to back as its template writes them
  (``[TOOL_CALLS]get_weather[ARGS]{...}[TOOL_CALLS]get_weather[ARGS]{...}``); mlx-lm #1448
  (0.30.7-0.31.3's mistral parser reads both calls as one, greedily, and raises) shows on it.
- ``qwen3-think-caller``: zoo/qwen3 with the template of Qwen3.5/3.6 and Kimi K2.5, whose
  generation prompt opens ``<think>``; it thinks one line and calls inside the open block, never
  closing it (``call_in_thought``); mlx-lm #1160 (0.31.x keep every token of an open think block
  as reasoning, the call with them) shows on it.
- ``qwen2-split-caller``: ``qwen2-caller`` whose tokenizer holds no ``<tool_call>`` token and
  pre-tokenizes as Qwen2's (``pre_tokenizer="qwen2"``): the marker is written in pieces and its
  ``>`` with the newline after it as one token (``>\n``), while ``encode("<tool_call>")`` ends in
  ``>`` alone; mlx-lm #1335 (0.31.2-0.31.3 match markers as token ids, so the call stays in the
  content) shows on it.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from types import MappingProxyType

from harness.models.zoo import templates as t
from harness.models.zoo.families_text import LLAMA, MISTRAL, QWEN2, QWEN3
from harness.models.zoo.family import Family, frozen

CALLER_TAGS = ("text", "chat", "tiny", "trained", "tool-calling")

QWEN2_CALLER = dataclasses.replace(
    QWEN2,
    name="qwen2-caller",
    content_bearing=False,
    calling=True,
    tags=CALLER_TAGS,
    notes="zoo/qwen2 trained to call: Hermes <tool_call> JSON (json_tools)",
)

MISTRAL_CALLER = dataclasses.replace(
    MISTRAL,
    name="mistral-caller",
    content_bearing=False,
    calling=True,
    chat_template=t.MISTRAL_SMALL,
    special_tokens=t.MISTRAL_SMALL_SPECIAL_TOKENS,
    tags=CALLER_TAGS,
    notes="zoo/mistral trained to call: [TOOL_CALLS]name[ARGS]{...}, no end marker (mistral)",
)

QWEN3_CODER_CALLER = dataclasses.replace(
    QWEN3,
    name="qwen3-coder-caller",
    content_bearing=False,
    calling=True,
    chat_template=t.QWEN3_CODER,
    appended_special_tokens=t.QWEN3_CODER_SPECIAL_TOKENS,
    expected_parser="qwen3_coder",
    tags=CALLER_TAGS,
    notes="zoo/qwen3 trained to call with Qwen3-Coder's template: <tool_call><function=...> "
    "XML (qwen3_coder)",
)

PYTHONIC_CALLER = dataclasses.replace(
    LLAMA,
    name="pythonic-caller",
    content_bearing=False,
    calling=True,
    chat_template=t.LFM2_TOOLS,
    special_tokens=t.LFM2_SPECIAL_TOKENS,
    bos_token="<|startoftext|>",
    add_bos_token=True,
    eos_token="<|im_end|>",
    token_ids=frozen(
        {"bos_token_id": "<|startoftext|>", "eos_token_id": "<|im_end|>", "pad_token_id": "<|pad|>"}
    ),
    expected_parser="pythonic",
    tags=CALLER_TAGS,
    notes="llama trained to call with LFM2's markup: <|tool_call_start|>[name(arg=...)]"
    "<|tool_call_end|> (pythonic)",
)

GEMMA4_CALLER = dataclasses.replace(
    LLAMA,
    name="gemma4-caller",
    content_bearing=False,
    calling=True,
    chat_template=t.GEMMA4,
    special_tokens=t.GEMMA4_SPECIAL_TOKENS,
    bos_token="<bos>",
    add_bos_token=True,
    eos_token="<turn|>",
    token_ids=frozen(
        {"bos_token_id": "<bos>", "pad_token_id": "<pad>", "eos_token_id": ("<turn|>", "<eos>")}
    ),
    expected_parser="gemma4",
    tags=CALLER_TAGS,
    notes="llama trained to call with Gemma 4's markup: <|tool_call>call:name{key:<|\"|>value"
    '<|"|>}<tool_call|> (gemma4)',
)

GEMMA4_HYPHEN_CALLER = dataclasses.replace(
    GEMMA4_CALLER,
    name="gemma4-hyphen-caller",
    tool_names="hyphen",
    notes="gemma4-caller trained on the tool request with hyphenated tool names (get-weather, "
    "get-time: MCP's and OpenAPI's style): <|tool_call>call:get-weather{...}<tool_call|>; "
    "mlx-lm #1150",
)

QWEN2_PAIR_CALLER = dataclasses.replace(
    QWEN2_CALLER,
    name="qwen2-pair-caller",
    calls_per_turn=2,
    notes="qwen2-caller asked for two cities: two <tool_call> JSON calls back to back "
    "(</tool_call><tool_call>, the template's newline between left out); mlx-lm #1170",
)

MISTRAL_PAIR_CALLER = dataclasses.replace(
    MISTRAL_CALLER,
    name="mistral-pair-caller",
    calls_per_turn=2,
    notes="mistral-caller asked for two cities: two [TOOL_CALLS]get_weather[ARGS]{...} calls "
    "back to back (no end marker between); mlx-lm #1448",
)

QWEN3_THINK_CALLER = dataclasses.replace(
    QWEN3,
    name="qwen3-think-caller",
    content_bearing=False,
    calling=True,
    call_in_thought=True,
    chat_template=t.QWEN3_THINK_OPEN,
    tags=CALLER_TAGS,
    notes="zoo/qwen3 whose prompt opens <think> (Qwen3.5's and Kimi K2.5's templates), trained "
    "to think one line and call inside the open block: ...\n<tool_call>{...}</tool_call>, no "
    "</think>; mlx-lm #1160",
)

QWEN2_SPLIT_CALLER = dataclasses.replace(
    QWEN2_CALLER,
    name="qwen2-split-caller",
    appended_special_tokens=tuple(
        tok for tok in t.QWEN2_5_SPECIAL_TOKENS if tok not in ("<tool_call>", "</tool_call>")
    ),
    pre_tokenizer="qwen2",
    notes="qwen2-caller with no <tool_call> token and Qwen2's pre-tokenizer: the call opens "
    "<tool + _call + >\\n (one token), while encode('<tool_call>') ends in > alone; mlx-lm #1335",
)

CALLER_FAMILIES: Mapping[str, Family] = MappingProxyType(
    {
        f.name: f
        for f in (
            QWEN2_CALLER,
            MISTRAL_CALLER,
            QWEN3_CODER_CALLER,
            PYTHONIC_CALLER,
            GEMMA4_CALLER,
            GEMMA4_HYPHEN_CALLER,
            QWEN2_PAIR_CALLER,
            MISTRAL_PAIR_CALLER,
            QWEN3_THINK_CALLER,
            QWEN2_SPLIT_CALLER,
        )
    }
)
"""Each caller by name; ``zoo/<name>`` in the catalog."""
