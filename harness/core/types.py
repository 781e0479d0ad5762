"""Frozen values and enums shared by every stage: plan, run, store, compare, report.

Units are explicit and SI: seconds, bytes, tokens per second.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from functools import cached_property
from typing import Any

from harness.core.check_types import CheckVerdict
from harness.core.preflight_types import OMITTED_WHEN_DEFAULT, PreflightRecord
from harness.core.summary import Summary

JSONValue = Any  # a value that json.dumps accepts; kept loose on purpose at this boundary


class Status(str, Enum):
    """Outcome of one case. A crash or a timeout is a result, never the end of a run."""

    PASSED = "passed"
    FAILED = "failed"
    SKIPPED = "skipped"
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    ERRORED = "errored"
    CRASHED = "crashed"
    TIMED_OUT = "timed_out"
    INTERRUPTED = "interrupted"  # the run was stopped (Ctrl-C, SIGTERM) before the case ended

    @property
    def is_ok(self) -> bool:
        return self in (Status.PASSED, Status.XFAILED, Status.SKIPPED)

    @property
    def is_failing(self) -> bool:
        """Something went wrong in the case itself (a verdict of 'broken', not 'not run')."""
        return self in (Status.FAILED, Status.ERRORED, Status.CRASHED, Status.TIMED_OUT)


class Verdict(str, Enum):
    """Outcome of comparing one case/metric between a baseline run and a current run."""

    IMPROVED = "improved"
    REGRESSED = "regressed"
    UNCHANGED = "unchanged"
    INCONCLUSIVE = "inconclusive"  # the samples cannot decide (too few, or not significant)
    NOT_COMPARABLE = "not_comparable"
    NEWLY_FAILING = "newly_failing"
    FIXED = "fixed"
    NEW = "new"
    REMOVED = "removed"
    NOT_SELECTED = "not_selected"  # in the baseline, left out of this run by -k, -m or --shard


class Unit(str, Enum):
    SECONDS = "s"
    BYTES = "B"
    TOKENS_PER_SECOND = "tok/s"
    REQUESTS_PER_SECOND = "req/s"
    TOKENS = "tokens"
    RATIO = "x"
    COUNT = "count"
    SCORE = "score"  # a dimensionless figure shown bare (perplexity, KL in nats)


class ExpectKind(str, Enum):
    XFAIL = "xfail"
    SKIP = "skip"


class SkipCause(str, Enum):
    """Why a skipped case was skipped, as the exit rules need it: the user's input (a model
    that cannot be found or read: fails CI by default, ``input-skip``) or on purpose (an
    ``expect:`` skip entry, a capability the model or backend lacks)."""

    INPUT = "input"  # an unknown hub id, a missing path, a corrupt or empty model folder
    EXPECTED = "expected"  # an expect: entry with status skip
    NOT_APPLICABLE = "not-applicable"  # the scenario does not apply to this model or backend


class ModelSource(str, Enum):
    PATH = "path"
    HUB = "hub"
    EMBEDDED = "embedded"
    URL = "url"  # only a running server's URL: no local files


@dataclass(frozen=True)
class ServerRef:
    """A model served over HTTP: ``engine`` when the harness starts the server itself
    (``serve:``), ``url`` when it is already running (``url:``); exactly one is set."""

    engine: str | None = None  # mlx_lm | mlx_vlm | llama_server
    args: tuple[str, ...] = ()  # extra command-line arguments for the engine
    env: tuple[tuple[str, str], ...] = ()  # extra environment variables for the engine
    url: str | None = None  # base URL of a running OpenAI-compatible server
    api_key_env: str | None = None  # environment variable holding its API key
    request_model: str | None = None  # the ``model`` its requests name (None: the default)
    startup_timeout_s: float = 300.0
    draft: str | None = None  # the draft model's folder or file (``serve: {draft: ...}``)
    draft_problem: str | None = None  # why the suite's draft did not resolve (the load fails)
    draft_tokens: int | None = None  # tokens the draft proposes a round (None: the default)

    @property
    def label(self) -> str:
        return self.engine if self.engine is not None else f"url {self.url}"


@dataclass(frozen=True)
class ModelRef:
    """A model as a suite names it, with where it was resolved to (if it could be)."""

    key: str
    source: ModelSource
    location: str
    backend: str
    tags: tuple[str, ...] = ()
    path: str | None = None  # resolved local directory, None when unresolved
    server: ServerRef | None = None  # served over HTTP (backend ``http``)


@dataclass(frozen=True)
class Expectation:
    """A known outcome declared in the suite: an xfail or a skip, with its reason."""

    kind: ExpectKind
    reason: str
    link: str | None = None
    recheck: str | None = None  # ISO date after which the entry should be re-checked
    strict: bool = True
    source: str | None = None  # file:line of the expect (ledger) entry, None when planned
    # an xfail of these named checks only (a scenario that records a verdict per check): the
    # case xfails when they are all that failed, and fails when another check fails too
    checks: tuple[str, ...] = ()


@dataclass(frozen=True)
class LedgerEntry:
    """A known-broken (``expect:``) entry as a run saw it, with the cases it matched."""

    source: str  # file:line of the entry
    status: ExpectKind
    reason: str
    model: str = "*"  # globs, as written
    scenario: str = "*"
    family: str | None = None
    backend: str | None = None
    link: str | None = None
    recheck: str | None = None  # ISO date
    strict: bool = True
    cases: tuple[str, ...] = ()  # ids of the planned cases it matched
    # the installed versions it applies to, as written: "transformers>=5.24, mlx-vlm<=0.7.10"
    versions: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    @property
    def match(self) -> str:
        """What it matches, for people: ``family llava, backend mlx_vlm, scenario *``."""
        parts = [f"model {self.model}"] if self.model != "*" or not self.family else []
        if self.family:
            parts.append(f"family {self.family}")
        if self.backend:
            parts.append(f"backend {self.backend}")
        parts.append(f"scenario {self.scenario}")
        if self.versions:
            parts.append(f"with {self.versions}")
        return ", ".join(parts)


@dataclass(frozen=True)
class Gate:
    """A threshold on one metric's median, absolute (``>= 5``) or relative to a baseline."""

    metric: str
    op: str  # one of >=, >, <=, <, ==
    threshold: float
    relative: bool = False  # threshold is a fraction of the baseline median (e.g. -0.05)
    expression: str = ""


