"""The pinned ``bfcl-eval`` wheel in the cache: BFCL's data and its own AST checker, and the data
imported once as live prompt files.

``bfcl-eval`` (PyPI) carries the Berkeley Function Calling Leaderboard's question and
possible-answer files and the checker that scores them. Only those files are taken out of the
wheel (its heavy dependencies are never installed): the data feeds ``toolcalls import-bfcl`` and
the ``tool_calls`` scenario's ``data: bfcl``, the checker files the agreement test between
BFCL's checker and ours. The wheel is pinned by sha256 like the model wheels
(:mod:`harness.models.fetch`). The imported prompts live in the cache beside it, rebuilt when the
wheel or the importer changes (a stamp records both).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from harness.models.cache_dir import cache_root, swap_in
from harness.models.fetch import PinnedWheel, fetch
from harness.toolcalls import shipped
from harness.toolcalls.bfcl_import import ANSWERS, CATEGORIES, PREFIX, import_bfcl, write
from harness.toolcalls.live import Category, LiveSet
from harness.toolcalls.live_data import load_live

VERSION = "2026.3.23"
IMPORTER_VERSION = 2  # bump when bfcl_import's output changes, so cached imports are rebuilt
STAMP = "imported.json"
CHECKER_FILES = (
    "bfcl_eval/eval_checker/ast_eval/ast_checker.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/java_type_converter.py",
    "bfcl_eval/eval_checker/ast_eval/type_convertor/js_type_converter.py",
    "bfcl_eval/constants/enums.py",
    "bfcl_eval/constants/type_mappings.py",
)
DATA_FILES = tuple(
    f"bfcl_eval/data/{ANSWERS + '/' if answers else ''}{PREFIX}{stem}.json"
    for stem, category in CATEGORIES.items()
    for answers in (False, True)
    if not (answers and category is Category.IRRELEVANCE)  # irrelevance has no answers file
)
BFCL_EVAL = PinnedWheel(
    package="bfcl-eval",
    version=VERSION,
    sha256="3bb6dfa5f0c68ad403c9ec50b00db2bb3b4cc9b38ab1ff33f48fe30d853d3a0a",
    members=(*DATA_FILES, *CHECKER_FILES),
)


SOURCE_NAME = "bfcl"  # `data: bfcl` or `data: bfcl:<stem>,<stem>` in a tool_calls scenario


def source_stems(data: str) -> tuple[str, ...] | None:
    """The BFCL file stems a ``data`` value asks for (every one for plain ``bfcl``), or None
    when it names a folder instead; raises ValueError naming the known stems."""
    if data != SOURCE_NAME and not data.startswith(SOURCE_NAME + ":"):
        return None
    listed = [s.strip() for s in data.partition(":")[2].split(",") if s.strip()]
    unknown = [s for s in listed if s not in CATEGORIES]
    if unknown:
        raise ValueError(
            f"unknown BFCL category {unknown[0]!r} in {data!r}; use bfcl or "
            f"bfcl:<stem>,... with stems from: {', '.join(CATEGORIES)}"
        )
    return tuple(dict.fromkeys(listed)) or tuple(CATEGORIES)


def file_patterns(stems: tuple[str, ...]) -> tuple[str, ...]:
    """Glob patterns of the imported prompt files of ``stems`` (``write`` names them)."""
    return tuple(p for s in stems for p in (f"bfcl_{s}.yaml", f"bfcl_{s}_[0-9][0-9].yaml"))


def load_source(data: str | None) -> LiveSet:
    """The live prompts a ``data`` value names: None the shipped set, ``bfcl[:stems]`` the
    pinned BFCL data (imported into the cache on first use), else a prompt folder. Raises
    LiveDataInvalid, or FetchError when the wheel cannot be had."""
    if data is None:
        return load_live(shipped.live_dir())
    stems = source_stems(data)
    if stems is None:
        return load_live(Path(data))
    return load_live(ensure_imported(), file_patterns(stems))


def wheel_dir() -> Path:
    """Where the wheel's members are extracted (``bfcl_eval/...`` below it)."""
    return cache_root() / "downloads" / f"bfcl-eval-{VERSION}"


def imported_dir() -> Path:
    """Where the imported live prompt files are kept (``data: bfcl``)."""
    return cache_root() / "data" / f"bfcl-eval-{VERSION}"


def fetch_bfcl() -> Path:
    """The folder holding the wheel's data and checker files, downloading them only if needed
    (raises :class:`harness.models.fetch.FetchError`, one line, when that fails)."""
    fetch(BFCL_EVAL, wheel_dir())
    return wheel_dir()


def checker_path() -> Path:
    """BFCL's ``ast_checker.py`` (whether or not it has been fetched yet)."""
    return wheel_dir() / CHECKER_FILES[0]


def _stamp() -> dict[str, object]:
    return {"wheel_sha256": BFCL_EVAL.sha256, "importer": IMPORTER_VERSION}


def _read_stamp() -> dict[str, object]:
    try:
        found = json.loads((imported_dir() / STAMP).read_text())
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def is_imported() -> bool:
    found = _read_stamp()
    return all(found.get(k) == v for k, v in _stamp().items())


def imported_counts() -> dict[str, tuple[int, int]]:
    """Per BFCL stem, (prompts imported, entries skipped), as the cached import recorded them."""
    counts = _read_stamp().get("counts")
    if not isinstance(counts, dict):
        return {}
    return {str(k): (int(v[0]), int(v[1])) for k, v in counts.items()}


def ensure_imported() -> Path:
    """The imported BFCL prompt folder, imported from the pinned wheel when missing or stale.
    Written under a temporary name and swapped in, so a stopped import leaves no half folder."""
    final = imported_dir()
    if is_imported():
        return final
    source = fetch_bfcl()
    final.parent.mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{final.name}.building-", dir=final.parent))
    try:
        imported = import_bfcl(source)
        write(imported, building)
        counts = {stem: list(pair) for stem, pair in imported.counts().items()}
        stamp = {**_stamp(), "counts": counts}
        (building / STAMP).write_text(json.dumps(stamp, sort_keys=True) + "\n")
        os.chmod(building, 0o755)
        swap_in(building, final)
    except BaseException:
        shutil.rmtree(building, ignore_errors=True)
        raise
    return final
