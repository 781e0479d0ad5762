"""Release facts recorded from PyPI (PEP 691 ``upload-time``, PEP 700; mlx-lm's Requires-Dist),
November 2026: what the companion choice is tested against, without the network."""

from __future__ import annotations

from datetime import datetime

from packaging.version import Version

from harness.runner.pin_companions import Release

# package -> (version, first upload, yanked)
UPLOADS: dict[str, list[tuple[str, str, bool]]] = {
    "mlx-lm": [
        ("0.27.1", "2025-09-04T16:06:54Z", False),
        ("0.31.0", "2026-03-07T03:49:27Z", True),
        ("0.31.1", "2026-03-11T02:02:54Z", False),
        ("0.31.3", "2026-04-22T07:37:25Z", False),
        ("0.32.2", "2026-10-16T02:49:33Z", False),
    ],
    "mlx": [
        ("0.29.0", "2025-08-29T17:13:45Z", False),
        ("0.29.1", "2025-09-12T00:17:09Z", False),
        ("0.30.6", "2026-02-06T03:45:00Z", False),
        ("0.31.0", "2026-02-27T23:49:11Z", False),
        ("0.31.1", "2026-03-12T02:15:54Z", False),
        ("0.31.2", "2026-04-22T03:14:21Z", False),
        ("0.32.4", "2026-10-14T21:15:37Z", False),
    ],
    "mlx-cpu": [
        ("0.29.0", "2025-08-29T17:21:05Z", False),
        ("0.31.0", "2026-02-27T23:49:09Z", False),
        ("0.31.2", "2026-04-22T01:12:15Z", False),
        ("0.32.4", "2026-10-14T21:14:42Z", False),
    ],
    "transformers": [
        ("4.56.0", "2025-08-29T18:23:33Z", False),
        ("4.56.1", "2025-09-04T20:47:04Z", False),
        ("4.57.0", "2025-10-03T17:03:43Z", True),
        ("5.3.0", "2026-03-04T17:41:42Z", False),
        ("5.5.4", "2026-04-13T16:55:51Z", False),
        ("5.20.0", "2026-10-15T18:01:01Z", False),
        ("5.24.0", "2026-11-21T12:24:29Z", False),
    ],
}

# mlx-lm version -> its Requires-Dist (the lines naming mlx and transformers)
REQUIRES: dict[str, list[str]] = {
    "0.27.1": ["mlx>=0.29.0", "numpy", "transformers>=4.39.3"],
    "0.31.0": [
        'mlx>=0.30.4; platform_system == "Darwin"',
        "transformers>=5.0.0",
        'mlx[cpu]>=0.30.4; extra == "cpu"',
    ],
    "0.31.1": [
        'mlx>=0.30.4; platform_system == "Darwin"',
        "transformers>=5.0.0",
        'mlx[cuda13]>=0.30.4; extra == "cuda13"',
        'mlx[cpu]>=0.30.4; extra == "cpu"',
    ],
    "0.31.3": [
        'mlx>=0.31.2; platform_system == "Darwin"',
        "transformers>=5.0.0",
        'mlx[cpu]>=0.31.2; extra == "cpu"',
    ],
    "0.32.2": [
        'mlx>=0.32.2; platform_system == "Darwin"',
        "transformers>=5.7.0",
        'mlx[cpu]>=0.32.2; extra == "cpu"',
    ],
}


def releases(package: str, index_url: str | None = None) -> list[Release]:
    """The recorded releases of ``package`` (``fetch_releases``'s signature)."""
    return [
        Release(Version(v), datetime.fromisoformat(t.replace("Z", "+00:00")), yanked)
        for v, t, yanked in UPLOADS.get(package, [])
    ]


def requires(package: str, version: Version, index_url: str | None = None) -> list[str]:
    """The recorded Requires-Dist of an mlx-lm release (``fetch_requires``'s signature)."""
    return REQUIRES[str(version)]


def all_releases() -> dict[str, list[Release]]:
    return {p: releases(p) for p in UPLOADS}
