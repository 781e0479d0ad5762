"""llama-bench's JSON (``llama-bench -o json``, or ``-o jsonl``) as run records, so a llama.cpp
history sits beside ours in ``report``, ``compare``, ``history`` and ``site``.

One run per (file, llama.cpp build): backend ``llama.cpp``, package ``llama.cpp`` at the build
(``b<number> (<commit>)``, or the commit alone when the number is 0), started at the first
test's ``test_time``. One case per test, scenario ``throughput``, suite ``llama-bench``:
``pp<N>`` tests give ``throughput.prefill_tps``, ``tg<N>`` tests ``throughput.decode_tps`` (the
names our throughput cases use), ``pp<N>+tg<M>`` tests ``llama_bench.pp_tg_tps``; the samples
are llama-bench's ``samples_ts`` (its ``avg_ts`` alone when a file has no samples). The case
id names the test and every llama-bench setting that differs between the file's tests of one
model (``llama-bench::SmolLM2-135M-Instruct.Q4_1::throughput[test=tg16-n_threads=2]``), so a
thread or batch sweep keeps its cases apart. The machine is what llama-bench says (its CPU and
GPU), unless the caller gives one of our runs' machine (the same box), so the two sit on one
page of the site.

Everything read is untrusted text: model and file names are kept as data and shown only
through the escaper. A file that is not llama-bench's is one line naming it and the fix.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from harness.core.types import (
    CaseResult,
    Machine,
    Metric,
    ModelIdentity,
    RunRecord,
    Status,
    SuiteInfo,
    Unit,
)
from harness.results.llama_bench import DECODE_TPS, PREFILL_TPS, THROUGHPUT
from harness.results.store import SCHEMA_VERSION

SUITE = "llama-bench"
BACKEND = "llama.cpp"
PP_TG_TPS = "llama_bench.pp_tg_tps"
REQUIRED = ("build_commit", "model_filename", "n_prompt", "n_gen", "test_time", "avg_ts")
FIX = "pass the file `llama-bench -o json` (or -o jsonl) wrote"
# llama-bench settings a case id names when they differ between a file's tests of one model
SETTINGS = (
    "backends",
    "n_gpu_layers",
    "n_threads",
    "n_batch",
    "n_ubatch",
    "type_k",
    "type_v",
    "flash_attn",
    "split_mode",
    "no_kv_offload",
    "cpu_mask",
    "poll",
    "n_cpu_moe",
    "embeddings",
    "tensor_split",
    "tensor_buft_overrides",
    "load_mode",
)


class LlamaBenchImportError(Exception):
    """A file that is not llama-bench's output; ``str()`` is one line naming it and the fix."""


@dataclass(frozen=True)
class Test:
    """One llama-bench entry, checked."""

    index: int  # 1-based, in the file
    raw: Mapping[str, Any]
    n_prompt: int
    n_gen: int
    n_depth: int
    samples_ts: tuple[float, ...]

    @property
    def name(self) -> str:
        if self.n_gen == 0:
            base = f"pp{self.n_prompt}"
        elif self.n_prompt == 0:
            base = f"tg{self.n_gen}"
        else:
            base = f"pp{self.n_prompt}+tg{self.n_gen}"
        return f"{base}@d{self.n_depth}" if self.n_depth else base

    @property
    def metric_name(self) -> str:
        if self.n_gen == 0:
            return PREFILL_TPS
        return DECODE_TPS if self.n_prompt == 0 else PP_TG_TPS

    @property
    def model_key(self) -> str:
        name = re.split(r"[\\/]", str(self.raw["model_filename"]))[-1]
        return name.removesuffix(".gguf") or "model"


def read_tests(path: Path) -> list[Test]:
    """The file's entries, each checked; :class:`LlamaBenchImportError` when it is not one."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise LlamaBenchImportError(f"{path}: cannot read it ({_one_line(exc)}); {FIX}") from None
    entries = _entries(path, text)
    if not entries:
        raise LlamaBenchImportError(f"{path}: holds no llama-bench test; {FIX}")
    return [_test(path, i, entry) for i, entry in enumerate(entries, 1)]


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _entries(path: Path, text: str) -> list[Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as whole:
        try:
            data = [json.loads(line) for line in text.splitlines() if line.strip()]
        except json.JSONDecodeError:
            raise LlamaBenchImportError(
                f"{path}: not JSON or JSON Lines ({_one_line(whole)}); {FIX}"
            ) from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise LlamaBenchImportError(f"{path}: a JSON {type(data).__name__}, not a list; {FIX}")
    return data


def _test(path: Path, index: int, entry: Any) -> Test:
    where = f"{path}: entry {index}"
    if not isinstance(entry, dict):
        raise LlamaBenchImportError(f"{where} is not an object; {FIX}")
    if "op_name" in entry or "backend_name" in entry:
        raise LlamaBenchImportError(
            f"{path}: test-backend-ops output, not llama-bench's (it times single ops, not a "
            f"model); {FIX}"
        )
    missing = [f for f in REQUIRED if f not in entry]
    if missing:
        raise LlamaBenchImportError(
            f"{where} lacks {', '.join(missing)}; {FIX} (llama-bench b3000 or newer)"
        )
    counts = {f: entry.get(f, 0) for f in ("n_prompt", "n_gen", "n_depth")}
    if any(not isinstance(v, int) or isinstance(v, bool) or v < 0 for v in counts.values()):
        raise LlamaBenchImportError(f"{where}: n_prompt, n_gen and n_depth must be counts; {FIX}")
    if counts["n_prompt"] == counts["n_gen"] == 0:
        raise LlamaBenchImportError(f"{where}: a test of no tokens (n_prompt and n_gen 0); {FIX}")
    samples = entry.get("samples_ts") or [entry["avg_ts"]]
    if not isinstance(samples, list) or not all(_rate(v) for v in samples):
        raise LlamaBenchImportError(f"{where}: samples_ts/avg_ts are not tokens/s; {FIX}")
    return Test(
        index,
        entry,
        counts["n_prompt"],
        counts["n_gen"],
        counts["n_depth"],
        tuple(float(v) for v in samples),
    )


def _rate(value: Any) -> bool:
    return (
        isinstance(value, int | float)
        and not isinstance(value, bool)
        and math.isfinite(value)
        and value > 0
    )


def _time(text: Any) -> str:
    """An ISO time with offset from llama-bench's ``2026-11-29T06:03:21Z``."""
    try:
        moment = datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return ""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC).isoformat()