@dataclass(frozen=True)
class GateResult:
    gate: Gate
    measured: float | None
    passed: bool | None  # None: not evaluated (metric missing or no baseline)
    message: str


@dataclass(frozen=True)
class AutoRepeats:
    """``repeats: auto``: repeat until the median of each headline metric has a relative 95%
    confidence interval no wider than ``rel_ci``, or ``max_repeats`` or ``budget_s`` (seconds
    of the scenario's own time) runs out, whichever comes first; at least ``min_repeats``."""

    min_repeats: int = 6
    max_repeats: int = 30
    rel_ci: float = 0.02  # full width of the CI as a fraction of the median
    budget_s: float = 120.0


@dataclass(frozen=True)
class Case:
    """One planned unit of work: a model x scenario x parameter point, with a stable id."""

    case_id: str
    suite: str
    suite_path: str
    model: ModelRef
    scenario: str
    params: Mapping[str, JSONValue]
    point: Mapping[str, JSONValue] = field(default_factory=dict)  # the swept values only
    repeats: int = 3  # with ``auto_repeats``: the first batch (its minimum)
    warmup: int = 1
    timeout_s: float = 600.0
    memory_threshold: float = 0.70  # share of machine memory the policy lets a model use
    expectation: Expectation | None = None
    gates: tuple[Gate, ...] = ()
    marks: tuple[str, ...] = ()
    auto_repeats: AutoRepeats | None = None  # repeats: auto
    cooldown_s: float = 0.0  # sleep before the case (a hot machine cools)
    wait_for_quiet_s: float = 0.0  # the most to wait before it for other processes to go quiet


