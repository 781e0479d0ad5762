"""Where a model's context window is found: a server's own (llama-server's ``/props``
``default_generation_settings.n_ctx``, else its ``/slots`` ``n_ctx``), else the model files'
stated length (``max_position_embeddings`` or kin in ``config.json``, as the probe reads it).
mlx_lm.server has no window of its own: its window is the model's stated one."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from harness.backends.openai_client import Endpoint, get, sync_client
from harness.probe.arch import context_length
from harness.scenarios.context_limit.outcome import Window, WindowSource


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def window_of_props(body: Any) -> int | None:
    """``default_generation_settings.n_ctx`` of a ``/props`` answer."""
    settings = body.get("default_generation_settings") if isinstance(body, Mapping) else None
    return _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None


def window_of_slots(body: Any) -> int | None:
    """The smallest ``n_ctx`` of a ``/slots`` answer (a request gets one slot, any of them)."""
    if not isinstance(body, list):
        return None
    found = [_positive(s.get("n_ctx")) for s in body if isinstance(s, Mapping)]
    sizes = [n for n in found if n is not None]
    return min(sizes) if sizes else None


def server_window(endpoint: Endpoint, case_end: float | None = None) -> Window | None:
    """The server's own window, asked of ``/props`` then ``/slots`` (None: it tells neither)."""
    with sync_client(30.0) as client:
        props = get(client, endpoint, "/props", case_end=case_end)
        tokens = window_of_props(props.body) if props.ok else None
        if tokens is not None:
            return Window(tokens, WindowSource.SERVER, "/props default_generation_settings.n_ctx")
        slots = get(client, endpoint, "/slots", case_end=case_end)
        tokens = window_of_slots(slots.body) if slots.ok else None
    return Window(tokens, WindowSource.SERVER, "/slots n_ctx") if tokens is not None else None


def folder_window(path: Path | None) -> Window | None:
    """The window the model's ``config.json`` states (None: no folder, no config, no length)."""
    if path is None:
        return None
    config = (path if path.is_dir() else path.parent) / "config.json"
    try:
        data = json.loads(config.read_text())
    except (OSError, ValueError):
        return None
    tokens = context_length(data) if isinstance(data, Mapping) else None
    if tokens is None:
        return None
    return Window(tokens, WindowSource.MODEL_CONFIG, f"{config.name} of {path.name}")
