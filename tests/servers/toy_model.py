"""A deterministic toy language model and its tokenizer, for the planted test server.

The "model" is a word-level generator: the state after a sequence of pieces (prompt pieces, then
generated ones) is a hash chain, and the logits of the next word are drawn from a generator
seeded by that state. So greedy output is a pure function of the prompt, sampling at a
temperature > 0 really varies (about 48 words, none dominant), and ``top_k: 1``, a tiny
``top_p`` or ``min_p: 1`` all give the greedy word. Its tokenizer (``tokenizer.json``, built with
the ``tokenizers`` library: WordLevel, whitespace pre-tokenizer, the markup as added tokens)
counts the same pieces, so the harness's token counting agrees with the server's usage.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_WORD_LIST = (
    "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november "
    "oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu red orange "
    "yellow green blue indigo violet black white silver gold copper iron stone river hill lake "
    "cloud rain snow wind sun"
)
WORDS = tuple(_WORD_LIST.split())
THINK_START, THINK_END = "<think>", "</think>"
CALL_START, CALL_END = "<tool_call>", "</tool_call>"
MARKERS = (THINK_START, THINK_END, CALL_START, CALL_END)
UNK = "[UNK]"
THINK_WORDS = 4  # sampled words between <think> and </think>
ROOT = b"planted-toy"
MODEL_ID = "planted-toy"


def build_tokenizer() -> Any:
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.pre_tokenizers import Whitespace

    vocab = {UNK: 0, **{w: i + 1 for i, w in enumerate(WORDS)}}
    tokenizer = Tokenizer(WordLevel(vocab, unk_token=UNK))
    tokenizer.pre_tokenizer = Whitespace()
    tokenizer.add_special_tokens(list(MARKERS))  # matched whole, before pre-tokenization
    return tokenizer


def write_model_folder(folder: Path) -> Path:
    """``tokenizer.json`` and a ``config.json`` naming the toy, in ``folder`` (made if needed)."""
    folder.mkdir(parents=True, exist_ok=True)
    build_tokenizer().save(str(folder / "tokenizer.json"))
    (folder / "config.json").write_text(json.dumps({"model_type": "planted_toy"}))
    return folder


def pieces_of(tokenizer: Any, text: str) -> list[str]:
    """The prompt's pieces as the tokenizer splits them (unknown words keep their own text, so
    two prompts differing only in unknown words still differ)."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    return [text[start:end] for start, end in encoding.offsets]


def advance(state: bytes, piece: str) -> bytes:
    return hashlib.blake2b(state + b"\x1f" + piece.encode(), digest_size=16).digest()


def state_of(pieces: Sequence[str], start: bytes = ROOT) -> bytes:
    state = start
    for piece in pieces:
        state = advance(state, piece)
    return state


def logits(state: bytes) -> list[float]:
    rng = random.Random(state)
    return [rng.gauss(0.0, 1.5) for _ in WORDS]


@dataclass(frozen=True)
class Sampling:
    temperature: float = 0.0
    top_k: int = 0  # 0: off
    top_p: float = 1.0  # 1: off
    min_p: float = 0.0  # 0: off
    frequency_penalty: float = 0.0  # 0: off; subtracted from a word's score per time generated


def choose(scores: Sequence[float], sampling: Sampling, rng: random.Random) -> int:
    """Greedy at temperature 0, else sample after top_k, top_p and min_p (in that order)."""
    best = max(range(len(scores)), key=lambda i: scores[i])
    if sampling.temperature <= 0:
        return best
    order = sorted(range(len(scores)), key=lambda i: -scores[i])
    if sampling.top_k > 0:
        order = order[: sampling.top_k]
    top = scores[order[0]] / sampling.temperature
    weights = [math.exp(scores[i] / sampling.temperature - top) for i in order]
    total = sum(weights)
    probs = [w / total for w in weights]
    if 0 < sampling.top_p < 1:
        kept, mass = 0, 0.0
        while kept < len(probs) and mass < sampling.top_p:
            mass += probs[kept]
            kept += 1
        order, probs = order[:kept], probs[:kept]
    if sampling.min_p > 0:
        floor = sampling.min_p * probs[0]
        keep = [k for k, p in enumerate(probs) if p >= floor]
        order, probs = [order[k] for k in keep], [probs[k] for k in keep]
    pick = rng.random() * sum(probs)
    for index, p in zip(order, probs, strict=True):
        pick -= p
        if pick <= 0:
            return index
    return order[-1]


