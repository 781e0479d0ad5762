"""The zoo tokenizer's two pre-tokenizers: GPT-2's (every family's) keeps ``>`` apart from the
newline after it; Qwen2's (``qwen2-split-caller``'s) writes ``>\\n`` as one token, while the
marker alone ends in ``>``: the token shapes mlx-lm #1335 needs. Trains only tokenizers (fast)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from harness.models.zoo.common import write_tokenizer
from harness.models.zoo.families import FAMILIES
from harness.models.zoo.families_caller import CALLER_FAMILIES
from harness.models.zoo.family import Family
from harness.models.zoo.tokenizer import train_tokenizer

MARKERS = ("<tool_call>", "</tool_call>")


def _trained(family: Family, tmp_path: Path) -> Any:
    from tokenizers import Tokenizer

    write_tokenizer(family.resolved(), tmp_path)
    return Tokenizer.from_file(str(tmp_path / "tokenizer.json"))


def _ids(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False).ids)


def test_the_split_callers_marker_ends_in_a_lone_gt_that_a_newline_merges_into(
    tmp_path: Path,
) -> None:
    tokenizer = _trained(CALLER_FAMILIES["qwen2-split-caller"], tmp_path)
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    assert not set(MARKERS) & set(vocab)  # no added marker tokens: the marker comes in pieces
    for marker in MARKERS:
        alone = _ids(tokenizer, marker)
        assert len(alone) > 1 and tokenizer.decode(alone[-1:]) == ">", marker
        # what the model writes: the marker's last piece and the newline after it, one token
        followed = _ids(tokenizer, marker + "\n")
        assert followed[:-1] == alone[:-1] and len(followed) == len(alone), marker
        assert tokenizer.decode(followed[-1:]) == ">\n", marker
        # so the marker's own token sequence is not in the text the model writes
        assert followed[: len(alone)] != alone, marker
    # the end marker before the end of turn keeps its lone ">": only the start is missed
    end_marker = _ids(tokenizer, MARKERS[1])
    end = _ids(tokenizer, "}\n</tool_call><|im_end|>")
    assert end[-1] == vocab["<|im_end|>"] and end[-1 - len(end_marker) : -1] == end_marker


def test_the_split_callers_answer_holds_the_merged_token(tmp_path: Path) -> None:
    """The call the caller is trained on, as its template renders it: ``>\\n`` one token, and
    the token ids of ``encode("<tool_call>")`` (what mlx-lm 0.31.2-0.31.3 match) nowhere in it."""
    pytest.importorskip("mlx_lm")
    from mlx_lm.utils import load_tokenizer

    from harness.core.tool_request import weather_question
    from harness.models.zoo import calling

    family = CALLER_FAMILIES["qwen2-split-caller"]
    write_tokenizer(family.resolved(), tmp_path)
    tokenizer = load_tokenizer(tmp_path)
    assert tokenizer.tool_parser.__module__ == "mlx_lm.tool_parsers.json_tools"
    ex = calling.example(tokenizer, weather_question("Rome"), ("get_weather", {"city": "Rome"}))
    answer = list(ex.answer)
    start = tokenizer.encode("<tool_call>", add_special_tokens=False)
    merged = tokenizer.encode("<tool_call>\n", add_special_tokens=False)
    n = len(start)
    windows = [answer[i : i + n] for i in range(len(answer) - n + 1)]
    assert merged in windows and start not in windows
    assert calling.parse_call(tokenizer.decode(answer[:-1]), "json_tools") == (
        "get_weather",
        {"city": "Rome"},
    )


def test_gpt2s_pre_tokenizer_keeps_the_newline_apart(tmp_path: Path) -> None:
    """The default (every other family's): a newline after ``>`` is a token of its own, so the
    marker's ids are a prefix of the marker followed by a newline."""
    from tokenizers import Tokenizer

    train_tokenizer(tmp_path, special_tokens=(), vocab_size=512)
    tokenizer = Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    for marker in MARKERS:
        alone = _ids(tokenizer, marker)
        assert _ids(tokenizer, marker + "\n") == [*alone, *_ids(tokenizer, "\n")], marker


def test_only_the_split_caller_has_qwen2s_pre_tokenizer_in_its_fingerprint() -> None:
    """The other families' fingerprints (so their built files) are unchanged by the option."""
    for family in (*FAMILIES.values(), *CALLER_FAMILIES.values()):
        split = family.name == "qwen2-split-caller"
        assert (family.pre_tokenizer == "qwen2") is split, family.name
        assert ("pre_tokenizer" in family.fingerprint()) is split, family.name


def test_an_unknown_pre_tokenizer_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="pre_tokenizer 'bert' is not one of"):
        train_tokenizer(tmp_path, special_tokens=(), pre_tokenizer="bert")
