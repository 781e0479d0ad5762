"""A stand-in rank for the launcher's tests (no mlx-lm: starts in a blink): it writes its pid,
then does what ``FAKE_RANK_MODE`` says: ``ok`` (every rank answers), ``die1`` (rank 1 exits
with code 7 before answering; the others wait), ``hang1`` (rank 1 sleeps; the others answer),
``hang`` (every rank sleeps). It exits when its launcher or the job's ``watch_pid`` is gone,
as the real rank does."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from harness.backends.distributed_rank import _die_with_parent, _watch
from harness.backends.distributed_types import (
    RankJob,
    RankResult,
    RankStatus,
    Split,
    write_rank,
)


def main() -> int:
    out_dir = Path(sys.argv[1])
    rank = int(os.environ["MLX_RANK"])
    _die_with_parent()  # as the real rank does
    job = RankJob.from_json(json.loads((out_dir / "job.json").read_text()))
    _watch(job.watch_pid)
    (out_dir / f"pid-{rank}").write_text(str(os.getpid()))
    mode = os.environ.get("FAKE_RANK_MODE", "ok")
    if rank == 1 and mode == "die1":
        # dies once rank 0 is up: on a busy machine rank 0 could start after the group was
        # killed, and the test could not show that a started rank was stopped
        while not (out_dir / "pid-0").exists():
            time.sleep(0.01)
        os._exit(7)
    if mode == "hang" or (rank == 1 and mode == "hang1"):
        time.sleep(600)
    if rank != 1 and mode == "die1":
        time.sleep(600)  # waits on the dead rank, as a collective would
    write_rank(out_dir, RankResult(rank, 2, Split.TENSOR, RankStatus.OK))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
