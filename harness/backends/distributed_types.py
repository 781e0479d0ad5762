"""What one rank of a distributed run writes (``rank-<r>.json``) and what its parent reads back:
the link measured before the run, the run's greedy tokens and timings per prompt, and the
rank's memory. Plain JSON, no mlx: the parent never imports mlx for it."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from enum import Enum
from pathlib import Path
from typing import Any


class Split(str, Enum):
    """How the model is spread over the group: one process (``none``), layers in stages
    (``pipeline``: ``model.model.pipeline(group)``), or every layer's matrices cut across the
    ranks (``tensor``: ``model.shard(group)``)."""

    NONE = "none"
    PIPELINE = "pipeline"
    TENSOR = "tensor"


class RankStatus(str, Enum):
    OK = "ok"
    NOT_APPLICABLE = "n.a."  # the model cannot do the split (reason says why)
    ERROR = "error"  # the rank's own code failed (reason: one line)


@dataclass(frozen=True)
class LinkFigure:
    """One timed collective: ``op`` (``all_sum`` or ``send_recv``), the buffer's bytes, the
    median seconds of one op and the bytes per second it moved (buffer bytes / seconds)."""

    op: str
    size_bytes: int
    seconds: float
    bytes_per_s: float


@dataclass(frozen=True)
class PromptRun:
    """One greedy run of one prompt: its tokens and when they came."""

    prompt: int  # index into the prompts
    measured: bool  # False: a warm-up
    tokens: tuple[int, ...]
    ttft_s: float
    total_s: float
    prompt_tokens: int

    @property
    def prefill_tps(self) -> float:
        return self.prompt_tokens / self.ttft_s if self.ttft_s > 0 else 0.0

    @property
    def decode_tps(self) -> float:
        later = len(self.tokens) - 1
        span = self.total_s - self.ttft_s
        return later / span if later > 0 and span > 0 else 0.0


@dataclass(frozen=True)
class RankResult:
    rank: int
    world_size: int
    split: Split
    status: RankStatus
    reason: str = ""
    backend: str = ""
    host: str = ""
    load_s: float = 0.0
    link: tuple[LinkFigure, ...] = ()
    runs: tuple[PromptRun, ...] = ()
    peak_memory_bytes: int = 0  # mx.get_peak_memory after the runs
    rss_bytes: int = 0  # the process's resident set high-water mark

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["split"] = self.split.value
        found["status"] = self.status.value
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankResult:
        return cls(
            rank=int(data["rank"]),
            world_size=int(data["world_size"]),
            split=Split(data["split"]),
            status=RankStatus(data["status"]),
            reason=str(data.get("reason", "")),
            backend=str(data.get("backend", "")),
            host=str(data.get("host", "")),
            load_s=float(data.get("load_s", 0.0)),
            link=tuple(LinkFigure(**f) for f in data.get("link", ())),
            runs=tuple(
                PromptRun(**{**r, "tokens": tuple(int(t) for t in r["tokens"])})
                for r in data.get("runs", ())
            ),
            peak_memory_bytes=int(data.get("peak_memory_bytes", 0)),
            rss_bytes=int(data.get("rss_bytes", 0)),
        )


def rank_file(out_dir: Path, rank: int) -> Path:
    return out_dir / f"rank-{rank}.json"


def write_rank(out_dir: Path, result: RankResult) -> None:
    path = rank_file(out_dir, result.rank)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(result.to_json()))
    tmp.replace(path)


def read_rank(out_dir: Path, rank: int) -> RankResult | None:
    """The rank's result; None when it wrote none (it died or hung first)."""
    path = rank_file(out_dir, rank)
    try:
        return RankResult.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, KeyError, TypeError):
        return None


@dataclass(frozen=True)
class RankJob:
    """What every rank is asked to do (``job.json`` beside the results)."""

    model_path: str
    split: Split
    prompts: tuple[tuple[int, ...], ...]
    max_tokens: int
    warmup: int
    repeats: int
    link_sizes_bytes: tuple[int, ...]
    link_iterations: int
    watch_pid: int  # the parent: a rank on its host exits when it is gone
    watch_host: str = ""  # the parent's host name (a rank elsewhere watches its launcher only)

    def to_json(self) -> dict[str, Any]:
        found = asdict(self)
        found["split"] = self.split.value
        return found

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RankJob:
        return cls(
            model_path=str(data["model_path"]),
            split=Split(data["split"]),
            prompts=tuple(tuple(int(t) for t in p) for p in data["prompts"]),
            max_tokens=int(data["max_tokens"]),
            warmup=int(data["warmup"]),
            repeats=int(data["repeats"]),
            link_sizes_bytes=tuple(int(s) for s in data["link_sizes_bytes"]),
            link_iterations=int(data["link_iterations"]),
            watch_pid=int(data["watch_pid"]),
            watch_host=str(data.get("watch_host", "")),
        )