@dataclass(frozen=True)
class Metric:
    """One measured quantity with all its raw samples; warm-up samples are kept apart."""

    name: str
    unit: Unit
    samples: tuple[float, ...]
    warmup_samples: tuple[float, ...] = ()
    view: str | None = None  # for memory: which view (mlx_peak, mlx_active, process_peak_rss)

    @cached_property
    def summary(self) -> Summary:
        """Median, interval and n over the finite samples, with the count dropped: the one
        summary every gate, comparison and report shows (taken once: the samples are a tuple)."""
        return Summary.of(self.samples)

    @property
    def median(self) -> float:
        """The median of the finite samples (:attr:`summary`); NaN when there is none."""
        return self.summary.median

    @property
    def mean(self) -> float:
        return statistics.fmean(self.samples) if self.samples else math.nan

    @property
    def stddev(self) -> float:
        return statistics.stdev(self.samples) if len(self.samples) > 1 else 0.0


@dataclass(frozen=True)
class ModelIdentity:
    """What makes two runs of 'the same model' comparable."""

    key: str
    path: str | None
    backend: str
    revision: str | None = None
    config_sha256: str | None = None
    chat_template_sha256: str | None = None
    weights_bytes: int | None = None
    server: str | None = None  # served over HTTP: the engine (and version) or the URL
    server_models: tuple[str, ...] = ()  # what the server's /v1/models lists


@dataclass(frozen=True)
class CaseResult:
    case_id: str
    suite: str
    model: str
    scenario: str
    status: Status
    params: Mapping[str, JSONValue] = field(default_factory=dict)
    point: Mapping[str, JSONValue] = field(default_factory=dict)
    metrics: tuple[Metric, ...] = ()
    reason: str | None = None  # skip/xfail reason, or the one-line error
    gates: tuple[GateResult, ...] = ()
    artifacts: Mapping[str, JSONValue] = field(default_factory=dict)
    duration_s: float = 0.0
    started_at: str = ""
    scenario_version: int = 1
    link: str | None = None
    # the probe-and-policy step before load: decision, findings, memory estimate (bytes) and
    # the workload it was sized for; None when the case was not judged (and in older runs)
    preflight: PreflightRecord | None = None
    # each named check's own verdict (api_contracts, template_contracts), in the order run;
    # empty for a scenario without named checks. Older records carry only the ``checks``
    # artifact: a record migration reads these from it (harness.results.migrations)
    checks: tuple[CheckVerdict, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    # a skipped case's cause (None: not skipped, or a record from before causes were kept)
    skip_cause: SkipCause | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)

    def metric(self, name: str) -> Metric | None:
        for m in self.metrics:
            if m.name == name:
                return m
        return None

    def check(self, name: str) -> CheckVerdict | None:
        """The named check's verdict; None when the case did not record that check."""
        return next((c for c in self.checks if c.name == name), None)


@dataclass(frozen=True)
class Machine:
    os: str
    os_release: str
    arch: str
    cpu: str
    cores: int
    memory_bytes: int
    python: str
    hostname: str = ""
    blas: str = "unknown"  # e.g. "openblas (LD_PRELOAD /usr/lib/.../libopenblas.so.0)" or "bundled"
    mlx_device: str = "unknown"  # as seen by the worker: "cpu", "gpu (Apple M2 Max)", ...


@dataclass(frozen=True)
class SuiteInfo:
    name: str
    path: str
    sha256: str
    ledger: tuple[LedgerEntry, ...] = ()  # its expect entries, its own and included ones
    warnings: tuple[str, ...] = ()  # one line each: a selector that chose nothing, ...
    # what the suite says fails a run (its ``fail_on:``, exit-rule kinds); None: the default
    fail_on: tuple[str, ...] | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # the suite's ``baseline:`` as written (a path relative to ``path``'s folder, or "last")
    baseline: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # the model its ``side_by_side: {reference: NAME}`` names: the report's Models side by
    # side compares the suite's other models with it; None: variants of one model only
    reference: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)


