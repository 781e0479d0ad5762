"""distributed: the params refuse a split a world size cannot have; the identical-output check
passes on equal tokens, names the rank, prompt and token where they differ, and is not judged on a
prompt-blind model; a hostfile is read or refused in one line; and the planted break: rank 1's
tensor shards perturbed (tests/scenarios/distributed_planted, through PYTHONPATH into the
ranks) on the content-bearing zoo llama fails the case, naming rank 1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from harness.backends.base import BackendError, LoadInfo
from harness.backends.distributed_types import PromptRun, RankResult, RankStatus, Split
from harness.core.check_types import CheckStatus
from harness.scenarios.base import ScenarioContext
from harness.scenarios.distributed import SCENARIO, DistributedParams
from harness.scenarios.distributed.outputs import first_difference, identical_outputs
from harness.scenarios.distributed.scenario import hostfile_hosts

PLANTED = Path(__file__).resolve().parent / "distributed_planted"
ROOT = Path(__file__).resolve().parents[2]

# (params, what the error names; "" when valid)
PARAMS = [
    ({"world_size": 2, "split": "tensor"}, ""),
    ({"world_size": 1, "split": "none"}, ""),
    ({"world_size": 1, "split": "pipeline"}, "split pipeline needs 2 ranks or more"),
    ({"world_size": 2, "split": "none"}, "runs the whole model on every rank"),
    ({"world_size": 2, "split": "diagonal"}, "split"),
]


@pytest.mark.parametrize(("params", "words"), PARAMS)
def test_a_split_the_world_cannot_have_is_refused(params: dict[str, Any], words: str) -> None:
    if not words:
        DistributedParams(**params)
        return
    with pytest.raises(ValidationError, match=words):
        DistributedParams(**params)


def _rank(rank: int, *answers: tuple[int, ...]) -> RankResult:
    runs = tuple(PromptRun(p, True, tokens, 0.1, 0.2, 4) for p, tokens in enumerate(answers))
    return RankResult(rank, 2, Split.TENSOR, RankStatus.OK, runs=runs)


REFERENCE = [(5, 6, 7), (8, 9, 10)]
# (reference, ranks, status, words in the line)
CHECKS = [
    (REFERENCE, [_rank(0, *REFERENCE), _rank(1, *REFERENCE)], CheckStatus.PASS, "4 runs on 2"),
    (
        REFERENCE,
        [_rank(0, *REFERENCE), _rank(1, (5, 6, 7), (8, 3, 10))],
        CheckStatus.FAIL,
        "rank 1 of 2 (tensor), prompt 1: greedy token 1 is 3, one process gives 9",
    ),
    (
        REFERENCE,
        [_rank(0, (5, 6), (8, 9, 10))],
        CheckStatus.FAIL,
        "rank 0 of 2 (tensor), prompt 0: greedy token 2 is none",
    ),
    ([(1, 1), (1, 1)], [_rank(0, (1, 1), (1, 1))], CheckStatus.UNJUDGED, "does not depend"),
]


@pytest.mark.parametrize(("reference", "ranks", "status", "words"), CHECKS)
def test_identical_output_check(
    reference: list[tuple[int, ...]], ranks: list[RankResult], status: CheckStatus, words: str
) -> None:
    verdict = identical_outputs(reference, ranks)
    assert verdict.status is status and words in verdict.reason


def test_first_difference() -> None:
    assert first_difference((1, 2), (1, 2)) is None
    assert first_difference((1, 2), (1, 3)) == 1
    assert first_difference((1, 2), (1,)) == 1


# (hostfile text, hosts or the words of the one line)
HOSTFILES = [
    ('[{"ssh": "a", "ips": ["10.0.0.1"]}, {"ssh": "b", "ips": ["10.0.0.2"]}]', 2),
    ('{"backend": "jaccl", "hosts": [{"ssh": "a", "ips": []}]}', 1),
    ("{not json", "cannot be read"),
    ('{"hosts": []}', "no hosts"),
]


@pytest.mark.parametrize(("text", "expected"), HOSTFILES)
def test_hostfile_is_read_or_refused_in_one_line(
    tmp_path: Path, text: str, expected: int | str
) -> None:
    path = tmp_path / "hosts.json"
    path.write_text(text)
    if isinstance(expected, int):
        assert hostfile_hosts(path) == expected
        return
    with pytest.raises(BackendError, match=expected) as raised:
        hostfile_hosts(path)
    assert str(path) in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.real_model
@pytest.mark.nightly  # two real ranks (mlx-lm imported in each): 30-46 s on this shared 2-core box
def test_a_perturbed_shard_on_one_rank_fails_the_identical_output_check(
    tiny_llama: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from harness.backends import BACKENDS

    model, _ = BACKENDS.get("mlx_lm").load(tiny_llama)
    monkeypatch.setenv("PYTHONPATH", f"{PLANTED}:{ROOT}")
    info = LoadInfo(0.0, 0, "cpu")
    ctx = ScenarioContext(model, info, repeats=1, warmup=0, reload=lambda: (model, info))
    params = DistributedParams(
        world_size=2, split="tensor", prompt_tokens=12, gen_tokens=6, link_sizes_bytes=(4096,)
    )
    out = SCENARIO.run(ctx, params)
    (check,) = out.checks
    assert check.status is CheckStatus.FAIL, check.reason
    # the ranks agree with each other (all_sum), and all differ from one process
    assert check.reason.startswith("ranks 0, 1 of 2 (tensor), prompt "), check.reason
    assert out.failures == (check.reason,)
    assert [r["rank"] for r in out.artifacts["ranks"]] == [0, 1]
