"""The report's sections, in order. Adding one: a module with a ``build(run)`` function and a
``SECTION`` value (:class:`harness.report.sections.Section`), the partials
``templates/<key>.md.j2`` and ``templates/<key>.html.j2``, and one line here.
"""

from __future__ import annotations

from harness.report import (
    api_contracts,
    audio,
    charts,
    engines,
    failures,
    header,
    identities,
    ledger,
    matrix,
    memory,
    performance,
    prompt_cache,
    quality,
    serving,
    side_by_side,
    template_contracts,
    tool_calls,
    unclaimed,
    vision,
)
from harness.report.sections import Section


def default_sections() -> tuple[Section, ...]:
    """The built-in sections, in report order."""
    shown = (
        performance.SECTION,
        engines.SECTION,
        serving.SECTION,
        api_contracts.SECTION,
        template_contracts.SECTION,
        quality.SECTION,
        prompt_cache.SECTION,
        tool_calls.SECTION,
        vision.SECTION,
        audio.SECTION,
        memory.SECTION,
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
        identities.SECTION,
    )
