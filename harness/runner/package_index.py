"""The released versions of a package, from a package index or a folder of wheels.

An index is read through its simple API: PEP 691 JSON when it answers with it, else the PEP 503
HTML page (``python -m http.server`` over a folder ``simple/<name>/`` is one). A ``--find-links``
folder is listed directly. Pre-releases, dev releases and yanked files are left out; versions
come back sorted by :class:`packaging.version.Version`.
"""

from __future__ import annotations

from collections.abc import Iterable
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlparse

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

PYPI_SIMPLE = "https://pypi.org/simple"
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
TIMEOUT_S = 30.0


class PackageIndexError(RuntimeError):
    """The index or folder could not be read; one line with the fix."""


def file_version(filename: str, package: str) -> Version | None:
    """The version a wheel or sdist file name carries, when it is ``package``'s."""
    name = unquote(filename.rsplit("/", 1)[-1].split("#", 1)[0])
    try:
        if name.endswith(".whl"):
            dist, version, _, _ = parse_wheel_filename(name)
        elif name.endswith((".tar.gz", ".zip")):
            dist, version = parse_sdist_filename(name)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None
    return version if dist == canonicalize_name(package) else None


def released(versions: Iterable[Version]) -> list[Version]:
    """Final releases only (no pre, dev), each once, sorted."""
    return sorted({v for v in versions if not (v.is_prerelease or v.is_devrelease)})


class _Anchors(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.files: list[tuple[str, bool]] = []  # (href, yanked)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            found = dict(attrs)
            href = found.get("href")
            if href:
                self.files.append((href, "data-yanked" in found))


def index_versions(package: str, index_url: str | None = None) -> list[Version]:
    """Released versions of ``package`` on the index (default PyPI)."""
    import httpx

    base = (index_url or PYPI_SIMPLE).rstrip("/")
    url = f"{base}/{canonicalize_name(package)}/"
    headers = {"Accept": f"{JSON_TYPE}, text/html;q=0.1"}
    try:
        reply = httpx.get(url, headers=headers, timeout=TIMEOUT_S, follow_redirects=True)
    except httpx.HTTPError as exc:
        raise PackageIndexError(
            f"{url}: cannot reach the index ({exc}); check --index-url"
        ) from None
    if reply.status_code == 404:
        raise PackageIndexError(f"{url}: the index has no package '{package}'; check the name")
    if reply.status_code >= 400:
        raise PackageIndexError(f"{url}: the index answered HTTP {reply.status_code}")
    files: list[tuple[str, bool]]
    if reply.headers.get("content-type", "").startswith(JSON_TYPE):
        try:
            data = reply.json()
            files = [(f["filename"], bool(f.get("yanked"))) for f in data["files"]]
        except (ValueError, KeyError, TypeError):
            raise PackageIndexError(f"{url}: not a PEP 691 project page") from None
    else:
        parser = _Anchors()
        parser.feed(reply.text)
        files = parser.files
    return released(
        v for name, yanked in files if not yanked and (v := file_version(name, package))
    )


def folder_versions(package: str, find_links: str) -> list[Version]:
    """Released versions of ``package`` among the files of a ``--find-links`` folder."""
    parsed = urlparse(find_links)
    folder = Path(unquote(parsed.path) if parsed.scheme == "file" else find_links)
    if not folder.is_dir():
        raise PackageIndexError(f"--find-links {find_links}: not a folder; give a folder of wheels")
    return released(v for p in folder.iterdir() if (v := file_version(p.name, package)))


def available_versions(
    package: str, *, index_url: str | None = None, find_links: str | None = None
) -> list[Version]:
    """From the folder when ``find_links`` is a local one, else from the index."""
    if find_links and urlparse(find_links).scheme in ("", "file"):
        return folder_versions(package, find_links)
    return index_versions(package, index_url)


def between(versions: list[Version], good: Version, bad: Version) -> list[Version]:
    """``good``, the releases strictly between, ``bad``: the path a bisection walks."""
    inner = [v for v in versions if good < v < bad]
    return [good, *inner, bad]
