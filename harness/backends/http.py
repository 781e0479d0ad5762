"""The ``http`` backend: a model behind an OpenAI-compatible server.

``serve:`` models: the worker starts the engine's server on a free loopback port (its log in the
run's logs), waits for health, and stops it when the worker ends; ``url:`` models: a server that
is already running (its API key read from the environment variable the suite names). Either way
the loaded model is a :class:`ServedModel`: the endpoint, the local tokenizer when the model's
files are here (to count the tokens in each streamed chunk), and what ``/v1/models`` reported.
Its server memory is the server process's: the one started, or for a ``url:`` on this machine
the one found listening on its port (:mod:`harness.backends.server_memory`); for a remote
server it is unavailable, with the reason, and never the worker's.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from harness.backends.base import (
    BackendCapability,
    BackendError,
    LoadInfo,
    MemoryUnavailable,
    ServerMemory,
    ServerUnreachable,
    SpeechChunk,
)
from harness.backends.chat_templating import ChatTemplating
from harness.backends.openai_client import Endpoint, Reply, get, sync_client
from harness.backends.served_template import served_renderer
from harness.backends.server_engines import Draft, ServerEngine, launch
from harness.backends.server_memory import (
    Listener,
    find_listener,
    listener_memory,
    process_memory,
)
from harness.backends.server_process import ServerProcess, free_port
from harness.core.types import ServerRef

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray


def tokenizer_file(path: Path | None) -> Path | None:
    """The ``tokenizer.json`` of a model folder (or beside a model file); None when none."""
    if path is None:
        return None
    folder = path if path.is_dir() else path.parent
    file = folder / "tokenizer.json"
    return file if file.is_file() else None


def local_tokenizer(path: Path | None) -> Callable[[str], int] | None:
    """A token counter from the model folder's ``tokenizer.json`` (None when there is none)."""
    file = tokenizer_file(path)
    if file is None:
        return None
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(file))

    def count(text: str) -> int:
        return len(tokenizer.encode(text, add_special_tokens=False).ids)

    return count


def engine_version(engine: ServerEngine, argv0: str) -> str:
    """``mlx_lm.server 0.32.2``, ``llama-server version: 7123 (abc)``: for the record."""
    if engine is ServerEngine.LLAMA_SERVER:
        try:
            done = subprocess.run(
                [argv0, "--version"], capture_output=True, text=True, timeout=20, check=False
            )
        except (OSError, subprocess.TimeoutExpired):
            return engine.label
        lines = [ln for ln in (done.stdout + done.stderr).splitlines() if "version" in ln]
        return f"{engine.label} {lines[0].strip()}" if lines else engine.label
    from importlib.metadata import PackageNotFoundError, version

    package = {"mlx_lm": "mlx-lm", "mlx_audio": "mlx-audio"}.get(engine.value, "mlx-vlm")
    try:
        return f"{engine.label} {version(package)}"
    except PackageNotFoundError:
        return engine.label


@dataclass
class ServedModel:
    """What scenarios get for an ``http`` model (:class:`harness.backends.base.Served`)."""

    endpoint: Endpoint
    engine: str
    token_counter: Callable[[str], int] | None
    server_models: tuple[str, ...] = ()
    process: ServerProcess | None = field(default=None, repr=False)
    listener: Listener | None = None  # url: the local process found on its port (or why not)
    # the server's chat template rendered here (ServesChatTemplate); None: not known here
    chat_renderer: ChatTemplating | None = field(default=None, repr=False)

    sample_rate: ClassVar[int] = 16000  # Hz of the WAV uploads (Transcribing)
    streams: ClassVar[bool] = False  # speech comes back whole (Synthesizing)

    def transcribe(self, audio: NDArray[np.float32]) -> str:
        from harness.backends import http_audio

        return http_audio.transcribe(self.endpoint, audio, self.sample_rate, log_tail=self._tail)

    def synthesize(self, text: str) -> Iterator[SpeechChunk]:
        from harness.backends import http_audio

        yield http_audio.synthesize(self.endpoint, text, log_tail=self._tail)

    def _tail(self) -> str:
        from harness.backends.server_process import log_tail

        return log_tail(self.process.log_path) if self.process is not None else ""

    def server_memory(self) -> ServerMemory | MemoryUnavailable:
        """The started server's memory, else the found listener's; why not, never the
        worker's."""
        if self.process is not None:
            if not self.process.alive():
                return MemoryUnavailable(
                    f"the server process (pid {self.process.pid}) had exited when its memory "
                    "was read"
                )
            return process_memory(self.process.pid)
        if self.listener is not None:
            return listener_memory(self.listener)
        return MemoryUnavailable("no server process known for this endpoint")

    def close(self) -> None:
        if self.process is not None:
            self.process.stop()


