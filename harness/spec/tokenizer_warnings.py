"""Validate-time warnings for served models whose tokens cannot be counted by their tokenizer.

``http_throughput`` and ``serving`` count the tokens of each streamed chunk with the model's own
``tokenizer.json``; a ``url:`` model with no local source (``path:``, ``embedded:`` or a cached
``hub:`` id holding one) falls back to one token a chunk, which is wrong for any server that
sends several tokens in a chunk. One warning per such model that a token-timing scenario runs,
at the model's line, naming the fix. An uncached hub model is left to
:func:`harness.spec.checks.hub_warnings`.
"""

from __future__ import annotations

from pathlib import Path

from harness.backends.base import BackendCapability
from harness.backends.http import tokenizer_file
from harness.core.types import Unit
from harness.scenarios import SCENARIOS
from harness.spec.errors import SuiteError
from harness.spec.fields import names_model
from harness.spec.loaded import LoadedSuite, SourcedModel
from harness.spec.resolve import ResolveError, resolve_model

FIX = (
    "give the model a local source (path:, embedded: or hub:) with tokenizer.json beside url: "
    "so tokens are counted by its tokenizer"
)


def counts_tokens(scenario: str) -> bool:
    """Whether ``scenario`` times tokens over HTTP (it then counts them per streamed chunk)."""
    if scenario not in SCENARIOS:
        return False
    found = SCENARIOS.get(scenario)
    return BackendCapability.HTTP in found.backend_needs and any(
        spec.unit is Unit.TOKENS_PER_SECOND for spec in found.metrics
    )


def missing_tokenizer(sourced: SourcedModel, hub_cache: Path | None) -> str | None:
    """Why the model has no local ``tokenizer.json`` (None: it has one, or its source does not
    resolve, which is reported elsewhere: a bad path is an error, an uncached hub id a
    warning)."""
    entry = sourced.entry
    if not (entry.path or entry.embedded or entry.hub):
        return "has no local source"
    try:
        folder = resolve_model(entry, sourced.path.parent, hub_cache=hub_cache)
    except ResolveError:
        return None
    return None if tokenizer_file(folder) is not None else f"has no tokenizer.json in {folder}"


def tokenizer_warnings(
    loaded: LoadedSuite, hub_cache: Path | None = None
) -> tuple[SuiteError, ...]:
    """One warning per ``url:`` model, timed by a token-counting scenario, that has no local
    ``tokenizer.json``."""
    timed = [e for e in loaded.suite.scenarios if counts_tokens(e.scenario)]
    warnings = []
    for sourced in loaded.models:
        entry = sourced.entry
        if entry.url is None or not any(names_model(e.models, entry.key) for e in timed):
            continue
        why = missing_tokenizer(sourced, hub_cache)
        if why is None:
            continue
        warnings.append(
            SuiteError(
                str(sourced.path),
                sourced.line,
                sourced.column,
                f"warning: url: model '{entry.key}' {why}: its tokens will be counted one a "
                "streamed chunk, wrong whenever the server sends several in one",
                FIX,
            )
        )
    return tuple(warnings)
