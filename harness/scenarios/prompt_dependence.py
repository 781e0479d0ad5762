"""The one rule for checks that pass when two answers are the same text: on a model whose greedy
answer does not depend on its prompt, "the same text" proves nothing (a server answering one
request with another's tokens would still give it), so such a check is not judged there, and
says so in one line. :func:`foreign_prompt` makes the other prompt a check asks to find out: the
same tokens with the first ``n`` replaced, as a cache holding another request's tokens would
serve them.
"""

from __future__ import annotations

from collections.abc import Sequence

PROMPT_INDEPENDENT = "not judged: the model's answer does not depend on the prompt"
FIX = "use a model whose answer depends on its prompt (the zoo's text families, or a real model)"
SHIFT = 7  # token ids moved by this much: another request's tokens, never the same ones


def independence_line(seen: str) -> str:
    """The one line a check gives when it cannot judge: the rule, what showed it, the fix."""
    return f"{PROMPT_INDEPENDENT}: {seen}; {FIX}"


def foreign_prompt(tokens: Sequence[int], n: int, vocab_size: int) -> list[int]:
    """``tokens`` with the first ``n`` replaced by other ids (each moved by :data:`SHIFT`)."""
    size = max(vocab_size, SHIFT + 1)
    return [(t + SHIFT) % size for t in tokens[:n]] + list(tokens[n:])
