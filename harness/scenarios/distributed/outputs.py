"""The identical-output check: every rank's greedy tokens, prompt by prompt and token by token,
against the same model's in one process. A model whose answer does not depend on its prompt
(two prompts, one answer) cannot show a wrong shard, so the check is then not judged."""

from __future__ import annotations

from collections.abc import Sequence

from harness.backends.distributed_types import RankResult
from harness.core.check_types import CheckStatus, CheckVerdict
from harness.scenarios.prompt_dependence import independence_line

CHECK = "identical_output"


def first_difference(expected: Sequence[int], found: Sequence[int]) -> int | None:
    """The first position where the two differ (a shorter one differs where it ends)."""
    for i, (a, b) in enumerate(zip(expected, found, strict=False)):
        if a != b:
            return i
    return None if len(expected) == len(found) else min(len(expected), len(found))


def identical_outputs(
    reference: Sequence[Sequence[int]], ranks: Sequence[RankResult]
) -> CheckVerdict:
    """``reference[p]``: prompt ``p``'s greedy tokens in one process."""
    if len(reference) < 2 or list(reference[0]) == list(reference[1]):
        seen = "two prompts gave the same greedy tokens in one process"
        return CheckVerdict(CHECK, CheckStatus.UNJUDGED, independence_line(seen))
    compared = 0
    wrong: dict[tuple[int, int, str, str], list[int]] = {}  # (prompt, at, got, want)
    for result in ranks:
        for run in result.runs:
            expected = reference[run.prompt]
            at = first_difference(expected, run.tokens)
            compared += 1
            if at is not None:
                got = str(run.tokens[at]) if at < len(run.tokens) else "none"
                want = str(expected[at]) if at < len(expected) else "none"
                named = wrong.setdefault((run.prompt, at, got, want), [])
                if result.rank not in named:
                    named.append(result.rank)
    if wrong:
        (prompt, at, got, want), which = min(wrong.items(), key=lambda kv: kv[0][:2])
        first = ranks[0]
        who = f"rank {which[0]}" if len(which) == 1 else f"ranks {', '.join(map(str, which))}"
        return CheckVerdict(
            CHECK,
            CheckStatus.FAIL,
            f"{who} of {first.world_size} ({first.split.value}), prompt {prompt}: greedy token "
            f"{at} is {got}, one process gives {want}",
        )
    if not compared:
        return CheckVerdict(CHECK, CheckStatus.UNJUDGED, "not judged: no rank ran a prompt")
    return CheckVerdict(
        CHECK,
        CheckStatus.PASS,
        f"{compared} runs on {len(ranks)} ranks: every greedy token as in one process",
    )
