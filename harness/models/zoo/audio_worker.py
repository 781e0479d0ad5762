"""The process that tries audio families: ``python -m harness.models.zoo.audio_worker OUT NAME...``
(the events of :func:`~harness.models.zoo.audio_trial.try_audio_family`, written as
:mod:`.family_worker` says). Offline: a family that would fetch a codec or tokenizer from the
hub fails with that reason instead."""

from __future__ import annotations

import os
import sys

from harness.models.zoo import family_worker
from harness.models.zoo.audio_trial import try_audio_family


def main(argv: list[str]) -> int:
    os.environ["HF_HUB_OFFLINE"] = "1"
    return family_worker.main(argv, try_audio_family)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
