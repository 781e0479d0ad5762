"""The messages between the supervisor (:mod:`harness.runner.client`) and its worker
(:mod:`harness.runner.worker`), as typed values with their wire form.

The wire is one JSON object per line, each with an ``"op"`` naming its kind: requests go to the
worker's stdin, replies come back on its original stdout. Both sides build and read only these
classes; ``to_wire()`` gives the JSON-able dict of a message, :func:`request_from_wire` and
:func:`reply_from_wire` read one back, and raise :class:`MessageError` (one line: what is wrong)
on anything that is not a message of a known kind.

Requests: :class:`LoadRequest` (``load``), :class:`RunRequest` (``run``), :class:`ExitRequest`
(``exit``). Replies: :class:`LoadedReply` (``loaded``), :class:`ResultReply` (``result``),
:class:`ErrorReply` (``error``), :class:`CrashReply` (``crash``), and, any number of them before
a ``run`` request's result, :class:`~harness.runner.repeat_progress.RepeatProgress`
(``progress``).

Frozen dataclasses, not pydantic models: both ends are this harness at the same version, in two
processes it starts itself; pydantic stays at the suite boundary (the user's input), and what
these messages carry that is worth a schema (metrics, check verdicts) is read by the run
record's own decoders (:mod:`harness.results.codec`), so a result reads as the record would.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from harness.backends.base import LoadInfo
from harness.backends.mlx_runtime import MemorySnapshot
from harness.core.check_types import CheckVerdict
from harness.core.types import AutoRepeats, Metric, ServerRef
from harness.results.codec import checks_from_json, metric_from_json, to_json
from harness.runner.repeat_progress import RepeatProgress


class MessageError(ValueError):
    """Wire data that is not a message of a known kind: what is wrong, in one line."""


# -- reading the wire: each check names the message's kind and the field ------------------------


def _field(raw: Mapping[str, Any], op: str, key: str) -> Any:
    if key not in raw:
        raise MessageError(f"'{op}' message has no {key!r}")
    return raw[key]


def _text(raw: Mapping[str, Any], op: str, key: str, *, optional: bool = False) -> Any:
    value = raw.get(key) if optional else _field(raw, op, key)
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise MessageError(f"'{op}' message: {key!r} is not text: {value!r:.60}")
    return value


def _count(raw: Mapping[str, Any], op: str, key: str) -> int:
    value = _field(raw, op, key)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise MessageError(f"'{op}' message: {key!r} is not a count >= 0: {value!r:.60}")
    return value


def _seconds(raw: Mapping[str, Any], op: str, key: str, *, optional: bool = False) -> Any:
    value = raw.get(key) if optional else _field(raw, op, key)
    if value is None and optional:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise MessageError(f"'{op}' message: {key!r} is not a number of seconds: {value!r:.60}")
    return float(value)


def _object(raw: Mapping[str, Any], op: str, key: str, *, optional: bool = False) -> Any:
    value = raw.get(key) if optional else _field(raw, op, key)
    if value is None and optional:
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        raise MessageError(f"'{op}' message: {key!r} is not an object: {value!r:.60}")
    return value


def _texts(raw: Mapping[str, Any], op: str, key: str) -> tuple[str, ...]:
    value = raw.get(key) or []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise MessageError(f"'{op}' message: {key!r} is not a list of text: {value!r:.60}")
    return tuple(value)


def _built(op: str, key: str, kind: type[Any], fields: Mapping[str, Any]) -> Any:
    """``kind(**fields)``, or MessageError naming what does not fit."""
    try:
        return kind(**fields)
    except (TypeError, ValueError) as exc:
        raise MessageError(f"'{op}' message: {key!r} does not fit: {exc}") from None


# -- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadRequest:
    """Load the model at ``path`` with backend ``backend`` (a served model: with ``server``, its
    server's log under ``log_dir``)."""

    OP: ClassVar[str] = "load"
    backend: str
    path: str | None
    server: ServerRef | None = None
    log_dir: str | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "backend": self.backend, "path": self.path}
        if self.server is not None:
            wire["server"] = to_json(self.server)
        if self.log_dir is not None:
            wire["log_dir"] = self.log_dir
        return wire

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> LoadRequest:
        server = _object(raw, cls.OP, "server", optional=True)
        if server is not None:
            fields = dict(server)
            fields["args"] = tuple(fields.get("args", ()))
            fields["env"] = tuple(tuple(pair) for pair in fields.get("env", ()))
            server = _built(cls.OP, "server", ServerRef, fields)
        return cls(
            _text(raw, cls.OP, "backend"),
            _text(raw, cls.OP, "path", optional=True),
            server,
            _text(raw, cls.OP, "log_dir", optional=True),
        )


