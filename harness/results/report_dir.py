"""The reports folder on disk: its one error type, atomic file writes and the writability check.

Every failure to write there (read-only, missing parent, a file where a folder should be, disk
full, permission) becomes :class:`ReportDirError`, whose message is one line naming the path and
the fix, so a driver prints it instead of a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from pathlib import Path

from harness.core.visible_text import visible

FIX = "pass --report-dir to a writable folder"
_FULL = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
_DENIED = (errno.EACCES, errno.EPERM)


class ReportDirError(OSError):
    """A reports folder or file that cannot be written; the message is one line with the fix.

    An ``OSError``, so a caller that already turns OSError into "cannot write" keeps working.
    """


class RunIdTaken(ReportDirError):
    """A new run whose id already has a record in the reports folder."""


def shown(path: Path | str) -> str:
    """A path as it is safe to print: acting characters escaped (the one escaper), the rest as
    written."""
    return visible(str(path))


def temp_name(path: Path) -> Path:
    """A hidden sibling of ``path`` that no other process (or thread) picks."""
    return path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def _file_in_the_way(path: Path) -> Path | None:
    """The first part of ``path`` that exists and is not a folder (ENOTDIR's culprit)."""
    for part in reversed((path, *path.parents)):
        if part.exists() and not part.is_dir():
            return part
    return None


def os_error(path: Path, exc: OSError) -> ReportDirError:
    """``exc``, raised while writing ``path``, as one line: the path, what, and the fix."""
    reason = exc.strerror or str(exc)
    if exc.errno in _FULL:
        return ReportDirError(
            f"{shown(path)}: out of space ({reason}); "
            "free space or pass --report-dir on another disk"
        )
    if exc.errno in _DENIED:
        return ReportDirError(f"{shown(path)}: not writable ({reason}); {FIX}")
    if exc.errno == errno.EROFS:
        return ReportDirError(f"{shown(path)}: on a read-only file system; {FIX}")
    if exc.errno in (errno.ENOTDIR, errno.EEXIST):
        culprit = _file_in_the_way(path)
        if culprit is not None:
            return ReportDirError(f"{shown(culprit)}: is a file, not a folder; {FIX}")
    if exc.errno == errno.EISDIR:
        return ReportDirError(f"{shown(path)}: is a folder where a file should be; {FIX}")
    if exc.errno == errno.ENOENT:
        return ReportDirError(f"{shown(path)}: no such folder ({reason}); {FIX}")
    return ReportDirError(f"{shown(path)}: cannot write ({reason}); {FIX}")


def make_dir(path: Path) -> None:
    """``mkdir -p path``, failures as :class:`ReportDirError`."""
    if path.exists() and not path.is_dir():
        raise ReportDirError(f"{shown(path)}: is a file, not a folder; {FIX}")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise os_error(path, exc) from None


def write_text_atomic(path: Path, text: str, *, durable: bool = True) -> None:
    """Write ``text`` (UTF-8) to ``path`` so a reader sees the old file or the whole new one.

    The text goes to a temporary name in the same folder, is fsync'd (unless not ``durable``:
    a page rebuilt from the records at will, written by the hundred), then renamed over
    ``path`` (``os.replace``, atomic on POSIX). On any failure the temporary file is removed
    and ``path`` is left as it was.
    """
    data = text.encode("utf-8", "replace")  # a lone surrogate from model text becomes ?
    tmp = temp_name(path)
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as exc:
        raise os_error(path, exc) from None
    finally:
        if os.path.lexists(tmp):  # if the folder went read-only, a stray hidden .tmp remains
            with contextlib.suppress(OSError):
                tmp.unlink()


def check_writable_dir(root: Path) -> None:
    """Raise :class:`ReportDirError` unless ``root`` is (or can be made) a folder we can write.

    Writability is tried for real, by creating and removing a file there: permission bits do
    not tell about read-only mounts, quotas, or running as root.
    """
    make_dir(root)
    probe = temp_name(root / "write-check")
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise os_error(root, exc) from None
