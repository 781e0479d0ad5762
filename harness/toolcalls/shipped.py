"""Where the shipped tool-call data lives (``suites/data/toolcalls``), and chat-template lookup.

The data sits next to the suites, not inside the package: an editable install (the way the
harness is run) finds it from here; other installs pass explicit paths.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

MODEL_TEMPLATE = "model"  # the model's own chat template
TEMPLATE_SUFFIX = ".jinja"


def data_root() -> Path:
    return Path(__file__).resolve().parents[2] / "suites" / "data" / "toolcalls"


def live_dir() -> Path:
    return data_root() / "live"


def templates_dir() -> Path:
    return data_root() / "templates"


def template_names() -> tuple[str, ...]:
    folder = templates_dir()
    if not folder.is_dir():
        return ()
    return tuple(sorted(p.stem for p in folder.glob(f"*{TEMPLATE_SUFFIX}")))


def template_path(name: str) -> Path:
    """A shipped template by name, or a ``.jinja`` file by path; ValueError (one line) else."""
    if name.endswith(TEMPLATE_SUFFIX):
        path = Path(name).expanduser()
        if not path.is_file():
            raise ValueError(f"chat template file {name!r} does not exist")
        return path
    path = templates_dir() / f"{name}{TEMPLATE_SUFFIX}"
    if not path.is_file():
        names = ", ".join((MODEL_TEMPLATE, *template_names()))
        raise ValueError(
            f"chat template {name!r} is not shipped; use one of: {names}, or a path to a "
            f"{TEMPLATE_SUFFIX} file"
        )
    return path


def sha256_text(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None
