"""Debian's Chromium, headless, for the browser tests: the DOM after scripts ran, a screenshot.

Each call starts a fresh browser with an empty profile and the flags this network needs (no
background networking, no component updates, no sync), so the only requests it makes are the
page's own. ``--virtual-time-budget`` lets timers, meta refreshes and late loads happen before
the DOM is taken, without waiting in real time.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

NAMES = ("chromium", "chromium-browser")
FLAGS = (
    "--headless",
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox cannot start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--mute-audio",
)
TIMEOUT_S = 60.0


class ChromiumError(Exception):
    """Chromium did not run to the end; the message is one line with the tail of its stderr."""


def find_chromium() -> str | None:
    """The path of a Chromium binary on PATH, or None."""
    return next((path for name in NAMES if (path := shutil.which(name))), None)


def is_ci() -> bool:
    """CI sets ``CI=true`` (GitHub Actions, GitLab, and this project's own runner)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


@dataclass(frozen=True)
class Chromium:
    binary: str
    virtual_time_ms: int = 3000

    def version(self) -> str:
        return self._run("--version", profile=False).strip()

    def dump_dom(self, url: str) -> str:
        """The page's DOM, serialized, once it loaded and its virtual time budget ran out."""
        return self._run(f"--virtual-time-budget={self.virtual_time_ms}", "--dump-dom", url)

    def screenshot(self, url: str, png: Path, *, width: int = 1400, height: int = 3000) -> Path:
        self._run(
            f"--virtual-time-budget={self.virtual_time_ms}",
            f"--window-size={width},{height}",
            "--hide-scrollbars",
            f"--screenshot={png}",
            url,
        )
        if not png.is_file():
            raise ChromiumError(f"{self.binary}: wrote no screenshot to {png}")
        return png

    def _run(self, *args: str, profile: bool = True) -> str:
        with tempfile.TemporaryDirectory(prefix="chromium-profile-") as user_data:
            command = [self.binary, *FLAGS, *args]
            if profile:
                command.insert(1, f"--user-data-dir={user_data}")
            try:
                done = subprocess.run(
                    command, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
                )
            except subprocess.TimeoutExpired:
                raise ChromiumError(f"{self.binary}: no answer within {TIMEOUT_S:.0f} s") from None
        if done.returncode != 0:
            tail = " | ".join(done.stderr.strip().splitlines()[-3:])
            raise ChromiumError(f"{self.binary} exited {done.returncode}: {tail}")
        return done.stdout
