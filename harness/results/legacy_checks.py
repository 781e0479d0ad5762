"""A case's checks from its ``checks`` artifact: how records written before
``CaseResult.checks`` existed get their per-check verdicts.

``api_contracts`` and ``template_contracts`` have always recorded their checks as the artifact
``checks``, a list of ``{name, verdict, reason | outcome, ...}``; the record migration to
version 2 (:func:`harness.results.migrations.update_to_2`) gives a case line without
``checks`` these, so an older record compares check by check with a new one. Entries without
a name, or with a verdict this harness does not know, are left out (never guessed).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harness.core.check_types import CheckStatus, CheckVerdict

ARTIFACT = "checks"
# the verdict words the scenarios wrote, as CheckStatus: template_contracts wrote "n/a"
WORDS: Mapping[str, CheckStatus] = {
    **{status.value: status for status in CheckStatus},
    "n/a": CheckStatus.NOT_APPLICABLE,
}


def checks_from_artifact(artifacts: Mapping[str, Any]) -> tuple[CheckVerdict, ...]:
    """The typed verdicts of the artifact's entries, in its order; a name given twice keeps
    its first entry."""
    entries = artifacts.get(ARTIFACT)
    found: dict[str, CheckVerdict] = {}
    for entry in entries if isinstance(entries, list) else ():
        if not isinstance(entry, Mapping):
            continue
        name, verdict = entry.get("name"), entry.get("verdict")
        status = WORDS.get(verdict) if isinstance(verdict, str) else None
        if not isinstance(name, str) or not name or status is None or name in found:
            continue
        found[name] = CheckVerdict(name, status, _reason(entry))
    return tuple(found.values())


def _reason(entry: Mapping[str, Any]) -> str:
    """api_contracts' ``reason``, or template_contracts' ``outcome`` word (its evidence is
    template output, kept in the artifact), on one line."""
    for key in ("reason", "outcome"):
        text = entry.get(key)
        if isinstance(text, str):
            return " ".join(text.split())
    return ""
