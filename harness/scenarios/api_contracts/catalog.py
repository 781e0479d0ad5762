"""Every API contract check, in the order they run and the report lists them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.scenarios.api_contracts import (
    checks_reasoning,
    checks_sampling,
    checks_server,
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
            checks_server,
            checks_reasoning,
            checks_tools,
        )
        for check in module.CHECKS
    }
)
CHECK_NAMES: tuple[str, ...] = tuple(CHECKS)
