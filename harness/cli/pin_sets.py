"""``mlx-harness run SUITE --pin-set NAME`` (or ``--pin-set all``): the suite once per pin set,
each in its own cached environment (:mod:`harness.runner.pin_env`), as a child
``mlx-harness run`` whose workers use that environment's Python.

Each pin set's run is ``<run-id>-<pin-set>``; its record names the pin set and the resolved
version of every distribution in its environment. Exit status: the worst child's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from harness.cli.errors import CliError

if TYPE_CHECKING:
    from harness.core.types import PinSetInfo
    from harness.runner.pin_env import PinEnv, PinEnvSpec
    from harness.spec.pin_sets import PinSet

ALL = "all"
RECORD_FLAG = "--pin-set-record"
TURNS_FLAG = "--turns"  # harness.runner.turns.FLAG
INTERLEAVED = "interleaved"
SEQUENTIAL = "sequential"


def add_pin_set_options(p: argparse.ArgumentParser) -> None:
    """The pin-set options of ``run``."""
    p.add_argument(
        "--pin-set",
        action="append",
        default=None,
        metavar="NAME",
        help="run in the cached environment of this pin set of the suite (repeat it, or 'all')",
    )
    p.add_argument(
        "--pin-set-order",
        choices=(INTERLEAVED, SEQUENTIAL),
        default=INTERLEAVED,
        help="interleaved (default): the pin sets' runs take turns, a round of each timing "
        "case at a time, so their timings are measured side by side; sequential: one whole "
        "run after another (timing verdicts then exposed to the machine's drift)",
    )
    add_env_options(p)
    p.add_argument(RECORD_FLAG, default=None, help=argparse.SUPPRESS)  # set by the parent run
    p.add_argument(TURNS_FLAG, default=None, help=argparse.SUPPRESS)  # set by the parent run


def add_env_options(p: argparse.ArgumentParser) -> None:
    """How pin-set environments are built (``run`` and ``bisect``)."""
    p.add_argument(
        "--pin-env",
        choices=("venv", "overlay"),
        default="venv",
        help="venv: an isolated virtualenv (default); overlay: only the pins, without their "
        "dependencies, over this environment (fast; for pure-Python packages)",
    )
    p.add_argument("--index-url", default=None, help="package index for the pins (PEP 503/691)")
    p.add_argument(
        "--find-links", default=None, help="a folder or page of wheels to install from (no index)"
    )


def chosen_pin_sets(paths: Sequence[Path], names: Sequence[str]) -> list[PinSet]:
    """The named pin sets of the suites (``all``: every one), in the order given."""
    from harness.spec.pin_sets import PinSetsInvalid, read_pin_sets

    declared: dict[str, PinSet] = {}
    for path in paths:
        try:
            found = read_pin_sets(path)
        except PinSetsInvalid as exc:
            raise CliError(str(exc)) from None
        for pin_set in found:
            if declared.setdefault(pin_set.name, pin_set) != pin_set:
                raise CliError(
                    f"{path}: pin set '{pin_set.name}' differs from another suite's; rename one"
                )
    if not declared:
        raise CliError(
            "--pin-set: the suites name no pin_sets:; add e.g. "
            'pin_sets: [{name: lm-0.31.3, pins: ["mlx-lm==0.31.3"]}]'
        )
    wanted = list(declared) if ALL in names else list(dict.fromkeys(names))
    unknown = [n for n in wanted if n not in declared]
    if unknown:
        raise CliError(
            f"--pin-set {unknown[0]}: no such pin set; the suites name {', '.join(declared)}"
        )
    return [declared[n] for n in wanted]


def env_spec(
    args: argparse.Namespace,
    name: str,
    pins: Sequence[str],
    track: str | None = None,
    extras: Sequence[str] = (),
) -> PinEnvSpec:
    from harness.runner.pin_env import EnvKind, PinEnvSpec, Track

    kind = EnvKind(args.pin_env)
    if track is not None and kind is EnvKind.OVERLAY:
        raise CliError(
            f"pin set {name}: track: {track} builds a whole environment; drop --pin-env overlay"
        )
    return PinEnvSpec(
        name=name,
        pins=tuple(pins),
        kind=kind,
        index_url=args.index_url,
        find_links=args.find_links,
        track=Track(track) if track is not None else None,
        extras=tuple(extras),
    )


def pin_set_spec(args: argparse.Namespace, pin_set: PinSet) -> PinEnvSpec:
    """The environment a suite's pin set asks for."""
    return env_spec(args, pin_set.name, pin_set.pins, pin_set.track, pin_set.extras)


