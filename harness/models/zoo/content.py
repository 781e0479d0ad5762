"""Make a zoo text model's greedy answer depend on its whole prompt, and prove that it does.

A tiny random-weight transformer answers the same few tokens ("\\n\\n\\n...") to every prompt: its
residual stream is dominated by the current token's embedding, so attention, the only part that
reads the rest of the prompt, hardly moves the argmax. Every check that compares two answers
(concurrent = serial, cached = uncached, after a hang-up = before) then passes whatever the server
does. Scaling the token embeddings down (:data:`EMBEDDING_SCALES`, tried in order) makes what
attention and the mixing layers carry from every earlier position decide the next token, in any
architecture, without training: a cache holding another request's keys and values gives another
answer.

The answer is also kept to text that round-trips: tokens that do not decode to whole characters
(single UTF-8 bytes), special tokens and chat markup are never predicted (their output rows are
zeroed), so a streamed answer and a non-streamed one can be compared character for character and
no random answer opens a tool call.

:func:`content_report` measures it on the built model: greedy answers to :data:`PROBES` (pairs that
differ in one word, at the start of a long prompt among them) must all differ, and a planted
cache mix-up (the first tokens' cache from the other prompt of a pair) must change the answer.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from harness.models.zoo.family import DerivationError

if TYPE_CHECKING:
    import mlx.nn as nn

EMBEDDING_SCALES: tuple[float, ...] = (0.1, 0.03, 0.3, 0.01)
QUERY_KEY_SCALES: tuple[float, ...] = (1.0, 3.0)  # sharper attention where the first is not enough
PROBE_TOKENS = 8  # greedy tokens compared per probe

# Pairs of user messages that differ in one word; the first pair differs at the very start of a
# long message, so only a model that reads the whole prompt tells them apart.
PROBES: tuple[tuple[str, str], ...] = (
    (
        "Alice went to Paris by train with her brother and two friends in the morning. "
        "Then she said:",
        "Bobby went to Paris by train with her brother and two friends in the morning. "
        "Then she said:",
    ),
    ("voyage number 1", "voyage number 2"),
    ("The capital of France is Paris.", "The capital of Japan is Tokyo."),
)


class NotContentBearing(DerivationError):
    """No setting made the model's answers depend on the prompt (one line: what the probes saw,
    and the fix); a :class:`DerivationError`, so the drivers print it as one."""


@dataclass(frozen=True)
class ContentReport:
    """What the probes showed on one built model."""

    embedding_scale: float
    query_key_scale: float
    distinct_answers: int  # distinct greedy answers among the probes' prompts
    prompts: int
    mixups_caught: int  # planted cache mix-ups that changed the answer
    mixups: int
    silenced_tokens: int

    @property
    def bearing(self) -> bool:
        return self.distinct_answers == self.prompts and self.mixups_caught == self.mixups

    def as_dict(self) -> dict[str, object]:
        return {
            "embedding_scale": self.embedding_scale,
            "query_key_scale": self.query_key_scale,
            "distinct_answers": self.distinct_answers,
            "prompts": self.prompts,
            "mixups_caught": self.mixups_caught,
            "mixups": self.mixups,
            "silenced_tokens": self.silenced_tokens,
        }


def silenced_ids(tokenizer: Any, vocab_size: int) -> list[int]:
    """Ids the model must never predict: special and added tokens, and tokens that do not decode
    to whole characters on their own (a lone UTF-8 byte decodes to U+FFFD)."""
    special = set(getattr(tokenizer, "all_special_ids", ()) or ())
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    special.update(int(i) for i in added)
    out: list[int] = []
    for token_id in range(vocab_size):
        if token_id in special:
            out.append(token_id)
            continue
        text = tokenizer.decode([token_id])
        if not text or any(_unprintable(ch) for ch in text):
            out.append(token_id)
    return out


def _unprintable(ch: str) -> bool:
    """A character a streamed and a whole answer may not show alike: U+FFFD (a lone UTF-8 byte)
    or a control character other than newline and tab."""
    return ch == "\ufffd" or (unicodedata.category(ch) == "Cc" and ch not in "\n\t")


def _embeddings(model: nn.Module) -> list[nn.Module]:
    import mlx.nn as nn

    return [m for _, m in model.named_modules() if isinstance(m, nn.Embedding)]


def _output_head(model: nn.Module, vocab_size: int) -> nn.Module | None:
    """The untied output projection (a Linear with ``vocab_size`` outputs), or None when tied."""
    import mlx.nn as nn

    heads = [
        m
        for name, m in model.named_modules()
        if isinstance(m, nn.Linear) and name.split(".")[-1] in ("lm_head", "output")
    ]
    heads = [m for m in heads if int(m.weight.shape[0]) == vocab_size]
    return heads[0] if heads else None


def apply(
    model: nn.Module,
    *,
    scale: float,
    query_key: float,
    silenced: Sequence[int],
    vocab_size: int,
) -> None:
    """Scale the token embeddings by ``scale`` and the query and key projections by ``query_key``
    (sharper attention), and zero the output rows of ``silenced`` ids (in a tied model the
    embedding rows, which are its output rows)."""
    import mlx.core as mx
    import mlx.nn as nn

    if query_key != 1.0:
        for name, module in model.named_modules():
            if isinstance(module, nn.Linear) and name.split(".")[-1] in ("q_proj", "k_proj"):
                module.weight = module.weight * query_key

    rows = mx.array(list(silenced), dtype=mx.int32) if silenced else None
    head = _output_head(model, vocab_size)
    for emb in _embeddings(model):
        weight = emb.weight * scale
        if head is None and rows is not None and int(weight.shape[0]) == vocab_size:
            weight[rows] = 0.0
        emb.weight = weight
    if head is not None and rows is not None:
        weight = head.weight
        weight[rows] = 0.0
        head.weight = weight
    if head is None:  # tied: the head shrank with the embeddings; the final norm makes up for it
        _restore_logit_scale(model, scale)
    mx.eval(model.parameters())


def _final_norm(model: nn.Module) -> nn.Module | None:
    """The norm before the output head: the inner model's own ``...norm`` child (``model.norm``,
    lfm2's ``model.embedding_norm``)."""
    found = [
        m
        for name, m in model.named_modules()
        if name.count(".") == 1 and name.split(".")[-1].endswith("norm") and hasattr(m, "weight")
    ]
    return found[-1] if len(found) == 1 else None


