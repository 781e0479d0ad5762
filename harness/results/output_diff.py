"""Where two runs' recorded outputs (greedy answers: deterministic, so any difference is a
change of the model, its files or the stack) first differ: one line for people, or None.

A scenario records its outputs as a list of strings under the ``outputs`` artifact, one per
prompt, in prompt order (``greedy_text``), or as the ``raw`` text of each entry of its
``prompts`` artifact (``tool_calls``: the model's whole answer to each prompt). Outputs are
untrusted text: the line quotes them with ``repr``, and every printer escapes it again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OUTPUTS = "outputs"
PROMPTS, RAW = "prompts", "raw"  # tool_calls: one entry per prompt, its answer under "raw"
QUOTED = 30  # characters of each side quoted from the first difference


def recorded_outputs(artifacts: Mapping[str, Any]) -> list[str] | None:
    """The ``outputs`` artifact when it is a list of strings, else the ``raw`` texts of the
    ``prompts`` artifact; None when neither is there."""
    outputs = artifacts.get(OUTPUTS)
    if isinstance(outputs, list) and all(isinstance(o, str) for o in outputs):
        return outputs
    prompts = artifacts.get(PROMPTS)
    if isinstance(prompts, list) and prompts:
        raws = [p.get(RAW) if isinstance(p, dict) else None for p in prompts]
        if all(isinstance(r, str) for r in raws):
            return [str(r) for r in raws]
    return None


def first_difference(before: Mapping[str, Any], after: Mapping[str, Any]) -> str | None:
    """``output 2 of 3 differs at character 17: 'Paris is the' -> 'Paris, the ca'``; None when
    the outputs are the same, or either run recorded none."""
    old, new = recorded_outputs(before), recorded_outputs(after)
    if old is None or new is None or old == new:
        return None
    if len(old) != len(new):
        return f"{len(old)} outputs -> {len(new)} outputs"
    for index, (a, b) in enumerate(zip(old, new, strict=True), start=1):
        if a == b:
            continue
        shorter = min(len(a), len(b))
        at = next((i for i in range(shorter) if a[i] != b[i]), shorter)
        return (
            f"output {index} of {len(old)} differs at character {at}: "
            f"{a[at : at + QUOTED]!r} -> {b[at : at + QUOTED]!r}"
        )
    return None
