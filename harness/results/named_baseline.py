"""The baseline a suite names for itself (its ``baseline:``), used when ``--baseline`` is not
given, so a nightly that forgets the option still compares.

``baseline: PATH`` is a run folder or ``run.jsonl``, relative to the suite file; when it is
missing the run fails before it starts (one line, fail closed). ``baseline: last`` is the
latest earlier run of the same suite in the report folder; with none yet, the run has no
baseline and says so (its first run makes one). ``--baseline`` on the command line wins.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from harness.core.types import RunRecord, SuiteInfo
from harness.results.store import RUN_FILE, RunFileError, RunReadWarning, load_run

LAST = "last"  # the latest earlier run of the suite in the report folder


class NamedBaselineError(ValueError):
    """A suite's baseline that cannot be used: one line naming the suite and the fix."""


@dataclass(frozen=True)
class NamedBaseline:
    """What the suites' ``baseline:`` chose: the record (None: no baseline) and one line that
    says where it came from, or why there is none (None: no suite names one)."""

    run: RunRecord | None
    line: str | None


def named_baseline(
    suites: Sequence[SuiteInfo], report_root: Path, current_run_id: str | None = None
) -> NamedBaseline:
    """The baseline the suites name (they must agree); raises NamedBaselineError when a named
    run is missing or unreadable, or when suites name different ones."""
    named = {(s.baseline, _where(s)) for s in suites if s.baseline is not None}
    if not named:
        return NamedBaseline(None, None)
    resolved = {_resolved(text, where) for text, where in named}
    if len(resolved) > 1:
        said = ", ".join(sorted(f"{s.path}: {s.baseline}" for s in suites if s.baseline))
        raise NamedBaselineError(
            f"the suites name different baselines ({said}); run them apart or give --baseline"
        )
    (choice,) = resolved
    text = next(iter(named))[0]
    suite = next(s for s in suites if s.baseline == text)
    if choice is None:  # last
        names = {s.name for s in suites}
        found = _last_run(report_root, names, current_run_id)
        if found is None:
            return NamedBaseline(
                None,
                f"baseline: none yet ({suite.path} says 'baseline: last', and {report_root} "
                "holds no earlier run of it); this run becomes the next one's baseline",
            )
        run, path = found
        return NamedBaseline(run, f"baseline: {path} (the last earlier run; {suite.path})")
    try:
        run = load_run(choice)
    except RunFileError as exc:
        raise NamedBaselineError(
            f"{suite.path}: baseline: {text}: {exc} (make it with a run of the suite, or "
            "write 'baseline: last')"
        ) from None
    return NamedBaseline(run, f"baseline: {choice} ({suite.path})")


def _where(suite: SuiteInfo) -> Path:
    return Path(suite.path).parent


def _resolved(text: str, where: Path) -> Path | None:
    """The path a ``baseline:`` names (None: ``last``)."""
    if text == LAST:
        return None
    path = Path(text).expanduser()
    return path if path.is_absolute() else where / path


def _last_run(
    report_root: Path, names: set[str], current_run_id: str | None
) -> tuple[RunRecord, Path] | None:
    """The newest run (by its record's time) in ``report_root`` holding one of the suites."""
    if not report_root.is_dir():
        return None
    files = [
        f
        for f in report_root.glob(f"*/{RUN_FILE}")
        if not f.parent.is_symlink() and f.parent.name not in ("latest", current_run_id)
    ]
    files.sort(key=lambda f: f.stat().st_mtime, reverse=True)
    for file in files:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RunReadWarning)
                run = load_run(file)
        except RunFileError:
            continue  # not a usable run: an earlier one may be
        if names & {s.name for s in run.suites}:
            return run, file.parent
    return None
