"""The report's sections, in order. Adding one: a module with a ``build(run)`` function and a
``SECTION`` value (:class:`harness.report.sections.Section`), the partials
``templates/<key>.md.j2`` and ``templates/<key>.html.j2``, and one line here. A plug-in's
section (entry-point group ``mlx_harness.report_sections``, a ``Section`` with ``templates``
naming its partials' folder) comes after the built-in ones that show metrics, before "Other
metrics"; one that cannot be loaded is shown as its one-line error, never a lost report.
"""

from __future__ import annotations

from harness.core.registry import Registry
from harness.core.types import RunRecord
from harness.report import (
    api_contracts,
    audio,
    batch_generate,
    cancellation,
    charts,
    context_limit,
    distributed,
    engines,
    failures,
    header,
    identities,
    kv_sweep,
    ledger,
    machine_state,
    matrix,
    memory,
    performance,
    prompt_cache,
    quality,
    quant_sweep,
    reasoning,
    saturation,
    serving,
    session,
    side_by_side,
    soak,
    speculative,
    stall,
    structured_output,
    template_contracts,
    tool_calls,
    trace_replay,
    unclaimed,
    vision,
)
from harness.report.sections import Section

REPORT_SECTIONS: Registry[Section] = Registry(
    "report section", {}, group="mlx_harness.report_sections"
)


def _failed_plugin(name: str, exc: BaseException) -> Section:
    def build(_: RunRecord) -> object:
        raise RuntimeError(f"report section plug-in {name!r} could not be loaded: {exc}")

    return Section(f"plugin-{name}", name, build)


def plugin_sections() -> tuple[Section, ...]:
    """The sections plug-ins register, by name; a broken one is a section that says so."""
    found = []
    for name in REPORT_SECTIONS.names():
        try:
            section = REPORT_SECTIONS.get(name)
            if not isinstance(section, Section):
                raise TypeError(f"{type(section).__name__} is not a harness.api.Section")
        except Exception as exc:  # a plug-in's fault must not cost the report
            section = _failed_plugin(name, exc)
        found.append(section)
    return tuple(found)


def default_sections() -> tuple[Section, ...]:
    """The built-in sections and the plug-ins', in report order."""
    shown = (
        performance.SECTION,
        engines.SECTION,
        serving.SECTION,
        trace_replay.SECTION,
        saturation.SECTION,
        stall.SECTION,
        cancellation.SECTION,
        soak.SECTION,
        batch_generate.SECTION,
        api_contracts.SECTION,
        template_contracts.SECTION,
        quality.SECTION,
        prompt_cache.SECTION,
        kv_sweep.SECTION,
        quant_sweep.SECTION,
        distributed.SECTION,
        session.SECTION,
        speculative.SECTION,
        reasoning.SECTION,
        context_limit.SECTION,
        structured_output.SECTION,
        tool_calls.SECTION,
        vision.SECTION,
        audio.SECTION,
        memory.SECTION,
        *plugin_sections(),
    )
    claims = tuple(c for s in shown for c in s.claims)
    return (
        header.SECTION,
        matrix.SECTION,
        charts.SECTION,
        side_by_side.SECTION,
        *shown,
        unclaimed.section(claims),
        failures.SECTION,
        ledger.SECTION,
        machine_state.SECTION,
        identities.SECTION,
    )
