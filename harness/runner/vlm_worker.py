"""The process that tries VLM families: ``python -m harness.runner.vlm_worker OUT NAME...``
(the events of :func:`~harness.runner.vlm_trial.try_vision_family`, written as
:mod:`harness.models.zoo.family_worker` says)."""

from __future__ import annotations

import os
import sys

from harness.models.zoo import family_worker
from harness.runner.vlm_trial import try_vision_family


def main(argv: list[str]) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return family_worker.main(argv, try_vision_family)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