def _restore_logit_scale(model: nn.Module, scale: float) -> bool:
    """Divide the final norm's output by ``scale``, so a tied model's logits keep their spread
    (the embeddings scaled by ``scale`` are also its output rows): ``w / scale`` for a plain
    RMSNorm, ``(1 + w) / scale - 1`` for Gemma's, whichever is checked to do it. False when
    neither does (the logits stay flatter; the greedy answer is the same either way)."""
    import mlx.core as mx

    norm = _final_norm(model)
    if norm is None:
        return False
    original = norm.weight
    probe = mx.random.normal((1, int(original.shape[-1])), key=mx.random.key(0))
    wanted = norm(probe) / scale
    for weight in (original / scale, (1.0 + original) / scale - 1.0):
        norm.weight = weight
        if mx.allclose(norm(probe), wanted, rtol=1e-4, atol=1e-5).item():
            return True
    norm.weight = original
    return False


def _prompt_ids(tokenizer: Any, text: str) -> list[int]:
    if getattr(tokenizer, "chat_template", None):
        ids = tokenizer.apply_chat_template(
            [{"role": "user", "content": text}], add_generation_prompt=True
        )
        return [int(i) for i in ids]
    return [int(i) for i in tokenizer.encode(text)]


def _greedy(model: nn.Module, prompt: Sequence[int], cache: list[Any] | None = None) -> list[int]:
    import mlx.core as mx
    from mlx_lm.generate import generate_step
    from mlx_lm.models.cache import make_prompt_cache

    cache = cache if cache is not None else make_prompt_cache(model)
    steps = generate_step(
        mx.array(list(prompt)), model, max_tokens=PROBE_TOKENS, prompt_cache=cache
    )
    return [int(token) for token, _ in steps]


