"""Fixtures for the report tests; the run builders live in ``report_fixtures.py``."""

from __future__ import annotations

import pytest
from report_fixtures import realistic_run

from harness.core.types import RunRecord


@pytest.fixture
def demo_run() -> RunRecord:
    return realistic_run()
