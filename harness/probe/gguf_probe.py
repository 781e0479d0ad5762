"""Probe a GGUF file: its header (metadata and tensor directory) through the harness's reader.

mlx-lm has no GGUF loader; the harness imports llama-family and Gemma 3 GGUFs into mlx-lm
directories (``harness.models.gguf.import_gguf``). A supported file is routed to mlx-lm with a
``needs_conversion`` warning, any other architecture is runtime-incompatible.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from harness.models.gguf.archs import arch_spec
from harness.models.gguf.errors import GGUFImportError
from harness.models.gguf.reader import GGUFFile, read_gguf_directory
from harness.probe.arch import text_arch
from harness.probe.files import TensorHeader
from harness.probe.installed import Stack
from harness.probe.toolrules import LazyVocab, TokenizerView, tokenizer_facts
from harness.probe.types import (
    BackendSupport,
    Capability,
    Finding,
    Library,
    Probe,
    Quantization,
    ReasonCode,
    WeightFormat,
)
from harness.probe.weights import compute_dtype


def probe_gguf(path: Path, stack: Stack, *, extra: int = 0) -> Probe:
    """Probe one GGUF file (``extra``: how many more model GGUFs sat beside it)."""
    try:
        gguf, vocab_region = _read_header(path)
    except GGUFImportError as exc:
        return Probe(
            path=str(path),
            format=WeightFormat.GGUF,
            model_type=None,
            architectures=(),
            capabilities=frozenset(),
            backend=Library.NONE,
            problems=(Finding(ReasonCode.CORRUPT_MODEL, exc.problem),),
        )
    problems: list[Finding] = []
    config: dict[str, Any] = {}
    model_type = gguf.architecture or None
    try:
        spec = arch_spec(gguf)
        model_type = spec.model_type
        config = spec.build_config(gguf)
        problems.append(
            Finding(
                ReasonCode.NEEDS_CONVERSION,
                f"GGUF ({gguf.architecture}): mlx-lm loads it after `mlx-harness import gguf`",
            )
        )
    except GGUFImportError as exc:
        problems.append(Finding(ReasonCode.RUNTIME_INCOMPATIBLE, f"GGUF: {exc.problem}"))
    template = gguf.metadata.get("tokenizer.chat_template")
    template = template if isinstance(template, str) else None
    facts = tokenizer_facts(
        TokenizerView(template, LazyVocab((vocab_region,), gguf=True)),
        {},
        {},
        stack.lm.tools,
    )
    lm_module = stack.lm.module_for(model_type, ()) if config else None
    caps = {Capability.TEXT}
    if template is not None:
        caps.add(Capability.CHAT)
    if facts.parser:
        caps.add(Capability.TOOLS)
    if facts.thinking:
        caps.add(Capability.REASONING)
    params = sum(t.n_elements for t in gguf.tensors)
    nbytes = sum(t.nbytes for t in gguf.tensors if t.nbytes >= 0)
    context = gguf.metadata.get(f"{gguf.architecture}.context_length")
    notes = (f"{extra} more .gguf file(s) beside it were not probed",) if extra else ()
    return Probe(
        path=str(path),
        format=WeightFormat.GGUF,
        model_type=model_type,
        architectures=(gguf.architecture,) if gguf.architecture else (),
        capabilities=frozenset(caps),
        backend=Library.MLX_LM,
        support=(
            BackendSupport(Library.MLX_LM, stack.lm.installed, stack.lm.version, lm_module),
            BackendSupport(Library.MLX_VLM, stack.vlm.installed, stack.vlm.version, None),
            BackendSupport(Library.MLX_AUDIO, stack.audio.installed, stack.audio.version, None),
        ),
        quantization=_quantization(gguf, params, nbytes),
        parameters=params,
        weights_bytes=nbytes,
        dtype=None,
        compute_dtype=compute_dtype(
            tuple(TensorHeader(t.name, t.type_name, t.shape, t.nbytes) for t in gguf.tensors)
        ),
        context_length=int(context) if isinstance(context, int) else None,
        chat_template_sha256=_sha256(template),
        tool_parser=facts.parser,
        tool_parser_source=facts.parser_source,
        thinking=facts.thinking,
        text=text_arch(config) if config else None,
        problems=tuple(problems),
        notes=notes,
    )


def _read_header(path: Path) -> tuple[GGUFFile, bytes]:
    """The header with long arrays skipped (tensor directory kept), and the raw header bytes.

    The vocabulary is searched in the raw bytes (GGUF strings are length-prefixed), which is
    much faster than decoding 262k token strings.
    """
    gguf = read_gguf_directory(path)
    end = min((t.offset for t in gguf.tensors), default=gguf.file_size)
    try:
        with path.open("rb") as handle:
            region = handle.read(end)
    except OSError as exc:
        raise GGUFImportError(path, f"cannot read file ({exc})") from None
    return gguf, region


def _quantization(gguf: GGUFFile, params: int, nbytes: int) -> Quantization:
    types = Counter(t.type_name for t in gguf.tensors)
    return Quantization(
        method="gguf",
        bits=round(nbytes * 8 / params, 2) if params else None,
        tensor_types=dict(types),
    )


def _sha256(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None
