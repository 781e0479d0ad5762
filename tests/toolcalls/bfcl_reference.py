"""BFCL's own judgement, from the pinned bfcl-eval wheel's files in the cache (never installed).

``ast_checker.py`` is imported as it ships, beside its converters and constants; the one module
it needs that would pull in every model SDK (``bfcl_eval.constants.model_config``) is replaced
by a mapping that says no model renames dots (``underscore_to_dot=False``), which is what BFCL
does for a model that emits names as given. Irrelevance is not judged by ``ast_checker`` in BFCL
but in ``eval_runner._evaluate_single_relevance_entry``: a reply counts as an abstention when
decoding fails or gives no call. That rule is three lines and is written out below.
"""

from __future__ import annotations

import importlib
import sys
import types
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PACKAGES = (
    "bfcl_eval",
    "bfcl_eval.constants",
    "bfcl_eval.eval_checker",
    "bfcl_eval.eval_checker.ast_eval",
    "bfcl_eval.eval_checker.ast_eval.type_convertor",
)
MODEL_NAME = "mlx-harness"


@dataclass(frozen=True)
class BfclChecker:
    """BFCL's ``ast_checker`` module and its ``Language`` enum."""

    module: types.ModuleType

    def judge(
        self,
        functions: Sequence[Mapping[str, Any]],
        output: Sequence[Mapping[str, Any]] | None,
        ground_truth: Sequence[Mapping[str, Any]],
        stem: str,
    ) -> tuple[bool, str]:
        """(valid, BFCL's error type) for a decoded output (``[{name: {arg: value}}]``), or
        for ``None``: a reply whose decoding failed."""
        if "irrelevance" in stem:
            # eval_runner._evaluate_single_relevance_entry: a decode failure or an empty output
            # is no function call, and no function call is the right answer.
            called = output is not None and not _is_empty_output(output)
            return (not called, "irrelevance_error:decoder_success" if called else "")
        if output is None:
            return (False, "relevance_error:decoder_failed")
        language = self.module.Language.PYTHON
        found = self.module.ast_checker(
            list(functions), list(output), list(ground_truth), language, stem, MODEL_NAME
        )
        return (bool(found["valid"]), str(found.get("error_type", "")))

    def simple(
        self, function: Mapping[str, Any], call: Mapping[str, Any], answer: Mapping[str, Any]
    ) -> bool:
        """BFCL's verdict on one call against one answer call (its simple_function_checker)."""
        found = self.module.simple_function_checker(
            dict(function), dict(call), dict(answer), self.module.Language.PYTHON, MODEL_NAME
        )
        return bool(found["valid"])


def _is_empty_output(decoded: Sequence[Mapping[str, Any]]) -> bool:
    """bfcl_eval.utils.is_empty_output, for outputs already in function-calling format."""
    return len(decoded) == 0 or (len(decoded) == 1 and len(decoded[0]) == 0)


@contextmanager
def bfcl_checker(root: Path) -> Iterator[BfclChecker]:
    """BFCL's checker loaded from ``root`` (the folder holding ``bfcl_eval/``); its modules are
    taken out of ``sys.modules`` again on exit."""
    before = set(sys.modules)
    try:
        for name in PACKAGES:
            package = types.ModuleType(name)
            package.__path__ = [str(root / name.replace(".", "/"))]
            sys.modules[name] = package
        config = types.ModuleType("bfcl_eval.constants.model_config")
        config.MODEL_CONFIG_MAPPING = defaultdict(  # type: ignore[attr-defined]
            lambda: types.SimpleNamespace(underscore_to_dot=False)
        )
        sys.modules[config.__name__] = config
        module = importlib.import_module("bfcl_eval.eval_checker.ast_eval.ast_checker")
        enums = importlib.import_module("bfcl_eval.constants.enums")
        module.Language = enums.Language  # the same enum it compares against
        yield BfclChecker(module)
    finally:
        for name in set(sys.modules) - before:
            if name == "bfcl_eval" or name.startswith("bfcl_eval."):
                del sys.modules[name]
