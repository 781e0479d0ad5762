"""The cyclic garbage collector paused over a pass that makes many objects and few cycles.

Loading two nightly runs, comparing them and rendering the comparison make millions of small
objects (samples, deltas, table cells) that live to the end: CPython's collector, triggered
by every 700 new ones, walks the whole growing heap again and again, some 30% of a 10,000-case
``compare``. Paused, nothing is lost: reference counting still frees what is not in a cycle,
and the collector runs as before once the pass is over.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection inside; afterwards the collector is as it was (on, or off)."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()