def _mixup_changes(model: nn.Module, prompt: list[int], position: int, other: int) -> bool:
    """Whether answering ``prompt`` over a cache whose tokens up to ``position`` came from another
    request (the same tokens with ``other`` at ``position``) changes its greedy answer."""
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    foreign = [*prompt[:position], other]
    cache = make_prompt_cache(model)
    model(mx.array([foreign]), cache=cache)
    mx.eval([c.state for c in cache])
    return _greedy(model, prompt[position + 1 :], cache) != _greedy(model, prompt)


def _plants(tokenizer: Any, prompt: list[int], silenced: set[int]) -> list[tuple[int, int]]:
    """Where to plant a foreign token in ``prompt``: its first, middle and last user-text token
    (positions not in the template), each swapped for the next id that is not silenced."""
    marker = _prompt_ids(tokenizer, "")
    start = next((i for i, (a, b) in enumerate(zip(prompt, marker, strict=False)) if a != b), 0)
    end = start + (len(prompt) - len(marker))  # the user's text is prompt[start:end]
    if end <= start:
        return []
    positions = sorted({start, (start + end) // 2, end - 1})
    plants = []
    for position in positions:
        other = (prompt[position] + 1) % (max(prompt) + 2)
        while other in silenced or other == prompt[position]:
            other = (other + 1) % (max(prompt) + 2)
        plants.append((position, other))
    return plants


def content_report(
    model: nn.Module,
    tokenizer: Any,
    *,
    scale: float,
    query_key: float,
    silenced: Sequence[int],
) -> ContentReport:
    """Greedy answers to :data:`PROBES` on ``model``, and what planted cache mix-ups (a foreign
    token at the start, middle and end of the first probe's text) do to its answer."""
    prompts = [_prompt_ids(tokenizer, text) for pair in PROBES for text in pair]
    answers = {tuple(_greedy(model, p)) for p in prompts}
    plants = _plants(tokenizer, prompts[0], set(silenced))
    caught = sum(_mixup_changes(model, prompts[0], pos, other) for pos, other in plants)
    return ContentReport(
        embedding_scale=scale,
        query_key_scale=query_key,
        distinct_answers=len(answers),
        prompts=len(prompts),
        mixups_caught=caught,
        mixups=len(plants),
        silenced_tokens=len(silenced),
    )


def make_content_bearing(
    model: nn.Module, tokenizer: Any, *, vocab_size: int, name: str
) -> ContentReport:
    """Try :data:`QUERY_KEY_SCALES` x :data:`EMBEDDING_SCALES` in order on ``model`` (changed in
    place) until the probes show its answers depend on the prompt; the report of the setting kept.
    Raises :class:`NotContentBearing` when none does."""
    from mlx.utils import tree_flatten

    original = cast("list[tuple[str, Any]]", tree_flatten(model.parameters()))
    silenced = silenced_ids(tokenizer, vocab_size)
    last: ContentReport | None = None
    for query_key in QUERY_KEY_SCALES:
        for scale in EMBEDDING_SCALES:
            model.load_weights(original)
            apply(model, scale=scale, query_key=query_key, silenced=silenced, vocab_size=vocab_size)
            last = content_report(
                model, tokenizer, scale=scale, query_key=query_key, silenced=silenced
            )
            if last.bearing:
                return last
    assert last is not None
    raise NotContentBearing(
        f"zoo/{name}: no embedding scale of {EMBEDDING_SCALES} with query/key scales "
        f"{QUERY_KEY_SCALES} made the greedy answer depend on the whole prompt (last: "
        f"{last.distinct_answers} distinct answers of {last.prompts}, {last.mixups_caught} of "
        f"{last.mixups} planted cache mix-ups caught); build the zoo with the mlx-lm of uv.lock "
        "(`make setup`), or report it"
    )