def listed_models(endpoint: Endpoint, timeout_s: float = 30.0) -> tuple[str, ...]:
    """The ids ``/v1/models`` lists (empty when it answers with none or not at all)."""
    with sync_client(timeout_s) as client:
        return models_in(get(client, endpoint, "/v1/models"))


def models_in(reply: Reply) -> tuple[str, ...]:
    """The model ids in a ``/v1/models`` answer (empty when it lists none)."""
    data = reply.body.get("data") if isinstance(reply.body, dict) else None
    if not isinstance(data, list):
        return ()
    return tuple(str(m["id"]) for m in data if isinstance(m, dict) and "id" in m)


class HttpBackend:
    name = "http"
    capabilities: ClassVar[frozenset[BackendCapability]] = frozenset(
        {BackendCapability.HTTP, BackendCapability.AUDIO_IN, BackendCapability.AUDIO_OUT}
    )  # audio: the speech endpoints (a text-only server answers them with one error line)

    def load(self, path: Path) -> tuple[object, LoadInfo]:
        raise BackendError(
            "backend http serves models named with serve: or url: in the suite (e.g. "
            "serve: mlx_lm); this one has neither"
        )

    def load_server(
        self, path: Path | None, server: ServerRef, log_dir: Path
    ) -> tuple[object, LoadInfo]:
        start = time.perf_counter()
        if server.url is not None:
            return self._connect(path, server, start)
        if server.engine is None or path is None:
            raise BackendError("a serve: model needs a local model (path:, embedded: or hub:)")
        engine = ServerEngine(server.engine)
        if server.draft_problem is not None:
            raise BackendError(server.draft_problem)
        draft = Draft(Path(server.draft), server.draft_tokens) if server.draft else None
        port = free_port()
        launched = launch(
            engine, path, port, server.args, log_dir / "server-state", dict(server.env), draft
        )
        log = log_dir / f"server-{engine.value}-{port}.log"
        process = ServerProcess(launched.command, log)
        try:
            process.wait_healthy(server.startup_timeout_s)
            request_model = server.request_model or launched.request_model
            endpoint = Endpoint(f"http://127.0.0.1:{port}", model=request_model)
            models = listed_models(endpoint)
        except BaseException:
            process.stop()
            raise
        renderer = served_renderer(path, engine.value, server.args)
        model = ServedModel(
            endpoint, engine.label, local_tokenizer(path), models, process, chat_renderer=renderer
        )
        info = LoadInfo(
            load_s=time.perf_counter() - start,
            weights_bytes=_file_bytes(launched.served_file),
            device=f"http:{engine.value}",
            details={
                "server": engine_version(engine, launched.command.argv[0]),
                "server_models": list(models),
                "served_file": str(launched.served_file),
                "server_log": str(log),
                "server_pid": process.pid,
                "server_engine": engine.value,
                "server_args": list(server.args),
                **({"server_draft": str(draft.path)} if draft is not None else {}),
            },
        )
        return model, info

    def _connect(
        self, path: Path | None, server: ServerRef, start: float
    ) -> tuple[object, LoadInfo]:
        assert server.url is not None
        key = None
        if server.api_key_env is not None:
            key = os.environ.get(server.api_key_env)
            if not key:
                raise BackendError(
                    f"environment variable {server.api_key_env} (the suite's api_key_env) is "
                    "not set: export it with the server's API key"
                )
        endpoint = Endpoint(server.url, api_key=key, model=server.request_model)
        with sync_client(30.0) as client:
            reply = get(client, endpoint, "/v1/models")
        if reply.error is not None:
            raise ServerUnreachable(f"server {server.url} cannot be reached: {reply.error}")
        if reply.status in (401, 403):
            raise BackendError(
                f"{server.url}/v1/models refused the API key (HTTP {reply.status}); set "
                f"{server.api_key_env or 'api_key_env'}"
            )
        models = models_in(reply)  # the answer already read above
        if endpoint.model is None and len(models) == 1:  # name what the server serves
            endpoint = Endpoint(endpoint.base_url, api_key=key, model=models[0])
        listener = find_listener(server.url)
        model = ServedModel(
            endpoint,
            "url",
            local_tokenizer(path),
            models,
            listener=listener,
            chat_renderer=served_renderer(path, None),
        )
        details: dict[str, Any] = {"server": server.url, "server_models": list(models)}
        if listener.found:
            details["server_pid"] = list(listener.pids)
        else:
            details["server_memory"] = f"n/a: {listener.why_not}"
        return model, LoadInfo(time.perf_counter() - start, 0, "http:url", details)


def _file_bytes(path: Path) -> int:
    from harness.backends.base import weights_bytes

    if path.is_file():
        return path.stat().st_size
    return weights_bytes(path)


BACKEND = HttpBackend()