@dataclass(frozen=True)
class RunRequest:
    """Run one case: ``warmup`` + ``repeats`` runs of ``scenario`` with ``params`` (with
    ``auto``, until its median is known well, :mod:`harness.runner.repeat_loop`)."""

    OP: ClassVar[str] = "run"
    scenario: str
    params: Mapping[str, Any]
    repeats: int
    warmup: int
    timeout_s: float | None = None  # the case's limit: the scenario cuts its requests before
    cooldown_s: float = 0.0  # machine-state guard: before the case, in the worker
    wait_for_quiet_s: float = 0.0
    auto: AutoRepeats | None = None

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "op": self.OP,
            "scenario": self.scenario,
            "params": to_json(self.params),
            "repeats": self.repeats,
            "warmup": self.warmup,
            "timeout_s": self.timeout_s,
            "cooldown_s": self.cooldown_s,
            "wait_for_quiet_s": self.wait_for_quiet_s,
        }
        if self.auto is not None:
            wire["auto"] = dataclasses.asdict(self.auto)
        return wire

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> RunRequest:
        auto = _object(raw, cls.OP, "auto", optional=True)
        return cls(
            _text(raw, cls.OP, "scenario"),
            _object(raw, cls.OP, "params"),
            _count(raw, cls.OP, "repeats"),
            _count(raw, cls.OP, "warmup"),
            _seconds(raw, cls.OP, "timeout_s", optional=True),
            _seconds(raw, cls.OP, "cooldown_s", optional=True) or 0.0,
            _seconds(raw, cls.OP, "wait_for_quiet_s", optional=True) or 0.0,
            None if auto is None else _built(cls.OP, "auto", AutoRepeats, auto),
        )


@dataclass(frozen=True)
class ExitRequest:
    """Close the model and end the worker."""

    OP: ClassVar[str] = "exit"

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP}

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> ExitRequest:
        return cls()


Request = LoadRequest | RunRequest | ExitRequest

# -- replies -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedReply:
    """The model is loaded: what the backend said of it, the BLAS mapped, the worker's pid."""

    OP: ClassVar[str] = "loaded"
    info: LoadInfo
    blas: str | None
    pid: int

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "info": to_json(self.info), "blas": self.blas, "pid": self.pid}

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> LoadedReply:
        info = dict(_object(raw, cls.OP, "info"))
        info["details"] = info.get("details") or {}
        return cls(
            _built(cls.OP, "info", LoadInfo, info),
            _text(raw, cls.OP, "blas", optional=True),
            _count(raw, cls.OP, "pid"),
        )


@dataclass(frozen=True)
class ResultReply:
    """What one ``run`` request measured (:class:`harness.scenarios.base.ScenarioOutput`, with
    the worker's artifacts: repeats, timing, machine state) and the memory it took."""

    OP: ClassVar[str] = "result"
    metrics: tuple[Metric, ...]
    artifacts: Mapping[str, Any] = field(default_factory=dict)
    memory: MemorySnapshot | None = None
    elapsed_s: float = 0.0
    version: int = 1
    failures: tuple[str, ...] = ()
    skip_reason: str | None = None
    timed_out: str | None = None
    checks: tuple[CheckVerdict, ...] = ()

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP}
        wire.update(to_json({f.name: getattr(self, f.name) for f in dataclasses.fields(self)}))
        return wire

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> ResultReply:
        metrics = _field(raw, cls.OP, "metrics")
        if not isinstance(metrics, list):
            raise MessageError(f"'result' message: 'metrics' is not a list: {metrics!r:.60}")
        memory = _object(raw, cls.OP, "memory", optional=True)
        version = raw.get("version", 1)
        if not isinstance(version, int) or isinstance(version, bool):
            raise MessageError(f"'result' message: 'version' is not a whole number: {version!r}")
        return cls(
            tuple(_metric(m, i) for i, m in enumerate(metrics)),
            _object(raw, cls.OP, "artifacts", optional=True) or {},
            None if memory is None else _built(cls.OP, "memory", MemorySnapshot, memory),
            _seconds(raw, cls.OP, "elapsed_s", optional=True) or 0.0,
            version,
            _texts(raw, cls.OP, "failures"),
            _text(raw, cls.OP, "skip_reason", optional=True) or None,
            _text(raw, cls.OP, "timed_out", optional=True) or None,
            _checks(raw.get("checks")),
        )