@dataclass(frozen=True)
class LockCheck:
    """The run's environment held against the harness's lock file (``uv.lock``): every
    installed distribution the lock names at one of the lock's versions, none it lacks."""

    lock: str  # the lock file's path
    sha256: str  # of the lock file
    checked: int  # installed distributions compared with it
    # one line each: "transformers 5.24.0 (lock: 5.23.0)", "six 1.16.0 (not in the lock)"
    differences: tuple[str, ...] = ()

    @property
    def matched(self) -> bool:
        return not self.differences

    def line(self, shown: int = 3) -> str:
        """``matches uv.lock (108 packages)`` or ``differs from uv.lock: a, b, c, +2 more``."""
        name = self.lock.replace("\\", "/").rsplit("/", 1)[-1]
        if self.matched:
            return f"matches {name} ({self.checked} packages)"
        more = len(self.differences) - shown
        listed = ", ".join(self.differences[:shown]) + (f", +{more} more" if more > 0 else "")
        return f"differs from {name}: {listed}"


@dataclass(frozen=True)
class Shard:
    """One of ``count`` parts of a plan split by model (``index`` counts from 1), with what
    the whole plan held, so a merge can tell shards of one plan from shards of another."""

    index: int
    count: int
    plan_cases: int = 0  # cases in the whole plan, every shard's together
    plan_models: int = 0
    plan_sha256: str = ""  # of the whole plan's sorted case ids

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class PinSetInfo:
    """The pin set a run ran under (``--pin-set``): its name, its exact pins, and the resolved
    version of every distribution in its environment (``name -> version``)."""

    name: str
    pins: tuple[str, ...] = ()
    resolved: Mapping[str, str] = field(default_factory=dict)
    # seconds to make its environment ready, and whether it was built for this run (True) or
    # reused from the cache (False); None: unknown (older records, bisect's runs)
    environment_s: float | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    environment_cold: bool | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # the pin sets whose runs took turns with this one (itself included): their timings were
    # measured side by side, a round of each case at a time; empty: run on its own
    interleaved_with: tuple[str, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    installer: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)  # uv, pip
    # what it follows instead of pins: "lock" (the harness's uv.lock) or "latest" (the newest
    # releases when it was built); None: its pins alone
    track: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # pins the harness added for the pinned mlx-lm, each "pin (why)" (not in ``pins``): the
    # mlx and transformers that release works with (harness.runner.pin_resolve)
    chosen: tuple[str, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)

    def pinned_versions(self) -> dict[str, str | None]:
        """Each pinned package's resolved version, by the name its pin gives."""
        import re

        names = [pin.split("==")[0].strip() for pin in self.pins]
        return {n: self.resolved.get(re.sub(r"[-_.]+", "-", n).lower()) for n in names}


@dataclass(frozen=True)
class RunPart:
    """One run a merged record joins: the machine, packages and shard its cases ran with."""

    run_id: str
    machine: Machine
    started_at: str
    finished_at: str | None = None
    packages: Mapping[str, str | None] = field(default_factory=dict)
    git_sha: str | None = None
    shard: Shard | None = None
    cases: tuple[str, ...] = ()  # ids of the cases this run contributed


@dataclass(frozen=True)
class RunRecord:
    """Everything one run measured, with what is needed to judge comparability."""

    schema_version: int
    run_id: str
    started_at: str
    machine: Machine
    packages: Mapping[str, str | None]
    git_sha: str | None
    suites: tuple[SuiteInfo, ...] = ()
    models: Mapping[str, ModelIdentity] = field(default_factory=dict)
    results: tuple[CaseResult, ...] = ()
    finished_at: str | None = None
    probes: Mapping[str, Mapping[str, JSONValue]] = field(default_factory=dict)  # model -> probe
    interrupted: str | None = None  # why the run stopped early, when it was not resumed since
    read_warnings: tuple[str, ...] = ()  # one line each: a cut last line skipped on reading, ...
    shard: Shard | None = None  # this run holds one shard of its plan (``--shard I/N``)
    parts: tuple[RunPart, ...] = ()  # a merged record: the runs it joins (``mlx-harness merge``)
    pin_set: PinSetInfo | None = None  # the pin set's environment it ran in (``--pin-set``)
    # the environment against the harness's lock; None: no lock found (an installed harness)
    lock: LockCheck | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    # how the run chose a part of its suites' cases: "-k throughput", "-m tool_calls"; empty:
    # every planned case (a shard says so in ``shard``)
    selection: tuple[str, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
