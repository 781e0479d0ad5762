"""A backend from outside the harness, through the ``mlx_harness.backends`` entry-point group,
without touching harness code: docs/extending.md's toy backend (the code block itself) becomes
a package on ``sys.path`` (a module and a ``*.dist-info`` with ``entry_points.txt``), and a suite
runs on it through ``mlx-harness run`` in a subprocess (its workers inherit the path); a scenario
plug-in beside it. Plug-ins import ``harness.api`` only."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from harness.core.types import Status
from harness.results.store import load_run

README = Path(__file__).resolve().parents[2] / "docs" / "extending.md"

# A second plug-in that declares a prompt cache its model does not have: a backend bug.
LIAR = """\
from harness.api import BackendCapability
from toy_backend import ToyBackend


class LiarBackend(ToyBackend):
    name = "toy_liar"
    capabilities = ToyBackend.capabilities | {BackendCapability.PROMPT_CACHE}


BACKEND = LiarBackend()
"""

# A scenario plug-in, through the public face too: one metric, the prompt's token count.
COUNTER = """\
from typing import ClassVar

from pydantic import Field

from harness.api import BaseScenario, MetricSpec, Params, ScenarioOutput, Unit, metric

TOKENS = MetricSpec("count.tokens", Unit.COUNT, False, "tokens in the text")


class CountParams(Params):
    text: str = Field("hello plug-in", description="what to count")


class CountScenario(BaseScenario[CountParams]):
    name: ClassVar[str] = "count_tokens"
    version: ClassVar[int] = 1
    measures_time: ClassVar[bool] = False
    params_model = CountParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (TOKENS,)

    def run(self, ctx, params: CountParams) -> ScenarioOutput:
        return ScenarioOutput((metric(TOKENS, [float(len(ctx.model.encode(params.text)))]),))


SCENARIO = CountScenario()
"""

# A report section plug-in: its own partials, escaped as the built-in ones are.
SECTION = """\
from pathlib import Path

from harness.api import Section


def build(run):
    rows = [
        (r.model, m.samples[0]) for r in run.results for m in r.metrics if m.name == "count.tokens"
    ]
    return {"rows": rows} if rows else None


SECTION = Section(
    "count_report",
    "Token counts <b>",
    build,
    claims=("count.",),
    templates=Path(__file__).parent / "count_templates",
)
"""
SECTION_MD = "{% for model, n in section.data.rows %}- {{ model }}: {{ n }} tokens\n{% endfor %}"
SECTION_HTML = (
    "<ul>{% for model, n in section.data.rows %}<li>{{ model }}: {{ n }}</li>{% endfor %}</ul>"
)

SUITE = """\
schema_version: 1
name: toy
defaults: {repeats: 1, warmup: 0, timeout_s: 60}
models:
  - {name: toy-model, path: ./model, backend: toy}
  - {name: liar-model, path: ./model, backend: toy_liar}
scenarios:
  - scenario: load
  - scenario: prompt_cache
    params: {prompt_tokens: 16, gen_tokens: 2}
  - scenario: count_tokens
    models: [toy-model]
"""


def readme_toy_backend() -> str:
    """The ``# toy_backend.py`` code block of docs/extending.md."""
    blocks = re.findall(r"```python\n(# toy_backend\.py\n.*?)```", README.read_text(), re.S)
    assert len(blocks) == 1, "docs/extending.md lost its toy backend"
    return blocks[0]


def plugin_package(root: Path) -> Path:
    root.mkdir()
    (root / "toy_backend.py").write_text(readme_toy_backend())
    (root / "toy_liar.py").write_text(LIAR)
    (root / "count_scenario.py").write_text(COUNTER)
    (root / "count_section.py").write_text(SECTION)
    (root / "count_templates").mkdir()
    (root / "count_templates" / "count_report.md.j2").write_text(SECTION_MD)
    (root / "count_templates" / "count_report.html.j2").write_text(SECTION_HTML)
    info = root / "toy_backend-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-backend\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(
        "[mlx_harness.backends]\ntoy = toy_backend:BACKEND\ntoy_liar = toy_liar:BACKEND\n"
        "[mlx_harness.scenarios]\ncount_tokens = count_scenario:SCENARIO\n"
        "[mlx_harness.report_sections]\ncount_report = count_section:SECTION\n"
    )
    return root


def mlx_harness() -> list[str]:
    script = Path(sys.executable).with_name("mlx-harness")
    if script.is_file():
        return [str(script)]
    found = shutil.which("mlx-harness")
    return [found] if found else [sys.executable, "-m", "harness.cli"]


def test_a_plugin_backend_runs_and_is_held_to_its_capabilities(tmp_path: Path) -> None:
    plugins = plugin_package(tmp_path / "site")
    work = tmp_path / "work"
    (work / "model").mkdir(parents=True)
    (work / "model" / "weights.bin").write_bytes(b"\0" * 64)
    suite = work / "toy.suite.yaml"
    suite.write_text(SUITE)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(plugins), env.get("PYTHONPATH")) if p)
    reports = tmp_path / "reports"
    done = subprocess.run(
        [*mlx_harness(), "run", str(suite), "--report-dir", str(reports), "--run-id", "toy"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = done.stdout + done.stderr
    assert "Traceback" not in output, output
    run = load_run(reports / "toy" / "run.jsonl")
    got = {(r.model, r.scenario): (r.status, r.reason or "") for r in run.results}
    assert got[("toy-model", "load")] == (Status.PASSED, ""), output
    assert got[("toy-model", "count_tokens")] == (Status.PASSED, ""), output
    counted = next(r for r in run.results if r.scenario == "count_tokens")
    assert [m.samples for m in counted.metrics if m.name == "count.tokens"] == [(13.0,)]
    markdown = (reports / "toy" / "report.md").read_text()
    html = (reports / "toy" / "report.html").read_text()
    assert "- toy-model: 13.0 tokens" in markdown  # the plug-in's section, its own partial
    assert "<li>toy-model: 13.0</li>" in html
    assert "Token counts" in html and "Token counts <b>" not in html  # its title escaped
    other = markdown.split("Other metrics", 1)[-1]
    assert "count.tokens" not in other  # claimed by the plug-in's section
    assert got[("toy-model", "prompt_cache")] == (
        Status.SKIPPED,
        "capability_missing: backend toy has no prompt cache",
    )
    # the liar declares a prompt cache: judged as declared, then its load is the backend's bug
    for scenario in ("load", "prompt_cache"):
        status, reason = got[("liar-model", scenario)]
        assert status is Status.ERRORED, (scenario, reason)
        assert "backend toy_liar declares prompt cache, but its loaded model (ToyModel) lacks" in (
            reason
        )
        assert "\n" not in reason
    assert done.returncode == 1, output  # an errored case fails the run


def test_the_plugins_import_only_the_public_face() -> None:
    """The docs' example and the plug-ins here import nothing under harness but harness.api."""
    import ast

    for source in (readme_toy_backend(), LIAR, COUNTER, SECTION):
        found = {
            node.module
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.ImportFrom) and node.module
        } | {
            alias.name
            for node in ast.walk(ast.parse(source))
            if isinstance(node, ast.Import)
            for alias in node.names
        }
        assert {m for m in found if m.split(".")[0] == "harness"} == {"harness.api"}


def test_the_public_face_names_what_it_exports() -> None:
    import harness.api

    assert sorted(harness.api.__all__) == harness.api.__all__
    missing = [n for n in harness.api.__all__ if not hasattr(harness.api, n)]
    assert not missing
