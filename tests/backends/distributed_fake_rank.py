"""A stand-in rank for the launcher's tests (no mlx-lm: starts in a blink): it writes its pid,
then does what ``FAKE_RANK_MODE`` says: ``ok`` (every rank answers), ``die1`` (rank 1 exits
with code 7 before answering; the others wait), ``hang1`` (rank 1 sleeps; the others answer)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from harness.backends.distributed_types import RankResult, RankStatus, Split, write_rank


def main() -> int:
    out_dir = Path(sys.argv[1])
    rank = int(os.environ["MLX_RANK"])
    (out_dir / f"pid-{rank}").write_text(str(os.getpid()))
    json.loads((out_dir / "job.json").read_text())
    mode = os.environ.get("FAKE_RANK_MODE", "ok")
    if rank == 1 and mode == "die1":
        os._exit(7)
    if rank == 1 and mode == "hang1":
        time.sleep(600)
    if rank != 1 and mode == "die1":
        time.sleep(600)  # waits on the dead rank, as a collective would
    write_rank(out_dir, RankResult(rank, 2, Split.TENSOR, RankStatus.OK))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
