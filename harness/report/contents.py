"""The report's sections. The built-in ones are registered as a plug-in's are: a key naming
the ``"module:attr"`` of its :class:`~harness.report.sections.Section`, whose ``order`` places it
(the bands are in :mod:`harness.report.sections`). A scenario's section lives in its folder:
``harness/scenarios/<name>/section.py`` (``build(run)`` and a ``SECTION`` with its ``order`` and
``templates`` naming the folder) beside its partials ``<name>.md.j2`` and ``<name>.html.j2``; it
is found through the scenario registry, nothing to add here. A section of no one scenario: a
module here, the partials ``templates/<key>.md.j2`` and ``templates/<key>.html.j2``, and one
line in ``REPORT_ONLY``. A plug-in's section (entry-point
group ``mlx_harness.report_sections``, a ``Section`` with ``templates`` naming its partials'
folder) comes after the built-in ones that show metrics, before "Other metrics", unless its
``order`` says otherwise; one that cannot be loaded is shown as its one-line error, never a lost
report.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

from harness.core.registry import Registry
from harness.core.types import RunRecord
from harness.report import unclaimed
from harness.report.sections import Section
from harness.scenarios import BUILT_IN as SCENARIO_FOLDERS
from harness.scenarios.folders import section_target

# The sections of no one scenario (each Section's ``order`` places it)
REPORT_ONLY: dict[str, str] = {
    "header": "harness.report.header:SECTION",
    "matrix": "harness.report.matrix:SECTION",
    "charts": "harness.report.charts:SECTION",
    "side_by_side": "harness.report.side_by_side:SECTION",
    "performance": "harness.report.performance:SECTION",
    "engines": "harness.report.engines:SECTION",
    "cancellation": "harness.report.cancellation:SECTION",
    "batch_generate": "harness.report.batch_generate:SECTION",
    "quality": "harness.report.quality:SECTION",
    "speculative": "harness.report.speculative:SECTION",
    "tool_calls": "harness.report.tool_calls:SECTION",
    "vision": "harness.report.vision:SECTION",
    "audio": "harness.report.audio:SECTION",
    "memory": "harness.report.memory:SECTION",
    "failures": "harness.report.failures:SECTION",
    "ledger": "harness.report.ledger:SECTION",
    "machine_state": "harness.report.machine_state:SECTION",
    "models": "harness.report.identities:SECTION",
}


def scenarios_in(*runs: RunRecord) -> frozenset[str]:
    """The scenarios whose cases ``runs`` hold."""
    return frozenset(r.scenario for run in runs for r in run.results)


def scenario_sections(scenarios: Mapping[str, str] = SCENARIO_FOLDERS) -> dict[str, str]:
    """The report sections of the built-in scenarios' folders, found through the scenario
    registry's strings: ``name -> "<its package>.section:SECTION"`` for each whose folder holds
    a ``section.py`` (looked up on disk, not imported until the report loads it)."""
    return {name: found for name, target in scenarios.items() if (found := section_target(target))}


BUILT_IN: dict[str, str] = {**REPORT_ONLY, **scenario_sections()}  # report order: ``order``

REPORT_SECTIONS: Registry[Section] = Registry(
    "report section", BUILT_IN, group="mlx_harness.report_sections"
)


def _failed(name: str, exc: BaseException) -> Section:
    kind = "report section" if name in BUILT_IN else "report section plug-in"

    def build(_: RunRecord) -> object:
        raise RuntimeError(f"{kind} {name!r} could not be loaded: {exc}")

    return Section(f"plugin-{name}", name, build)


def registered_sections(scenarios: Collection[str] | None = None) -> tuple[Section, ...]:
    """The sections registered (built-in and plug-ins'), by key; a broken one is a section
    that says so. ``scenarios``: the scenarios a run holds; a scenario folder's section is
    loaded only for a run that holds its scenario (it shows and claims only its own
    scenario's cases), so a report of two scenarios does not import the other thirty."""
    folders = BUILT_IN.keys() - REPORT_ONLY.keys()  # found on disk once, at import
    found = []
    for name in REPORT_SECTIONS.names():
        if scenarios is not None and name in folders and name not in scenarios:
            continue
        try:
            section = REPORT_SECTIONS.get(name)
            if not isinstance(section, Section):
                raise TypeError(f"{type(section).__name__} is not a harness.api.Section")
        except Exception as exc:  # a plug-in's fault must not cost the report
            section = _failed(name, exc)
        found.append(section)
    return tuple(found)


def default_sections(scenarios: Collection[str] | None = None) -> tuple[Section, ...]:
    """The registered sections and "Other metrics" (what none of them claims), in report order
    (``order``; sections of the same order by key). ``scenarios``: those of the run(s) to show,
    whose folders' sections are all that is loaded of the scenarios' (None: every one)."""
    registered = registered_sections(scenarios)
    claims = tuple(c for s in registered for c in s.claims)
    return tuple(sorted((*registered, unclaimed.section(claims)), key=lambda s: s.order))
