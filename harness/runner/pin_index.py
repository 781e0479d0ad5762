"""What the package index says about releases: when each was uploaded, and one release's
``Requires-Dist`` (for :mod:`harness.runner.pin_companions`).

Release dates come from the index's PEP 691 JSON (``upload-time``, PEP 700: PyPI gives it);
``Requires-Dist`` from the release's PEP 658 metadata file when the index serves one, else from
the ``METADATA`` inside its wheel (an mlx-lm wheel is a few hundred KiB).
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence
from datetime import datetime
from email.parser import HeaderParser
from typing import Any

from packaging.utils import canonicalize_name
from packaging.version import Version

from harness.runner.package_index import JSON_TYPE, PYPI_SIMPLE, TIMEOUT_S, file_version
from harness.runner.pin_companions import Release


class IndexFactsError(RuntimeError):
    """The index could not say what is needed; one line."""


def _project(package: str, index_url: str | None) -> dict[str, Any]:
    import httpx

    url = f"{(index_url or PYPI_SIMPLE).rstrip('/')}/{canonicalize_name(package)}/"
    try:
        reply = httpx.get(url, headers={"Accept": JSON_TYPE}, timeout=TIMEOUT_S)
    except httpx.HTTPError as exc:
        raise IndexFactsError(f"{url}: cannot reach the index ({exc})") from None
    if reply.status_code >= 400 or not reply.headers.get("content-type", "").startswith(JSON_TYPE):
        raise IndexFactsError(f"{url}: no PEP 691 JSON page (HTTP {reply.status_code})")
    try:
        data: dict[str, Any] = reply.json()
    except ValueError:
        raise IndexFactsError(f"{url}: not a PEP 691 project page") from None
    data["_url"] = url
    return data


def releases_of(files: Sequence[dict[str, Any]], package: str) -> list[Release]:
    """One :class:`Release` per version of a PEP 691 file list: its earliest upload, yanked
    when every file of it is. Files without ``upload-time`` are left out."""
    first: dict[Version, datetime] = {}
    live: set[Version] = set()
    for entry in files:
        version = file_version(str(entry.get("filename", "")), package)
        stamp = entry.get("upload-time")
        if version is None or not isinstance(stamp, str):
            continue
        uploaded = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
        first[version] = min(first.get(version, uploaded), uploaded)
        if not entry.get("yanked"):
            live.add(version)
    return [Release(v, first[v], v not in live) for v in sorted(first)]


def fetch_releases(package: str, index_url: str | None = None) -> list[Release]:
    data = _project(package, index_url)
    found = releases_of(data.get("files") or [], package)
    if not found:
        raise IndexFactsError(f"{data['_url']}: no upload times (PEP 700); pin it yourself")
    return found


def requires_of(metadata: str) -> list[str]:
    """The ``Requires-Dist`` lines of a core metadata file."""
    return [str(v) for v in HeaderParser().parsestr(metadata).get_all("Requires-Dist") or []]


def fetch_requires(package: str, version: Version, index_url: str | None = None) -> list[str]:
    """``Requires-Dist`` of one release, from its PEP 658 metadata or its wheel."""
    import httpx

    data = _project(package, index_url)
    wheels = [
        f
        for f in data.get("files") or []
        if str(f.get("filename", "")).endswith(".whl")
        and file_version(str(f["filename"]), package) == version
    ]
    if not wheels:
        raise IndexFactsError(f"{data['_url']}: no wheel of {package} {version}")
    entry = wheels[0]
    url = httpx.URL(data["_url"]).join(str(entry["url"]))
    try:
        if entry.get("core-metadata") or entry.get("dist-info-metadata"):
            reply = httpx.get(f"{url}.metadata", timeout=TIMEOUT_S, follow_redirects=True)
            reply.raise_for_status()
            return requires_of(reply.text)
        reply = httpx.get(url, timeout=TIMEOUT_S, follow_redirects=True)
        reply.raise_for_status()
    except httpx.HTTPError as exc:
        raise IndexFactsError(f"{url}: no metadata of {package} {version} ({exc})") from None
    with zipfile.ZipFile(io.BytesIO(reply.content)) as wheel:
        name = next((n for n in wheel.namelist() if n.endswith(".dist-info/METADATA")), None)
        if name is None:
            raise IndexFactsError(f"{url}: a wheel without METADATA")
        return requires_of(wheel.read(name).decode("utf-8", errors="replace"))