def described(spec: PinEnvSpec) -> str:
    """What an environment holds, for the 'preparing' line: its pins, track and extras."""
    parts = list(spec.pins)
    if spec.track is not None:
        parts.insert(0, f"track: {spec.track.value}")
    if spec.extras:
        parts.append(f"extras: {','.join(spec.extras)}")
    return " ".join(parts)


def with_companions(spec: PinEnvSpec) -> PinEnvSpec:
    """``spec`` with the mlx (and transformers) its pinned mlx-lm works with, when it pins
    none (:mod:`harness.runner.pin_resolve`); a line says each choice and why."""
    from harness.runner.pin_resolve import completed, resolve_companions

    found = resolve_companions(spec)
    for choice in found.choices:
        print(f"pin set {spec.name}: chose {choice.line()}", flush=True)
    if found.choices and found.source != "the index":
        print(f"pin set {spec.name}: choices from {found.source}", flush=True)
    for note in found.notes:
        if note.startswith(("companions not chosen", "no index")):
            print(f"pin set {spec.name}: {note}", flush=True)
    return completed(spec, found)


def prepare(spec: PinEnvSpec) -> PinEnv:
    """The pin set's environment, with one line saying whether it was built or reused."""
    from harness.runner.pin_env import PinEnvError, ensure_env

    print(f"pin set {spec.name}: preparing {described(spec)} ({spec.kind.value})", flush=True)
    try:
        env = ensure_env(spec)
    except PinEnvError as exc:
        raise CliError(f"pin set {spec.name}: {exc}") from None
    how = f"built (cold, {env.installer.value})" if env.cold else "reused (cached)"
    print(f"pin set {spec.name}: environment {how} in {env.ready_s:.1f} s: {env.path}", flush=True)
    return env


def child_args(args: argparse.Namespace, paths: Sequence[Path], run_id: str) -> list[str]:
    """``run`` arguments for a pin set's child run (everything but the pin-set options)."""
    out = ["run", *map(str, paths), "--report-dir", str(args.report_dir), "--run-id", run_id]
    if args.k:
        out += ["-k", args.k]
    if args.allow_download:
        out.append("--allow-download")
    if args.shard:
        out += ["--shard", args.shard]
    if args.baseline:
        out += ["--baseline", args.baseline]
    if args.fail_on_regression:
        out.append("--fail-on-regression")
    if getattr(args, "fail_on", None) is not None:
        out += ["--fail-on", args.fail_on]
    for flag in ("allow_model_change", "allow_machine_change", "allow_dirty_machine"):
        if getattr(args, flag, False):
            out.append("--" + flag.replace("_", "-"))
    return out


def pin_set_command(
    env: PinEnv, args: Sequence[str], interleaved_with: Sequence[str] = ()
) -> list[str]:
    """``mlx-harness ARGS`` in the environment, with the pin set it records."""
    record: dict[str, object] = {
        "name": env.spec.name,
        "pins": list(env.spec.declared_pins()),
        "environment_s": round(env.ready_s, 3),
        "environment_cold": env.cold,
        "installer": env.installer.value,
    }
    if env.spec.track is not None:
        record["track"] = env.spec.track.value
    if env.spec.chosen:
        record["chosen"] = list(env.spec.chosen)
    if interleaved_with:
        record["interleaved_with"] = list(interleaved_with)
    return [*env.command(args), RECORD_FLAG, json.dumps(record)]


def run_in(env: PinEnv, args: Sequence[str], log: Path | None = None) -> int:
    """Run ``mlx-harness ARGS`` in the environment, recording the pin set; its exit status.
    Its output goes to ``log`` when given, else to this terminal."""
    cmd = pin_set_command(env, args)
    try:
        if log is None:
            return subprocess.run(cmd, env=env.env(os.environ), check=False).returncode
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("a") as out:
            return subprocess.run(
                cmd, env=env.env(os.environ), stdout=out, stderr=subprocess.STDOUT, check=False
            ).returncode
    except OSError as exc:
        raise CliError(f"pin set {env.spec.name}: cannot start {cmd[0]} ({exc})") from None


