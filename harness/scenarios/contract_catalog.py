"""Every API contract check, in the order they run and the report lists them."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from harness.scenarios import (
    contract_checks_reasoning,
    contract_checks_sampling,
    contract_checks_server,
    contract_checks_text,
    contract_checks_tools,
)
from harness.scenarios.contract_verdicts import ContractCheck

CHECKS: Mapping[str, ContractCheck] = MappingProxyType(
    {
        check.name: check
        for module in (
            contract_checks_text,
            contract_checks_sampling,
            contract_checks_server,
            contract_checks_reasoning,
            contract_checks_tools,
        )
        for check in module.CHECKS
    }
)
CHECK_NAMES: tuple[str, ...] = tuple(CHECKS)