class KV:
    """The generator's running state (its "KV cache"): one per request, unless a planted bug
    shares one between requests."""

    def __init__(self, state: bytes) -> None:
        self.state = state

    def append(self, piece: str) -> str:
        self.state = advance(self.state, piece)
        return piece


def generate(
    kv: KV,
    sampling: Sampling,
    rng: random.Random,
    *,
    think: bool = False,
    calls: Sequence[Mapping[str, Any]] = (),
) -> Iterator[str]:
    """Pieces, one per token, without end (the caller stops at max_tokens or a stop string);
    with ``calls`` the model writes them as ``<tool_call>{json}</tool_call>`` and ends."""
    if calls:
        for call in calls:
            yield kv.append(CALL_START)
            for part in json.dumps(call).split(" "):
                yield kv.append(part)
            yield kv.append(CALL_END)
        return
    position = 0
    generated: dict[int, int] = {}  # word index -> times generated (the frequency penalty's)
    while True:
        if think and position == 0:
            piece = THINK_START
        elif think and position == THINK_WORDS + 1:
            piece = THINK_END
        else:
            scores = logits(kv.state)
            if sampling.frequency_penalty:
                scores = [
                    score - sampling.frequency_penalty * generated.get(i, 0)
                    for i, score in enumerate(scores)
                ]
            index = choose(scores, sampling, rng)
            generated[index] = generated.get(index, 0) + 1
            piece = WORDS[index]
        position += 1
        yield kv.append(piece)


def joined(pieces: Sequence[str]) -> str:
    return " ".join(pieces)


def piece_text(position: int, piece: str) -> str:
    """The text a piece adds at ``position`` (pieces are joined with single spaces)."""
    return piece if position == 0 else " " + piece


# -- chat ----------------------------------------------------------------------------------


def message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, Mapping))
    return ""


def render_chat(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any]) -> str:
    """The toy's chat template: the tools as one JSON line, one line per message, then the
    generation prompt. :func:`chat_in_prompt` reads the tools and the last user text back."""
    lines = [TOOLS_LINE + json.dumps(list(tools))] if tools else []
    lines += [f"{m.get('role', 'user')}: {message_text(m.get('content'))}" for m in messages]
    lines.append("assistant:")
    return "\n".join(lines)


TOOLS_LINE = "tools: "


def chat_in_prompt(prompt: str) -> tuple[list[Any], str]:
    """The tools and the last user text of a prompt :func:`render_chat` wrote (a raw
    completion of a rendered chat makes the same calls); none and ``prompt`` otherwise."""
    lines = prompt.split("\n")
    if not lines[0].startswith(TOOLS_LINE) or lines[-1] != "assistant:":
        return [], prompt
    try:
        tools = json.loads(lines[0][len(TOOLS_LINE) :])
    except ValueError:
        return [], prompt
    users = [ln[len("user: ") :] for ln in lines if ln.startswith("user: ")]
    return (tools if isinstance(tools, list) else []), (users[-1] if users else "")


def tool_name(tool: Any) -> str | None:
    function = tool.get("function") if isinstance(tool, Mapping) else None
    name = function.get("name") if isinstance(function, Mapping) else None
    return name if isinstance(name, str) else None


def _argument(kind: Any, text: str) -> Any:
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    capitalised = [w for w in re.findall(r"[A-Za-z]+", text)[1:] if w[0].isupper()]
    return capitalised[0] if capitalised else "x"


def plan_calls(user_text: str, tools: Sequence[Any]) -> list[dict[str, Any]]:
    """The calls the toy makes: each tool the user names (in order of mention), else the first
    tool when the user asks for "a tool"; none otherwise."""
    named = [(user_text.find(n), t) for t in tools if (n := tool_name(t)) and n in user_text]
    chosen = [t for _, t in sorted(named, key=lambda pair: pair[0])]
    if not chosen and "tool" in user_text.lower() and tools and tool_name(tools[0]):
        chosen = [tools[0]]
    calls = []
    for tool in chosen:
        function = tool["function"]
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = parameters.get("required") or list(properties)
        arguments = {
            key: _argument((properties.get(key) or {}).get("type"), user_text) for key in required
        }
        calls.append({"name": function["name"], "arguments": arguments})
    return calls
