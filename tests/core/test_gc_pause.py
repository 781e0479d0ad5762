"""The collector is paused inside, and left as it was after: on or off, nested, raising."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from harness.core.gc_pause import collector_paused


@pytest.fixture
def collector() -> Iterator[None]:
    was_on = gc.isenabled()
    yield
    if was_on:
        gc.enable()
    else:
        gc.disable()


@pytest.mark.parametrize("on", [True, False])
def test_paused_inside_and_as_it_was_after(on: bool, collector: None) -> None:
    gc.enable() if on else gc.disable()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner pause does not end the outer one
    assert gc.isenabled() is on


def test_on_again_after_an_exception(collector: None) -> None:
    gc.enable()
    with pytest.raises(ValueError, match="boom"), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()
