"""The probe's tool-parser and thinking inference equals mlx-lm's own, on every table row.

Three checks: the rules compiled from the installed mlx-lm source, the builtin copy and the real
``mlx_lm.tokenizer_utils`` functions agree on the probe's stand-in tokenizer; and for rows with
a real tokenizer, mlx-lm's full loader (``mlx_lm.utils.load_tokenizer``) picks the same parser
and thinking markers as the probe.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from probe_rows import ROWS

from harness.probe.installed import Stack
from harness.probe.probe import probe_model
from harness.probe.snapshot import read_snapshot
from harness.probe.source import SourceError, functions, package_dir, parse
from harness.probe.toolrules import (
    LazyVocab,
    TokenizerView,
    builtin_rules,
    installed_rules,
    tokenizer_template,
    vocab_view,
)

DIR_ROWS = [r for r in ROWS if not r.name.startswith("gguf")]
TOKENIZER_ROWS = [r for r in ROWS if r.tokenizer]


def _view(path: Path) -> TokenizerView:
    files = read_snapshot(path)
    config = files.read("tokenizer_config.json") or {}
    added, special = files.read("added_tokens.json"), files.read("special_tokens_map.json")
    return TokenizerView(
        tokenizer_template(files.template, files.extra_templates, config),
        vocab_view(files.vocab, config, added, special),
    )


def test_rules_come_from_the_installed_mlx_lm() -> None:
    assert installed_rules().source == "installed"


@pytest.mark.parametrize("row", DIR_ROWS, ids=[r.name for r in DIR_ROWS])
def test_inference_functions_agree(row: Any, row_paths: Mapping[str, Path]) -> None:
    from mlx_lm.tokenizer_utils import _infer_thinking, _infer_tool_parser

    view = _view(row_paths[row.name])
    expected = _infer_tool_parser(view)
    assert installed_rules().infer_tool_parser(view) == expected
    assert builtin_rules().infer_tool_parser(view) == expected
    markers = _infer_thinking(view)[:2]
    assert installed_rules().infer_thinking(view)[:2] == markers
    assert builtin_rules().infer_thinking(view)[:2] == markers


@pytest.mark.parametrize("row", TOKENIZER_ROWS, ids=[r.name for r in TOKENIZER_ROWS])
def test_probe_matches_mlx_lm_loader(row: Any, row_paths: Mapping[str, Path], stack: Stack) -> None:
    from mlx_lm.utils import load_tokenizer

    path = row_paths[row.name]
    tokenizer = load_tokenizer(path)
    parser = tokenizer._tool_parser
    expected = parser.__module__.rsplit(".", 1)[-1] if parser else None
    probe = probe_model(path, stack=stack)
    assert probe.tool_parser == expected
    thinking = (tokenizer.think_start, tokenizer.think_end) if tokenizer.has_thinking else None
    assert probe.thinking == thinking


def test_lazy_vocab_ignores_escaped_template_text() -> None:
    """A marker inside an escaped JSON string (a template) is not a vocabulary entry."""
    vocab = vocab_view((b'{"x": "say \\"<think>\\" here", "y": "</think>"}',), {}, None, None)
    assert "</think>" in vocab
    assert "<think>" not in vocab


def test_named_templates_become_a_dict() -> None:
    config = {"chat_template": [{"name": "default", "template": "a"},
                                {"name": "tool_use", "template": "b"}]}  # fmt: skip
    assert tokenizer_template(None, {}, config) == {"default": "a", "tool_use": "b"}
    assert tokenizer_template("j", {}, config) == "j"
    assert tokenizer_template("j", {"tool_use": "t"}, config) == {"default": "j", "tool_use": "t"}


def test_functions_refuse_code_that_is_not_self_contained(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("import os\nLIMIT = 3\n\ndef f(x):\n    return os.sep * LIMIT\n")
    with pytest.raises(SourceError, match="os"):
        functions(parse(source), ("f",), origin="m.py")
    source.write_text("LIMIT = 3\n\ndef g(x: int) -> int:\n    return h(x) * LIMIT\n\n"
                      "def h(y):\n    return y + 1\n")  # fmt: skip
    assert functions(parse(source), ("g",), origin="m.py")["g"](1) == 6


def test_installed_rules_fall_back_without_mlx_lm(tmp_path: Path) -> None:
    assert installed_rules(tmp_path).source.startswith("builtin")
    assert package_dir("surely_not_an_installed_package") is None


OLD_TOKENIZER_UTILS = """
def _infer_tool_parser(chat_template):
    if not isinstance(chat_template, str):
        return None
    elif "[TOOL_CALLS]" in chat_template:
        return "mistral"
    return None
"""


def test_an_older_release_is_asked_with_its_own_rules(tmp_path: Path) -> None:
    """mlx-lm before 0.32 (0.31.1 here, its shape): ``_infer_tool_parser(chat_template)`` and no
    ``_infer_thinking``. Its own rule decides, so a template it has no rule for infers no parser
    there (not the builtin 0.32.2 one, which would call the release unable to load it)."""
    (tmp_path / "tokenizer_utils.py").write_text(OLD_TOKENIZER_UTILS)
    rules = installed_rules(tmp_path)
    assert rules.source == "installed (thinking: builtin)"
    vocab = LazyVocab((), frozenset({"<think>", "</think>"}))
    assert rules.infer_tool_parser(TokenizerView("x [TOOL_CALLS] y", vocab)) == "mistral"
    gemma4 = "<|tool_call>call:{{ name }}<tool_call|>"
    assert rules.infer_tool_parser(TokenizerView(gemma4, vocab)) is None
    assert builtin_rules().infer_tool_parser(TokenizerView(gemma4, vocab)) == "gemma4"
    assert rules.infer_thinking(TokenizerView(gemma4, vocab))[:2] == ("<think>", "</think>")
