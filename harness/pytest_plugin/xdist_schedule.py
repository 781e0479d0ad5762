"""The controller's scheduler under ``--dist loadgroup``: every case of a model is one unit of
work, so one worker loads the model once.

xdist's own ``loadgroup`` reads the group from a suffix its workers append to node ids
(``...::load@tiny``); with pytest 9.2 that suffix no longer takes (pytest-dev/pytest-xdist#1386),
and the groups would be dropped without a word. This scheduler asks the controller's plan
instead (node id -> model group) and falls back to xdist's rule for every other test.

Imported only when pytest-xdist runs (it imports xdist).
"""

from __future__ import annotations

from collections.abc import Mapping

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadGroupScheduling


class ModelScheduling(LoadGroupScheduling):
    """``loadgroup`` whose groups for the harness's cases come from ``groups`` (node id ->
    model group), which the controller fills when the first worker has collected."""

    def __init__(
        self, config: pytest.Config, log: Producer | None, groups: Mapping[str, str]
    ) -> None:
        super().__init__(config, log)
        self.groups = groups

    def _split_scope(self, nodeid: str) -> str:
        group = self.groups.get(nodeid)
        return f"mlx-harness model {group}" if group is not None else super()._split_scope(nodeid)