def run_pin_sets(args: argparse.Namespace, paths: Sequence[Path]) -> int:
    """Every chosen pin set: its environment, then the suite in it (all at once taking turns,
    or one after another); a summary line each, then the matrix."""
    from harness.runner.active_run import new_run_id

    if args.resume:
        raise CliError("--resume with --pin-set: resume the pin set's own run id instead")
    base = args.run_id or new_run_id()
    chosen = chosen_pin_sets(paths, args.pin_set)
    if len(chosen) > 1 and getattr(args, "pin_set_order", INTERLEAVED) == INTERLEAVED:
        from harness.cli.pin_turns import run_taking_turns

        envs = [prepare(with_companions(pin_set_spec(args, p))) for p in chosen]
        statuses, took = run_taking_turns(
            [
                (
                    env,
                    pin_set_command(
                        env,
                        child_args(args, paths, f"{base}-{env.spec.name}"),
                        [p.name for p in chosen],
                    ),
                )
                for env in envs
            ]
        )
        outcomes = [(env, status, took) for env, status in zip(envs, statuses, strict=True)]
    else:
        outcomes = []
        for pin_set in chosen:
            env = prepare(with_companions(pin_set_spec(args, pin_set)))
            start = time.perf_counter()
            status = run_in(env, child_args(args, paths, f"{base}-{pin_set.name}"))
            outcomes.append((env, status, time.perf_counter() - start))
    return _conclude(args, base, outcomes)


def _conclude(
    args: argparse.Namespace, base: str, outcomes: Sequence[tuple[PinEnv, int, float]]
) -> int:
    """A line per pin set, the pin-set comparison of their runs, and the worst exit status."""
    lines, run_dirs = [], []
    for env, status, took in outcomes:
        run_dir = Path(args.report_dir) / f"{base}-{env.spec.name}"
        if (run_dir / "run.jsonl").is_file():
            run_dirs.append(run_dir)
        how = f"cold, {env.installer.value}" if env.cold else "cached"
        lines.append(
            f"  {env.spec.name}: exit {status}; environment {env.ready_s:.1f} s ({how}), "
            f"run {took:.1f} s; {run_dir}"
        )
    print("pin sets:", *lines, sep="\n")
    if len(run_dirs) > 1:
        from harness.cli.pin_matrix import write_matrix
        from harness.report.escape import plain
        from harness.results.report_dir import shown

        html, summary, _ = write_matrix(run_dirs, Path(args.report_dir) / f"{base}-matrix")
        print(
            *(plain(line, 1000) for line in summary), f"pin-set comparison: {shown(html)}", sep="\n"
        )
    return max((status for _, status, _ in outcomes), default=0)


def recorded_pin_set(raw: str | None) -> PinSetInfo | None:
    """The pin set this child run records (from the parent's hidden option), with the resolved
    version of every distribution this Python sees."""
    from harness.core.types import PinSetInfo
    from harness.runner.pin_env import resolved_versions

    if raw is None:
        return None
    try:
        data = json.loads(raw)
        name, pins = str(data["name"]), tuple(str(p) for p in data["pins"])
        seconds = data.get("environment_s")
        environment_s = float(seconds) if isinstance(seconds, (int, float)) else None
        cold = data.get("environment_cold")
        together = data.get("interleaved_with") or []
        interleaved_with = tuple(str(n) for n in together) if isinstance(together, list) else ()
        installer = data.get("installer")
        track = data.get("track")
        chosen = tuple(str(c) for c in data.get("chosen") or ())
    except (ValueError, KeyError, TypeError, AttributeError):
        print(f"mlx-harness: warning: {RECORD_FLAG}: not a pin set record", file=sys.stderr)
        return None
    return PinSetInfo(
        name=name,
        pins=pins,
        resolved=resolved_versions(),
        environment_s=environment_s,
        environment_cold=cold if isinstance(cold, bool) else None,
        interleaved_with=interleaved_with,
        installer=str(installer) if isinstance(installer, str) else None,
        track=str(track) if isinstance(track, str) else None,
        chosen=chosen,
    )