def _metric(raw: object, index: int) -> Metric:
    if not isinstance(raw, dict):
        raise MessageError(f"'result' message: metrics[{index}] is not an object: {raw!r:.60}")
    try:
        return metric_from_json(raw)
    except (KeyError, TypeError, ValueError) as exc:
        detail = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
        raise MessageError(
            f"'result' message: metrics[{index}] is not a metric: {detail}"
        ) from None


def _checks(raw: object) -> tuple[CheckVerdict, ...]:
    try:
        return checks_from_json(raw)
    except ValueError as exc:
        raise MessageError(f"'result' message: {exc}") from None


@dataclass(frozen=True)
class ErrorReply:
    """The request failed; ``error`` is its one line. ``failed``: the fault is not ours but
    the suite's (its ``url:`` server did not answer), so the case fails rather than errors.
    ``skipped``: the case cannot run in this environment (the server refused the suite's
    arguments: a release without that option), so it is skipped with the reason."""

    OP: ClassVar[str] = "error"
    error: str
    failed: bool = False
    skipped: bool = False

    def to_wire(self) -> dict[str, Any]:
        wire: dict[str, Any] = {"op": self.OP, "error": self.error}
        if self.failed:
            wire["status"] = "failed"
        elif self.skipped:
            wire["status"] = "skipped"
        return wire

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> ErrorReply:
        status = raw.get("status")
        if status not in (None, "failed", "skipped"):
            raise MessageError(
                f"'error' message: 'status' is not 'failed' or 'skipped': {status!r:.60}"
            )
        return cls(_text(raw, cls.OP, "error"), status == "failed", status == "skipped")


@dataclass(frozen=True)
class CrashReply:
    """The worker cannot go on (out of memory); ``error`` is the one line. It exits next."""

    OP: ClassVar[str] = "crash"
    error: str

    def to_wire(self) -> dict[str, Any]:
        return {"op": self.OP, "error": self.error}

    @classmethod
    def from_wire(cls, raw: Mapping[str, Any]) -> CrashReply:
        return cls(_text(raw, cls.OP, "error"))


Reply = LoadedReply | ResultReply | ErrorReply | CrashReply | RepeatProgress

REQUESTS: dict[str, type[LoadRequest] | type[RunRequest] | type[ExitRequest]] = {
    kind.OP: kind for kind in (LoadRequest, RunRequest, ExitRequest)
}
REPLIES: dict[
    str,
    type[LoadedReply] | type[ResultReply] | type[ErrorReply] | type[CrashReply],
] = {kind.OP: kind for kind in (LoadedReply, ResultReply, ErrorReply, CrashReply)}


def _op(raw: object, side: str, known: Mapping[str, object]) -> tuple[str, Mapping[str, Any]]:
    if not isinstance(raw, dict):
        raise MessageError(f"a {side} is a JSON object, not {type(raw).__name__}")
    op = raw.get("op")
    if op not in known:
        kinds = ", ".join(sorted(known))
        raise MessageError(f"unknown {side} 'op' {op!r:.40} (known: {kinds})")
    return str(op), raw


def request_from_wire(raw: object) -> Request:
    """The request ``raw`` (one line of the worker's stdin, parsed) holds."""
    op, message = _op(raw, "request", REQUESTS)
    return REQUESTS[op].from_wire(message)


def reply_from_wire(raw: object) -> Reply:
    """The reply ``raw`` (one line of the worker's stdout, parsed) holds."""
    op, message = _op(raw, "reply", {**REPLIES, RepeatProgress.OP: RepeatProgress})
    if op == RepeatProgress.OP:
        try:
            return RepeatProgress.from_wire(message)
        except ValueError as exc:
            raise MessageError(str(exc)) from None
    return REPLIES[op].from_wire(message)
