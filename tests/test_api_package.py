"""The plug-in face as a package: one module per kind of plug-in, every name re-exported by
``harness.api`` (so ``from harness.api import X`` keeps working), none in two modules."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest

import harness.api

KINDS = ["harness.api.backend", "harness.api.scenario", "harness.api.report"]


def test_the_package_exports_exactly_its_modules_names_each_once() -> None:
    names = Counter(n for kind in KINDS for n in importlib.import_module(kind).__all__)
    assert [n for n, count in names.items() if count > 1] == []
    assert set(harness.api.__all__) == set(names)


@pytest.mark.parametrize("kind", KINDS)
def test_each_name_is_the_same_object_from_the_package_and_its_module(kind: str) -> None:
    module = importlib.import_module(kind)
    assert sorted(module.__all__) == module.__all__
    for name in module.__all__:
        assert getattr(harness.api, name) is getattr(module, name), name


def test_the_old_import_paths_still_work() -> None:
    from harness.api import BaseScenario, Section
    from harness.report.sections import Section as InternalSection
    from harness.scenarios.base import BaseScenario as InternalBase

    assert BaseScenario is InternalBase and Section is InternalSection
