"""A fake backend for testing the harness's own plumbing (never a stand-in for a real model).

A fake model is a directory with ``fake.json``::

    {"per_token_s": 0.001, "prefill_per_token_s": 0.0001, "on_load": null, "on_generate": null}

``on_load`` / ``on_generate`` make the worker misbehave on purpose: ``sigkill``, ``segfault``,
``abort``, ``exit``, ``memory_error``, ``error`` or ``hang``. An optional ``"probe"`` object says
what the probe-and-policy step sees (``FakeBackend.probe``): ``capabilities`` (default text and
chat), ``weights_bytes``, ``problems`` as ``[code, message]`` pairs, ``context_length`` and
``text`` (decoder dimensions, the fields of :class:`harness.probe.types.TextArch`).
"""

from __future__ import annotations

import json
import os
import signal
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from harness.backends.base import BackendCapability, BackendError, LoadInfo, weights_bytes
from harness.probe.types import (
    Capability,
    Finding,
    Library,
    Probe,
    ReasonCode,
    TextArch,
    WeightFormat,
)

VOCAB = 256
EOS = 0


def misbehave(kind: str | None) -> None:
    """Do the requested kind of damage to the current process."""
    if not kind:
        return
    if kind == "sigkill":
        os.kill(os.getpid(), signal.SIGKILL)
    elif kind == "segfault":
        os.kill(os.getpid(), signal.SIGSEGV)
    elif kind == "abort":
        os.abort()
    elif kind == "exit":
        os._exit(3)
    elif kind == "memory_error":
        raise MemoryError("fake backend: out of memory on purpose")
    elif kind == "error":
        raise RuntimeError("fake backend: failure on purpose")
    elif kind == "hang":
        while True:
            time.sleep(3600)
    else:
        raise BackendError(f"fake backend: unknown behaviour '{kind}'")


class FakeModel:
    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = config

    @property
    def eos_token_ids(self) -> frozenset[int]:
        return frozenset({EOS})

    def encode(self, text: str) -> list[int]:
        return [1 + b % (VOCAB - 1) for b in text.encode()]

    def decode(self, tokens: Sequence[int]) -> str:
        return bytes(t % 256 for t in tokens).decode("latin-1")

    def chat_tokens(
        self, messages: Sequence[Mapping[str, Any]], *, tools: Sequence[Any] | None = None
    ) -> list[int]:
        return self.encode("".join(f"<{m['role']}>{m.get('content', '')}" for m in messages))

    def vocab_size(self) -> int:
        return VOCAB

    def stream_tokens(
        self,
        prompt: Sequence[int],
        *,
        max_tokens: int,
        ignore_eos: bool = True,
        temperature: float = 0.0,
        seed: int | None = None,
    ) -> Iterator[int]:
        misbehave(self.config.get("on_generate"))
        time.sleep(float(self.config.get("prefill_per_token_s", 0.0)) * len(prompt))
        per_token = float(self.config.get("per_token_s", 0.0))
        for i in range(max_tokens):
            if i:
                time.sleep(per_token)
            yield 1 + (sum(prompt[-4:]) + i) % (VOCAB - 1)


class FakeBackend:
    """Text generation only: no prompt cache, no tool parsing (those cases are skipped)."""

    name = "fake"
    capabilities = frozenset({BackendCapability.TEXT_GENERATION})

    def load(self, path: Path) -> tuple[FakeModel, LoadInfo]:
        start = time.perf_counter()
        config_path = path / "fake.json"
        try:
            config = json.loads(config_path.read_text())
        except (OSError, ValueError) as exc:
            raise BackendError(f"fake backend: cannot read {config_path}: {exc}") from None
        misbehave(config.get("on_load"))
        info = LoadInfo(
            load_s=time.perf_counter() - start,
            weights_bytes=weights_bytes(path),
            device="none (fake backend)",
        )
        return FakeModel(config), info

    def probe(self, path: Path) -> Probe:
        """What ``fake.json`` declares under ``"probe"``; ProbeError when it cannot be read."""
        try:
            config = json.loads((path / "fake.json").read_text())
            declared = dict(config.get("probe") or {})
        except (OSError, ValueError, TypeError, AttributeError) as exc:
            from harness.probe.probe import ProbeError  # costly: a worker never probes

            raise ProbeError(f"{path}: not a fake model ({exc})") from None
        text = declared.get("text")
        return Probe(
            path=str(path),
            format=WeightFormat.NONE,
            model_type="fake",
            architectures=(),
            capabilities=frozenset(
                Capability(c) for c in declared.get("capabilities", ("text", "chat"))
            ),
            backend=Library.NONE,  # not a library backend: the runner vouches for it
            weights_bytes=declared.get("weights_bytes"),
            dtype="F32",
            compute_dtype="F32",
            context_length=declared.get("context_length"),
            text=TextArch(**{**text, "layer_kinds": tuple(text["layer_kinds"])}) if text else None,
            problems=tuple(
                Finding(ReasonCode(code), message) for code, message in declared.get("problems", ())
            ),
        )


def write_fake_model(path: Path, **config: Any) -> Path:
    """Create a fake model directory (used by tests and examples)."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "fake.json").write_text(json.dumps(config))
    return path


BACKEND = FakeBackend()
