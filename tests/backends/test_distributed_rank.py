"""One rank's own steps without a group: a split the model lacks is named (n/a, never an
error), and a ring of one's empty hostfile is dropped so ``mx.distributed.init`` can form it."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from harness.backends.distributed_rank import _drop_empty_hostfile, split_model
from harness.backends.distributed_types import RankResult, RankStatus, Split


class _Group:
    def __init__(self, size: int) -> None:
        self._size = size

    def size(self) -> int:
        return self._size

    def rank(self) -> int:
        return 0


class Llama:  # shard only, as mlx-lm's llama
    def __init__(self) -> None:
        self.model = SimpleNamespace(layers=[1, 2])
        self.sharded = False

    def shard(self, group: Any) -> None:
        self.sharded = True


class Smol(Llama):  # 9 heads, 3 kv heads, as SmolLM2-135M
    def __init__(self) -> None:
        super().__init__()
        self.args = SimpleNamespace(num_attention_heads=9, num_key_value_heads=3)


class Lfm2:  # neither
    def __init__(self) -> None:
        self.model = SimpleNamespace(layers=[1, 2])


class Qwen2(Llama):  # both, with one layer only
    def __init__(self) -> None:
        super().__init__()
        self.model = SimpleNamespace(layers=[1], pipeline=lambda group: None)


# (model, split, world size, the reason; None when split)
SPLITS = [
    (Llama, Split.TENSOR, 2, None),
    (Llama, Split.PIPELINE, 2, "has no model.pipeline(group) (pipeline parallelism)"),
    (Lfm2, Split.TENSOR, 2, "has no shard(group) (tensor parallelism)"),
    (Qwen2, Split.PIPELINE, 2, "1 layers cannot make 2 pipeline stages"),
    (Lfm2, Split.NONE, 1, None),
    (Smol, Split.TENSOR, 2, "9 attention heads, 3 key value heads do not divide over 2 ranks"),
    (Smol, Split.TENSOR, 3, None),
]


@pytest.mark.parametrize(("cls", "split", "size", "reason"), SPLITS)
def test_a_split_the_model_lacks_is_named(
    cls: type, split: Split, size: int, reason: str | None
) -> None:
    model = cls()
    found = split_model(model, split, _Group(size))
    if reason is None:
        assert found is None
        assert getattr(model, "sharded", False) == (split is Split.TENSOR)
    else:
        assert found is not None and reason in found


@pytest.mark.parametrize(("text", "kept"), [("", False), ("\n", False), ('[["a:1"]]', True)])
def test_an_empty_hostfile_is_dropped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, kept: bool
) -> None:
    path = tmp_path / "hostfile"
    path.write_text(text)
    monkeypatch.setenv("MLX_HOSTFILE", str(path))
    _drop_empty_hostfile()
    assert ("MLX_HOSTFILE" in os.environ) == kept


def test_a_rank_result_round_trips() -> None:
    result = RankResult(1, 2, Split.PIPELINE, RankStatus.NOT_APPLICABLE, "why", "ring", "h")
    assert RankResult.from_json(result.to_json()) == result
