"""Adding a built-in scenario is one folder and one registry line: a toy folder added to a copy
of the package appears in ``mlx-harness scenarios``, in the generated docs (metrics, contract
and parameter tables), in a rendered report of a fake run (its own section) and passes the
scenario contract check; and the folder rules still hold in the copy."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import harness
from tests.scenarios.test_folders import trespasses

REPO = Path(__file__).resolve().parents[2]

TOY = {
    "__init__.py": '''"""``toy``: one metric, a fixed number."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from harness.core.metrics import MetricSpec
from harness.core.types import Unit
from harness.probe.types import Capability
from harness.scenarios.base import BaseScenario, Params, ScenarioContext, ScenarioOutput, metric
from harness.scenarios.toy.figures import TOY_SCORE


class ToyParams(Params):
    loudness: int = Field(3, ge=0, description="how loud the toy squeaks")


class ToyScenario(BaseScenario[ToyParams]):
    name: ClassVar[str] = "toy"
    version: ClassVar[int] = 1
    params_model = ToyParams
    metrics: ClassVar[tuple[MetricSpec, ...]] = (TOY_SCORE,)
    needs: ClassVar[frozenset[Capability]] = frozenset({Capability.CHAT})

    def run(self, ctx: ScenarioContext, params: ToyParams) -> ScenarioOutput:
        return ScenarioOutput([metric(TOY_SCORE, [float(params.loudness)])])


SCENARIO = ToyScenario()
''',
    "figures.py": '''"""The toy's one metric (a helper module of the folder)."""

from harness.core.metrics import MetricSpec
from harness.core.types import Unit

TOY_SCORE = MetricSpec("toy.squeak_db", Unit.RATIO, True, "how loud it squeaked")
''',
    "section.py": '''"""The toy's report section."""

from __future__ import annotations

from pathlib import Path

from harness.core.types import RunRecord
from harness.report.sections import METRICS, Section


def build(run: RunRecord) -> tuple[str, ...] | None:
    found = tuple(r.model for r in run.results if r.scenario == "toy")
    return found or None


SECTION = Section(
    "toy", "Toy squeaks", build, claims=("toy.",), order=METRICS + 299,
    templates=Path(__file__).parent,
)
''',
    "toy.md.j2": "{% for model in section.data %}squeaked: {{ model }}\n{% endfor %}",
    "toy.html.j2": "{% for model in section.data %}<p>squeaked: {{ model }}</p>{% endfor %}",
    "docs.md": "a toy: `toy.squeak_db`, how loud it squeaked\n",
}

LINE = '    "toy": "harness.scenarios.toy:SCENARIO",\n'

SCRIPT = """
import contextlib, io, json, sys
from pathlib import Path
repo = Path(sys.argv[1])
sys.path[1:1] = [str(repo), str(repo / "tests" / "report")]
from harness.cli import main
from harness.cli.scenarios import with_generated
from harness.core.types import Unit
from harness.report import render_html, render_markdown
from report_fixtures import case, make_run, metric
from tests.scenarios.test_scenarios_base import check_contract, contract_table
listing = io.StringIO()
with contextlib.redirect_stdout(listing):
    main(["scenarios", "toy"])
docs = with_generated((repo / "docs" / "scenarios.md").read_text(encoding="utf-8"))
run = make_run([case("zoo/llama", "toy", metrics=[metric("toy.squeak_db", Unit.RATIO, 3.0)])])
row = next(r for r in contract_table(docs) if r[0] == "toy")
check_contract(*row)
import harness
print(json.dumps({
    "harness": harness.__file__, "listing": listing.getvalue(), "docs": docs, "row": row,
    "md": render_markdown(run), "html": render_html(run),
}))
"""


def copy_with_toy(tmp_path: Path) -> Path:
    """A copy of the package with the toy's folder and its registry line (nothing else)."""
    root = tmp_path / "harness"
    shutil.copytree(
        Path(harness.__file__).parent, root, ignore=shutil.ignore_patterns("__pycache__")
    )
    folder = root / "scenarios" / "toy"
    folder.mkdir()
    for name, text in TOY.items():
        (folder / name).write_text(text, encoding="utf-8")
    registry = root / "scenarios" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    anchor = text.index("BUILT_IN: dict[str, str] = {")
    line_end = text.index("\n", anchor) + 1
    registry.write_text(text[:line_end] + LINE + text[line_end:], encoding="utf-8")
    return root


def test_a_toy_folder_and_its_line_are_picked_up_everywhere(tmp_path: Path) -> None:
    root = copy_with_toy(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(REPO)],
        capture_output=True, text=True, env=env, cwd=tmp_path, check=False, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert Path(out["harness"]).parent == root  # the copy, not the checkout
    assert out["listing"].startswith("toy (version 1)") and "loudness" in out["listing"]
    assert "| `toy` | a toy: `toy.squeak_db`, how loud it squeaked |" in out["docs"]
    assert "**`toy`**" in out["docs"] and "how loud the toy squeaks" in out["docs"]
    assert out["row"] == ["toy", "harness.scenarios.toy.ToyParams", "chat", "none"]
    assert "## Toy squeaks" in out["md"] and "squeaked: zoo/llama" in out["md"]
    assert "<p>squeaked: zoo/llama</p>" in out["html"]
    assert trespasses(root / "scenarios") == []
