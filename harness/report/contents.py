"""The report's sections. The built-in ones are registered as a plug-in's are: a key naming
the ``"module:attr"`` of its :class:`~harness.report.sections.Section`, whose ``order`` places it
(the bands are in :mod:`harness.report.sections`). Adding one: a module with a ``build(run)``
function and a ``SECTION`` value with its ``order``, the partials ``templates/<key>.md.j2`` and
``templates/<key>.html.j2``, and one line in ``BUILT_IN``. A plug-in's section (entry-point
group ``mlx_harness.report_sections``, a ``Section`` with ``templates`` naming its partials'
folder) comes after the built-in ones that show metrics, before "Other metrics", unless its
``order`` says otherwise; one that cannot be loaded is shown as its one-line error, never a lost
report.
"""

from __future__ import annotations

from harness.core.registry import Registry
from harness.core.types import RunRecord
from harness.report import unclaimed
from harness.report.sections import Section

BUILT_IN: dict[str, str] = {  # in report order; each Section's ``order`` decides
    "header": "harness.report.header:SECTION",
    "matrix": "harness.report.matrix:SECTION",
    "charts": "harness.report.charts:SECTION",
    "side_by_side": "harness.report.side_by_side:SECTION",
    "performance": "harness.report.performance:SECTION",
    "engines": "harness.report.engines:SECTION",
    "serving": "harness.report.serving:SECTION",
    "trace_replay": "harness.report.trace_replay:SECTION",
    "saturation": "harness.report.saturation:SECTION",
    "stall": "harness.report.stall:SECTION",
    "cancellation": "harness.report.cancellation:SECTION",
    "soak": "harness.report.soak:SECTION",
    "batch_generate": "harness.report.batch_generate:SECTION",
    "api_contracts": "harness.report.api_contracts:SECTION",
    "template_contracts": "harness.report.template_contracts:SECTION",
    "quality": "harness.report.quality:SECTION",
    "prompt_cache": "harness.report.prompt_cache:SECTION",
    "kv_sweep": "harness.report.kv_sweep:SECTION",
    "quant_sweep": "harness.report.quant_sweep:SECTION",
    "distributed": "harness.report.distributed:SECTION",
    "session": "harness.report.session:SECTION",
    "speculative": "harness.report.speculative:SECTION",
    "reasoning": "harness.report.reasoning:SECTION",
    "context_limit": "harness.report.context_limit:SECTION",
    "structured_output": "harness.report.structured_output:SECTION",
    "tool_calls": "harness.report.tool_calls:SECTION",
    "vision": "harness.report.vision:SECTION",
    "audio": "harness.report.audio:SECTION",
    "memory": "harness.report.memory:SECTION",
    "failures": "harness.report.failures:SECTION",
    "ledger": "harness.report.ledger:SECTION",
    "machine_state": "harness.report.machine_state:SECTION",
    "models": "harness.report.identities:SECTION",
}

REPORT_SECTIONS: Registry[Section] = Registry(
    "report section", BUILT_IN, group="mlx_harness.report_sections"
)


def _failed(name: str, exc: BaseException) -> Section:
    kind = "report section" if name in BUILT_IN else "report section plug-in"

    def build(_: RunRecord) -> object:
        raise RuntimeError(f"{kind} {name!r} could not be loaded: {exc}")

    return Section(f"plugin-{name}", name, build)


def registered_sections() -> tuple[Section, ...]:
    """The sections registered (built-in and plug-ins'), by key; a broken one is a section
    that says so."""
    found = []
    for name in REPORT_SECTIONS.names():
        try:
            section = REPORT_SECTIONS.get(name)
            if not isinstance(section, Section):
                raise TypeError(f"{type(section).__name__} is not a harness.api.Section")
        except Exception as exc:  # a plug-in's fault must not cost the report
            section = _failed(name, exc)
        found.append(section)
    return tuple(found)


def default_sections() -> tuple[Section, ...]:
    """The registered sections and "Other metrics" (what none of them claims), in report order
    (``order``; sections of the same order by key)."""
    registered = registered_sections()
    claims = tuple(c for s in registered for c in s.claims)
    return tuple(sorted((*registered, unclaimed.section(claims)), key=lambda s: s.order))
