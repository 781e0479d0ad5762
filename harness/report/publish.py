"""Publish a run's reports: write them into its folder, then point ``latest`` at that folder.

``reports/latest`` is a relative symlink to the newest run's folder (``latest -> <run-id>``),
swapped in one ``os.replace`` of a freshly made temporary link. So two runs publishing into one
reports folder never corrupt each other (the last swap wins, each run folder is its own), and a
reader always finds ``latest`` and a whole ``latest/report.html``: the one before, or the new
one (reports are themselves written to a temporary name and renamed).

What other tools see: those that follow links (``actions/upload-artifact`` by default, ``cp
-L``, zip) find ``latest`` as a copy of the newest run folder; those that keep links (tar, rsync
-a) keep a relative link that still resolves inside the copied tree. To upload one run, upload
``reports/<run-id>/`` (an artifact path that is itself a directory symlink is not followed by
every uploader).

Older versions made ``latest`` a real folder holding copies; the first publish moves it aside
and removes it (the only moment ``latest`` is briefly absent). Where the file system refuses
symlinks (some network or FAT-formatted drives), ``latest`` falls back to a copied folder put in
place by renames: never half-written, but briefly absent while it is swapped.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
from collections.abc import Sequence
from pathlib import Path

from harness.core.types import RunRecord
from harness.report.render import HTML_FILE, MD_FILE, render
from harness.report.sections import Section
from harness.results.report_dir import ReportDirError, os_error, shown, temp_name
from harness.results.store import RUN_FILE

__all__ = ["LATEST", "ReportDirError", "point_latest", "publish_reports"]

LATEST = "latest"
_NO_SYMLINKS = {errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENOSYS}
_ATTEMPTS = 20  # each retry means another run swapped latest at the same moment


def publish_reports(
    run: RunRecord,
    run_dir: Path,
    latest: Path | None,
    sections: Sequence[Section] | None = None,
) -> Path:
    """Render ``run`` into ``run_dir``; point ``latest`` there (when given); return report.html.

    The path returned goes through ``latest`` when there is one. Failures to write are one-line
    :class:`ReportDirError`.
    """
    paths = render(run, run_dir, sections)
    if latest is None:
        return paths.html
    point_latest(latest, run_dir)
    return latest / paths.html.name


def point_latest(latest: Path, run_dir: Path) -> None:
    """Make ``latest`` show ``run_dir``, atomically where the file system has symlinks."""
    target = os.path.relpath(run_dir, latest.parent)
    link = temp_name(latest)
    try:
        os.symlink(target, link, target_is_directory=True)
    except OSError as exc:
        if exc.errno in _NO_SYMLINKS:
            _copy_into_place(latest, run_dir)
            return
        raise os_error(latest, exc) from None
    try:
        for _ in range(_ATTEMPTS):
            try:
                os.replace(link, latest)
                return
            except OSError as exc:
                if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                    raise os_error(latest, exc) from None
            _move_aside(latest)  # a real folder from an older version (or a copy fallback)
        raise ReportDirError(
            f"{shown(latest)}: still a folder after {_ATTEMPTS} attempts to replace it; remove it"
        )
    finally:
        if os.path.lexists(link):
            with contextlib.suppress(OSError):
                link.unlink()


def _move_aside(latest: Path) -> None:
    """Rename a real ``latest`` folder out of the way and delete it; a no-op if it is gone."""
    if latest.is_symlink() or not latest.is_dir():
        return
    aside = temp_name(latest.with_name(f"{latest.name}-old"))
    try:
        os.rename(latest, aside)
    except FileNotFoundError:
        return  # another run moved it first
    except OSError as exc:
        raise os_error(latest, exc) from None
    shutil.rmtree(aside, ignore_errors=True)


def _copy_into_place(latest: Path, run_dir: Path) -> None:
    """Without symlinks: copy the run's record and reports, then rename the copy into place."""
    staging = temp_name(latest)
    try:
        staging.mkdir()
        for name in (RUN_FILE, MD_FILE, HTML_FILE):
            if (run_dir / name).is_file():
                shutil.copy2(run_dir / name, staging / name)
        for _ in range(_ATTEMPTS):
            if latest.is_symlink() or latest.is_file():
                latest.unlink(missing_ok=True)
            _move_aside(latest)
            try:
                os.rename(staging, latest)
                return
            except OSError as exc:
                if exc.errno not in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
                    raise
        raise ReportDirError(f"{shown(latest)}: another run keeps replacing it; try again")
    except ReportDirError:
        raise
    except OSError as exc:
        raise os_error(latest, exc) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
