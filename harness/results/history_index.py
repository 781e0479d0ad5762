"""The site's index of runs already read: re-building over the same reports reads only what is
new or changed.

One SQLite file (stdlib ``sqlite3``) holds, per run record file (its resolved path), the file's
size and modification time (ns) and its :class:`~harness.results.digest.RunDigest` as JSON
(zlib-compressed: about 15 kB a night of 100 cases x 3 metrics). A
record whose size and mtime match is taken from the index; any other is read (and its row
replaced); rows of files no longer found are dropped. An index that cannot be opened or is of
another version is started afresh: it is only ever a cache of the records.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import sqlite3
import warnings
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from harness.results.digest import RunDigest, digest_run, from_plain, to_plain
from harness.results.history import record_files
from harness.results.store import RunFileError, RunReadWarning

INDEX_FILE = "history-index.sqlite"
VERSION = 3  # 3: digests of records migrated as read (harness.results.migrations)
_SCHEMA = (
    "CREATE TABLE IF NOT EXISTS runs (file TEXT PRIMARY KEY, size INTEGER NOT NULL,"
    " mtime_ns INTEGER NOT NULL, digest BLOB NOT NULL)"
)


@dataclass
class IndexCounts:
    """What a pass over the records did: files read, taken from the index, dropped from it."""

    read: list[str] = field(default_factory=list)
    reused: int = 0
    dropped: int = 0


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path)
    try:
        (version,) = connection.execute("PRAGMA user_version").fetchone()
        if version != VERSION:
            connection.execute("DROP TABLE IF EXISTS runs")
            connection.execute(f"PRAGMA user_version = {VERSION}")
        connection.execute(_SCHEMA)
    except sqlite3.DatabaseError:
        connection.close()
        path.unlink(missing_ok=True)  # not an index of ours (or damaged): start afresh
        connection = sqlite3.connect(path)
        connection.execute(f"PRAGMA user_version = {VERSION}")
        connection.execute(_SCHEMA)
    return connection


def indexed_digests(
    paths: Iterable[Path], index: Path, counts: IndexCounts | None = None
) -> Iterator[RunDigest]:
    """Every readable record under ``paths`` as a digest (all its metrics), from ``index``
    where the file is unchanged, read (and indexed) otherwise; one at a time. An unreadable
    record is skipped with a :class:`RunReadWarning` (and read again next time)."""
    counts = counts if counts is not None else IndexCounts()
    connection = _connect(index)
    connection.execute("PRAGMA synchronous = OFF")  # a cache: a torn one is rebuilt
    try:
        seen: set[str] = set()
        for path in paths:
            for file in record_files(path):
                found = _digest(connection, file, counts)
                seen.add(str(file.resolve()))
                if found is not None:
                    yield found
        stale = [row[0] for row in connection.execute("SELECT file FROM runs")]
        stale = [f for f in stale if f not in seen]
        connection.executemany("DELETE FROM runs WHERE file = ?", [(f,) for f in stale])
        counts.dropped += len(stale)
        connection.commit()
    finally:
        connection.close()


def _digest(connection: sqlite3.Connection, file: Path, counts: IndexCounts) -> RunDigest | None:
    key = str(file.resolve())
    try:
        stat = file.stat()
    except OSError:
        stat = None
    if stat is not None:
        row = connection.execute(
            "SELECT digest FROM runs WHERE file = ? AND size = ? AND mtime_ns = ?",
            (key, stat.st_size, stat.st_mtime_ns),
        ).fetchone()
        if row is not None:
            with contextlib.suppress(ValueError, KeyError, TypeError, zlib.error):
                digest = from_plain(json.loads(zlib.decompress(row[0])))
                counts.reused += 1
                return dataclasses.replace(digest, source=str(file))  # as found this time
    try:
        digest = digest_run(file)
    except RunFileError as exc:
        warnings.warn(f"{exc}; skipped this record", RunReadWarning, stacklevel=3)
        return None
    counts.read.append(str(file))
    if stat is not None:
        connection.execute(
            "INSERT OR REPLACE INTO runs VALUES (?, ?, ?, ?)",
            (
                key,
                stat.st_size,
                stat.st_mtime_ns,
                zlib.compress(json.dumps(to_plain(digest)).encode()),
            ),
        )
    return digest
