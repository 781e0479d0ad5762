"""How each server engine the harness can start is run: its command line for a model, its health
URL, and the ``model`` name its requests carry.

mlx_lm.server, mlx_vlm.server and mlx_audio.server are this interpreter's modules (mlx-audio's
loads models per request: the ``model`` its requests name is the folder's path); llama.cpp's
``llama-server`` is the binary the set-up built into the harness cache
(``harness.models.llama_server``) and serves a GGUF file: the model's own, or, for an embedded
model converted from a GGUF, that source file.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from harness.backends.base import BackendError
from harness.backends.server_process import ServerCommand, loopback_url, python_module_argv


class ServerEngine(str, Enum):
    MLX_LM = "mlx_lm"  # mlx_lm.server
    MLX_VLM = "mlx_vlm"  # mlx_vlm.server
    LLAMA_SERVER = "llama_server"  # llama.cpp's llama-server, on a GGUF
    MLX_AUDIO = "mlx_audio"  # mlx_audio.server (speech: transcriptions, speech)

    @property
    def label(self) -> str:
        return {
            "mlx_lm": "mlx_lm.server",
            "mlx_vlm": "mlx_vlm.server",
            "mlx_audio": "mlx_audio.server",
        }.get(self.value, "llama-server")


@dataclass(frozen=True)
class EngineLaunch:
    command: ServerCommand
    request_model: str | None  # the ``model`` requests name (None: left out)
    served_file: Path  # what the engine loads (a folder, or the GGUF file)


def gguf_of(path: Path) -> Path:
    """The GGUF file llama-server serves for ``path``: the file itself, the one ``.gguf`` in a
    folder, or the source GGUF an embedded model was converted from."""
    if path.is_file() and path.suffix == ".gguf":
        return path
    if path.is_dir():
        found = sorted(path.glob("*.gguf"))
        if len(found) == 1:
            return found[0]
        from harness.models.real import source_gguf_of_folder

        source = source_gguf_of_folder(path)
        if source is not None:
            return source
    raise BackendError(
        f"llama-server needs a GGUF file; {path} is neither one nor a folder holding exactly one "
        "nor an embedded model converted from one (give path: FILE.gguf)"
    )


def llama_server_binary() -> Path:
    from harness.models.llama_server import find_llama_server

    found = find_llama_server()
    if found is None:
        raise BackendError(
            "llama-server is not built: run `make llama-server` (or set MLX_HARNESS_LLAMA_SERVER "
            "to a llama-server binary)"
        )
    return found


@dataclass(frozen=True)
class Draft:
    """A draft model for speculative decoding (``serve: {draft: ...}``): its folder or file,
    and the tokens it proposes a round (None: the engine's default)."""

    path: Path
    tokens: int | None = None


def draft_args(engine: ServerEngine, draft: Draft) -> tuple[str, ...]:
    """The flags that give ``engine`` the draft: mlx_lm.server ``--draft-model DIR
    [--num-draft-tokens N]``; llama-server ``-md FILE.gguf --spec-type draft-simple
    [--spec-draft-n-max N]`` (without ``--spec-type`` llama-server loads the draft and never
    uses it)."""
    if engine is ServerEngine.MLX_LM:
        argv: tuple[str, ...] = ("--draft-model", str(draft.path))
        count = ("--num-draft-tokens",)
    elif engine is ServerEngine.LLAMA_SERVER:
        argv = ("-md", str(gguf_of(draft.path)), "--spec-type", "draft-simple")
        count = ("--spec-draft-n-max",)
    else:
        raise BackendError(f"{engine.label} takes no draft model (mlx_lm and llama_server do)")
    return argv if draft.tokens is None else (*argv, *count, str(draft.tokens))


def launch(
    engine: ServerEngine,
    path: Path,
    port: int,
    args: Sequence[str],
    state_dir: Path,
    extra_env: Mapping[str, str] | None = None,
    draft: Draft | None = None,
) -> EngineLaunch:
    """The command that serves ``path`` with ``engine`` on ``127.0.0.1:port`` (``extra_env``:
    the suite's environment for it, over the harness's own; ``draft``: a draft model, its
    flags before the suite's ``args``)."""
    if draft is not None:
        args = (*draft_args(engine, draft), *args)
    found = _launch(engine, path, port, args, state_dir)
    if not extra_env:
        return found
    command = dataclasses.replace(found.command, env={**found.command.env, **extra_env})
    return dataclasses.replace(found, command=command)


def _launch(
    engine: ServerEngine, path: Path, port: int, args: Sequence[str], state_dir: Path
) -> EngineLaunch:
    host = ["--host", "127.0.0.1", "--port", str(port)]
    health = loopback_url(port, "/health")
    if engine is ServerEngine.LLAMA_SERVER:
        gguf = gguf_of(path)
        binary = llama_server_binary()
        threads = str(os.cpu_count() or 1)
        argv = (str(binary), "-m", str(gguf), *host, "-t", threads, *args)
        env = {"LD_LIBRARY_PATH": str(binary.parent)}
        return EngineLaunch(ServerCommand(argv, health, env, engine.label), None, gguf)
    hub = state_dir / "hf-cache"  # mlx_lm.server's /v1/models lists it and fails without one
    hub.mkdir(parents=True, exist_ok=True)
    env = {"HF_HUB_CACHE": str(hub), "HF_HUB_OFFLINE": "1"}
    if engine is ServerEngine.MLX_AUDIO:  # loads the model a request names, at that request
        argv = python_module_argv("mlx_audio.server", [*host, *args])
        ready = loopback_url(port, "/v1/models")
        return EngineLaunch(ServerCommand(argv, ready, env, engine.label), str(path), path)
    module = "mlx_lm.server" if engine is ServerEngine.MLX_LM else "mlx_vlm.server"
    argv = python_module_argv(module, ["--model", str(path), *host, *args])
    return EngineLaunch(ServerCommand(argv, health, env, engine.label), str(path), path)
