"""The typed seams stay typed (issue 38): an AST lint over harness/, fast.

- No report module reads a case's artifacts by string key (``artifacts["x"]``,
  ``artifacts.get("x")``, or the mapping under another name): a section reads its scenario's
  typed artifact (``<Scenario>Artifacts.of(result)``, declared next to the scenario), the
  runner's own through ``harness.runner.case_artifacts``; a key held by a constant is flagged
  as a string is.
- No ``getattr``/``hasattr`` on a scenario object anywhere: every optional hook is declared on
  :class:`harness.scenarios.base.BaseScenario`.
- No dict literal as a message between the runner and its worker: ``request``/``reply`` take
  the typed messages of :mod:`harness.runner.messages`, and what goes down the pipe is a
  message's ``to_wire()``.

Each rule is shown catching a planted line (``PLANTED``).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

HARNESS = Path(__file__).resolve().parent.parent / "harness"
REPORT = HARNESS / "report"


def report_modules() -> list[Path]:
    """The report layer's modules: harness/report/ and each scenario folder's section.py."""
    return sorted([*REPORT.rglob("*.py"), *(HARNESS / "scenarios").glob("*/section.py")])


RUNNER = HARNESS / "runner"


def _ends_in_artifacts(node: ast.expr) -> bool:
    return (isinstance(node, ast.Attribute) and node.attr == "artifacts") or (
        isinstance(node, ast.Name) and node.id == "artifacts"
    )


def _is_text(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _bound_to_artifacts(node: ast.AST) -> bool:
    """``a = result.artifacts``: the mapping read by key under another name."""
    return isinstance(node, ast.Assign) and _ends_in_artifacts(node.value)


def _read_by_key(node: ast.AST) -> bool:
    """``<x>.artifacts["key"]`` or ``<x>.artifacts.get("key", ...)``."""
    if isinstance(node, ast.Subscript):
        return _ends_in_artifacts(node.value) and _is_text(node.slice)
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "get"
        and _ends_in_artifacts(node.func.value)
        and bool(node.args)
        and _is_text(node.args[0])
    )


def named_key_reads(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """``<x>.artifacts.get(NAME)`` / ``<x>.artifacts[NAME]``: a key held by a constant."""
    for node in ast.walk(tree):
        key: ast.expr | None = None
        if isinstance(node, ast.Subscript) and _ends_in_artifacts(node.value):
            key = node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and _ends_in_artifacts(node.func.value)
            and node.args
        ):
            key = node.args[0]
        if isinstance(key, ast.Name):
            yield node.lineno, key.id


def string_artifact_reads(tree: ast.AST) -> Iterator[int]:
    """Lines that read a case's artifacts by string key, or bind the mapping to a name."""
    for node in ast.walk(tree):
        if _bound_to_artifacts(node) or _read_by_key(node):
            yield getattr(node, "lineno", 0)


def getattr_on_scenarios(tree: ast.AST) -> Iterator[int]:
    """Lines of ``getattr(<a scenario>, ...)`` / ``hasattr(...)``: the object's expression
    names a scenario (``scenario``, ``self.scenario``, ``specs[r.scenario]``, ``SCENARIOS[n]``)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr")
            and node.args
            and "scenario" in ast.unparse(node.args[0]).lower()
        ):
            yield node.lineno


def _is_dict(node: ast.expr) -> bool:
    return isinstance(node, ast.Dict | ast.DictComp) or (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "dict"
    )


def _is_wire(node: ast.expr) -> bool:
    """``<message>.to_wire()``, what a message is on the pipe."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "to_wire"
    )


def dict_messages(tree: ast.AST) -> Iterator[int]:
    """Lines where a dict is sent as a message: ``.request({...})``, ``.reply(dict(...))``."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("request", "reply")
            and any(_is_dict(a) for a in node.args)
        ):
            yield node.lineno


def unwired_dumps(tree: ast.AST) -> Iterator[int]:
    """Lines of ``json.dumps`` of anything but a message's ``to_wire()`` (in the modules that
    write the worker channel's pipe: what goes down it is a typed message)."""
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "dumps"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == "json"
            and not (node.args and _is_wire(node.args[0]))
        ):
            yield node.lineno


CHANNEL = ("client.py", "worker.py")  # the modules that write the worker channel's pipe


@functools.cache
def _tree(path: Path) -> ast.AST:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _found(paths: list[Path], rule: Callable[[ast.AST], Iterator[int]]) -> list[str]:
    return [f"{p.relative_to(HARNESS.parent)}:{line}" for p in paths for line in rule(_tree(p))]


def test_no_report_module_reads_artifacts_by_string_key() -> None:
    checked = report_modules()
    assert _found(checked, string_artifact_reads) == [], (
        "read the scenario's typed artifact (<Scenario>Artifacts.of(result)), not a string key"
    )


def test_no_report_module_reads_artifacts_by_a_named_key() -> None:
    found = [
        f"{p.relative_to(HARNESS.parent)}:{line} ({key})"
        for p in report_modules()
        for line, key in named_key_reads(_tree(p))
    ]
    assert found == [], "read the case's typed artifacts (<Name>Artifacts.of(result)), not a key"


def test_no_getattr_on_a_scenario() -> None:
    calling = [  # parsed only where the text could hold one (the tree is 460 modules)
        p
        for p in sorted(HARNESS.rglob("*.py"))
        if "hasattr(" in (t := p.read_text()) or "getattr(" in t
    ]
    assert _found(calling, getattr_on_scenarios) == [], (
        "declare the hook on BaseScenario (harness/scenarios/base.py) and call it"
    )


def test_no_dict_message_between_runner_and_worker() -> None:
    found = _found(sorted(RUNNER.glob("*.py")), dict_messages)
    found += _found([RUNNER / name for name in CHANNEL], unwired_dumps)
    assert found == [], "send a typed message (harness/runner/messages.py) and its to_wire()"


# a line each rule must catch, and one it must let pass
PLANTED: list[tuple[Callable[[ast.AST], Iterator[int]], str, str]] = [
    (string_artifact_reads, 'x = result.artifacts["engine"]', "x = found.engine"),
    (string_artifact_reads, 'x = r.artifacts.get("points", [])', "x = r.artifacts.get(KEY)"),
    (string_artifact_reads, 'x = artifacts.get("slo")', 'x = params.get("slo")'),
    (string_artifact_reads, "a = result.artifacts", "a = Found.of(result)"),
    (lambda t: (n for n, _ in named_key_reads(t)), "x = r.artifacts.get(KEY)", "x = r.get(KEY)"),
    (getattr_on_scenarios, 'f = getattr(scenario, "headline_metrics", ())', "f = s.headline()"),
    (getattr_on_scenarios, "m = getattr(specs[r.scenario], attr)", "m = getattr(tokenizer, a)"),
    (getattr_on_scenarios, 'ok = hasattr(self.scenario, "prepare")', "ok = hasattr(sys, 'x')"),
    (dict_messages, 'client.request({"op": "run"}, 5.0)', "client.request(RunRequest(), 5.0)"),
    (dict_messages, "self.reply(dict(op='error'))", "self.reply(ErrorReply('x'))"),
    (unwired_dumps, 'out.write(json.dumps({"op": "exit"}))', "json.dumps(m.to_wire())"),
]


@pytest.mark.parametrize(("rule", "bad", "good"), PLANTED)
def test_each_rule_catches_a_planted_line(
    rule: Callable[[ast.AST], Iterator[int]], bad: str, good: str
) -> None:
    assert list(rule(ast.parse(bad))) == [1]
    assert list(rule(ast.parse(good))) == []
