"""Record migrations: a case line written by an earlier version of the run record, brought to
today's format as the record loads, the way asv brings its results files (``asv/results.py``:
``api_version``, ``update_to_2``).

Every record's ``run_start`` line carries the format it was written in
(``schema_version``, :data:`RECORD_VERSION` today). A case line of a record at version ``v``
goes through ``update_to_{v+1}``, ... ``update_to_{RECORD_VERSION}`` in turn, each taking and
returning the case's result as plain JSON, before it is checked against the shared types; a
record newer than :data:`RECORD_VERSION` is refused with one line (``upgrade mlx-harness``).
Readers past the loader (report sections, comparisons, history) see today's format only: no
report section knows an old metric name or an old artifact shape.

Each ``update_to_N`` returns a new value, leaving what it was given as it was (what it does not
change it shares), and is idempotent on a line already at version N (a run written at version
1 and resumed by a later harness holds lines of both formats under its version-1 head).

A step renames only what is the same quantity under a new name. A quantity that was measured
differently keeps a name of its own that says what it was (never the new quantity's name), so
no comparison sets the two side by side.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from harness.results.codec import to_json
from harness.results.legacy_checks import checks_from_artifact
from harness.scenarios import throughput

RECORD_VERSION = 2

# The roofline's names before its ceiling was the hardware's (bandwidth format 2): their ceiling
# was MLX's own kernel speed, median of 7, a different quantity from today's hardware ceiling.
# They keep names of their own (throughput.KERNEL_ROOFLINE), never today's.
KERNEL_ROOFLINE: Mapping[str, str] = MappingProxyType(
    {
        "throughput.decode_ceiling_tps": throughput.KERNEL_CEILING.name,
        "throughput.decode_share": throughput.KERNEL_SHARE.name,
        "throughput.prefill_ceiling_tps": throughput.PREFILL_KERNEL_CEILING.name,
        "throughput.prefill_share": throughput.PREFILL_KERNEL_SHARE.name,
    }
)


def update_to_2(result: dict[str, Any]) -> dict[str, Any]:
    """Version 1 -> 2.

    - The roofline's metrics of before the hardware ceiling get names that say what they
      measured (:data:`KERNEL_ROOFLINE`).
    - A case without ``checks`` (from before each named check had its verdict) gets them from
      its ``checks`` artifact (:func:`harness.results.legacy_checks.checks_from_artifact`).
    """
    result = dict(result)
    metrics = result.get("metrics")
    if isinstance(metrics, list):
        result["metrics"] = [_kernel_named(m) for m in metrics]
    artifacts = result.get("artifacts")
    if not result.get("checks") and isinstance(artifacts, Mapping):
        found = checks_from_artifact(artifacts)
        if found:
            result["checks"] = to_json(found)
    return result


def _kernel_named(metric: Any) -> Any:
    if isinstance(metric, dict) and metric.get("name") in KERNEL_ROOFLINE:
        return {**metric, "name": KERNEL_ROOFLINE[metric["name"]]}
    return metric


# update_to_N, by N: each takes a case's result at version N-1 and returns it at version N
UPDATES: Mapping[int, Callable[[dict[str, Any]], dict[str, Any]]] = MappingProxyType(
    {2: update_to_2}
)


def newer_than_known(version: int) -> str | None:
    """The one line for a record this harness cannot read, or None when it can."""
    if version <= RECORD_VERSION:
        return None
    return (
        f"schema_version {version} is newer than this harness reads ({RECORD_VERSION}); "
        "upgrade mlx-harness"
    )


def migrated(result: Mapping[str, Any], version: int) -> dict[str, Any]:
    """``result`` (a case's result as JSON, from a record at ``version``) at
    :data:`RECORD_VERSION`; ``result`` itself is left as it was."""
    data = dict(result)
    for target in range(version + 1, RECORD_VERSION + 1):
        data = UPDATES[target](data)
    return data


def migrated_event(event: Mapping[str, Any], version: int) -> Mapping[str, Any]:
    """A ``case`` event (its line's JSON) at :data:`RECORD_VERSION`; ``event`` itself when
    already there."""
    result = event.get("result")
    if version >= RECORD_VERSION or not isinstance(result, Mapping):
        return event
    return {**event, "result": migrated(result, version)}