def version(entry: Mapping[str, Any]) -> str:
    """The build as a version: ``b5000 (1a2b3c4d)``, or the commit alone (number 0)."""
    commit = str(entry.get("build_commit") or "unknown")
    number = entry.get("build_number")
    return f"b{number} ({commit})" if isinstance(number, int) and number > 0 else commit


def _machine(entry: Mapping[str, Any]) -> Machine:
    gpu = str(entry.get("gpu_info") or "")
    backends = str(entry.get("backends") or "")
    return Machine(
        os="unknown",
        os_release="",
        arch="",
        cpu=str(entry.get("cpu_info") or "unknown"),
        cores=0,
        memory_bytes=0,
        python="",
        mlx_device=f"none (llama.cpp {backends}{f', {gpu}' if gpu else ''})".strip(),
    )


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", text).strip("-.")[:40] or "build"


def _point(test: Test, varying: Sequence[str], repeat: int) -> dict[str, Any]:
    point: dict[str, Any] = {"test": test.name}
    for name in varying:
        point[name] = test.raw.get(name)
    if repeat > 1:
        point["repeat"] = repeat
    return point


def _varying(tests: Sequence[Test]) -> list[str]:
    return [s for s in SETTINGS if len({json.dumps(t.raw.get(s)) for t in tests}) > 1]


def case_name(point: Mapping[str, Any]) -> str:
    """``throughput[test=pp64-n_threads=2]``: as a suite's planned case names its point."""
    return f"{THROUGHPUT}[{'-'.join(f'{k}={v}' for k, v in point.items())}]"


def _case(test: Test, point: Mapping[str, Any]) -> CaseResult:
    key = test.model_key
    raw = test.raw
    params = {
        "prompt_tokens": test.n_prompt,
        "gen_tokens": test.n_gen,
        "depth": test.n_depth,
        **{s: raw[s] for s in SETTINGS if s in raw},
    }
    return CaseResult(
        case_id=f"{SUITE}::{key}::{case_name(point)}",
        suite=SUITE,
        model=key,
        scenario=THROUGHPUT,
        status=Status.PASSED,
        params=params,
        point=point,
        metrics=(Metric(test.metric_name, Unit.TOKENS_PER_SECOND, test.samples_ts),),
        started_at=_time(raw.get("test_time")),
        artifacts={
            "llama_bench": {
                k: raw.get(k)
                for k in ("model_type", "avg_ns", "stddev_ns", "avg_ts", "stddev_ts", "samples_ns")
            }
        },
    )


def records_from(
    path: Path, tests: Sequence[Test], machine: Machine | None = None
) -> list[RunRecord]:
    """One run record per llama.cpp build in the file's tests."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    builds: dict[str, list[Test]] = {}
    for test in tests:
        builds.setdefault(str(test.raw.get("build_commit")), []).append(test)
    records = []
    for build, group in builds.items():
        times = sorted(t for t in (_time(x.raw.get("test_time")) for x in group) if t)
        started = times[0] if times else datetime.now(UTC).isoformat()
        stamp = datetime.fromisoformat(started).strftime("%Y%m%d-%H%M%S")
        results: list[CaseResult] = []
        seen: dict[str, int] = {}
        by_model: dict[str, list[Test]] = {}
        for test in group:
            by_model.setdefault(test.model_key, []).append(test)
        for model_tests in by_model.values():
            varying = _varying(model_tests)
            for test in model_tests:
                first = _point(test, varying, 1)
                ident = f"{test.model_key}|{json.dumps(first, sort_keys=True)}"
                seen[ident] = seen.get(ident, 0) + 1
                results.append(_case(test, _point(test, varying, seen[ident])))
        models = {
            key: ModelIdentity(
                key=key,
                path=str(ts[0].raw.get("model_filename")),
                backend=BACKEND,
                weights_bytes=_count(ts[0].raw.get("model_size")),
            )
            for key, ts in by_model.items()
        }
        records.append(
            RunRecord(
                schema_version=SCHEMA_VERSION,
                run_id=f"{stamp}-llama-bench-{_safe(build)}",
                started_at=started,
                finished_at=times[-1] if times else started,
                machine=machine or _machine(group[0].raw),
                packages={BACKEND: version(group[0].raw)},
                git_sha=None,
                suites=(SuiteInfo(name=SUITE, path=str(path), sha256=digest),),
                models=models,
                results=tuple(results),
            )
        )
    return records


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None
