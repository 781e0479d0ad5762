"""The process that tries architectures: ``python -m harness.models.zoo.arch_worker OUT NAME...``
(the events of :func:`~harness.models.zoo.arch_trial.try_architecture`, written as
:mod:`.family_worker` says)."""

from __future__ import annotations

import sys

from harness.models.zoo import family_worker
from harness.models.zoo.arch_trial import try_architecture


def main(argv: list[str]) -> int:
    return family_worker.main(argv, try_architecture)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
