"""Every API contract check, in the order they run and the report lists them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.scenarios.api_contracts import (
    checks_continuation,
    checks_logprobs,
    checks_message,
    checks_reasoning,
    checks_sampling,
    checks_server,
    checks_surfaces,
    checks_text,
    checks_tools,
)
from harness.scenarios.api_contracts.verdicts import ContractCheck

CHECKS: Mapping[str, ContractCheck] = MappingProxyType(
    {
        check.name: check
        for module in (
            checks_text,
            checks_sampling,
            # named only (mlx-lm 0.30.4 does not survive it: an entry of its own); before usage,
            # which reads counts only, so a server that leaves a batch's tokens to the next
            # request fails concurrent, not the check after this batch
            checks_logprobs,
            checks_server,
            checks_reasoning,
            checks_tools,
            checks_message,  # after the two: it judges their non-streamed answers
            checks_surfaces,
            checks_continuation,  # last: a server may not survive it (mlx-lm#1215)
        )
        for check in module.CHECKS
    }
)
CHECK_NAMES: tuple[str, ...] = tuple(CHECKS)
# what runs when a suite names no checks: all but those a server may not survive
DEFAULT_CHECKS: tuple[str, ...] = tuple(n for n in CHECK_NAMES if not CHECKS[n].named_only)
