"""Steps every zoo builder shares: tokenizer files, token-id resolution, JSON files, weights."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from harness.models.zoo.family import Family, plain
from harness.models.zoo.tokenizer import train_tokenizer, write_tokenizer_config

if TYPE_CHECKING:
    import mlx.nn as nn


@dataclass(frozen=True)
class BuiltModel:
    """What a builder wrote: the parameter count, and a content-bearing text model's probe report
    (:meth:`harness.models.zoo.content.ContentReport.as_dict`), both kept in the model's marker."""

    parameters: int
    content: Mapping[str, object] | None = None


def write_json(path: Path, data: Any) -> None:
    """Write ``data`` (mappings and tuples allowed) as indented, key-sorted JSON."""
    path.write_text(json.dumps(plain(data), indent=2, sort_keys=True) + "\n", encoding="utf-8")


def write_tokenizer(
    family: Family,
    out_dir: Path,
    *,
    appended_tokens: tuple[str, ...] = (),
    tokenizer_extra: Mapping[str, object] | None = None,
) -> dict[str, int]:
    """Train the family's tokenizer into ``out_dir`` and write its config; return the vocabulary.

    The trained part is sized so that trained, appended special and ``appended_tokens`` together
    fill the model's ``vocab_size`` embedding rows at most.
    """
    appended = len(family.appended_special_tokens) + len(appended_tokens)
    vocab = train_tokenizer(
        out_dir,
        special_tokens=family.special_tokens,
        vocab_size=int(family.config["vocab_size"]) - appended,
        bos_token=family.bos_token if family.add_bos_token else None,
        appended_special_tokens=family.appended_special_tokens,
        appended_tokens=appended_tokens,
        pre_tokenizer=family.pre_tokenizer,
    )
    missing = [
        tok for tok in (*family.special_tokens, *family.appended_special_tokens) if tok not in vocab
    ]
    if missing:
        raise ValueError(f"{family.name}: special tokens missing from the tokenizer: {missing}")
    if len(vocab) > int(family.config["vocab_size"]):
        raise ValueError(f"{family.name}: {len(vocab)} tokens exceed vocab_size")
    extra: dict[str, object] = {"add_bos_token": family.add_bos_token}
    extra.update(tokenizer_extra or {})
    write_tokenizer_config(
        out_dir,
        chat_template=family.chat_template,
        bos_token=family.bos_token,
        eos_token=family.eos_token,
        extra=extra,
    )
    return vocab


def resolve_token_ids(
    token_ids: Mapping[str, str | tuple[str, ...]], vocab: Mapping[str, int]
) -> dict[str, int | list[int]]:
    """Config entries naming tokens (``{"eos_token_id": "<|im_end|>"}``) turned into ids."""
    resolved: dict[str, int | list[int]] = {}
    for key, names in token_ids.items():
        if isinstance(names, str):
            resolved[key] = vocab[names]
        else:
            resolved[key] = [vocab[name] for name in names]
    return resolved


def model_config(family: Family, vocab: Mapping[str, int]) -> dict[str, Any]:
    """The family's ``config.json`` content: its config plus the resolved token ids."""
    config: dict[str, Any] = plain(family.config)
    config.update(resolve_token_ids(family.token_ids, vocab))
    return config


def write_extra_files(family: Family, out_dir: Path) -> None:
    """Write the family's verbatim JSON files (processor configs and the like)."""
    for name, content in family.files.items():
        write_json(out_dir / name, content)


def seeded_init(seed: int) -> None:
    """Seed MLX's generator: models built next get deterministic random weights."""
    import mlx.core as mx

    mx.random.seed(seed)


def check_float32(model: nn.Module) -> int:
    """Evaluate ``model``'s parameters, check they are float32 and return how many there are."""
    import mlx.core as mx
    from mlx.utils import tree_flatten

    params = cast("list[tuple[str, Any]]", tree_flatten(model.parameters()))
    mx.eval([v for _, v in params])
    wrong = [k for k, v in params if v.dtype != mx.float32]
    if wrong:
        raise TypeError(f"non-float32 parameters: {wrong[:5]}")
    return sum(int(v.size) for _, v in params)
