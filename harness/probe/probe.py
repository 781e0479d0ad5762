"""``probe_model``: everything the harness needs to know about a model before loading it.

A directory is read once into a :class:`~harness.probe.snapshot.Snapshot` (config.json,
generation_config.json, tokenizer and processor files, the chat template, the weights'
headers); ``probe_snapshot`` and every rule it applies are pure functions of that snapshot. A
``.gguf`` file (or a folder holding only GGUFs) is probed from its header. Never imports mlx;
milliseconds per model (a GGUF with a large vocabulary takes a few hundred).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.probe.arch import context_length, text_arch
from harness.probe.files import ProbeFileError
from harness.probe.gguf_probe import probe_gguf
from harness.probe.installed import Stack, detect_stack
from harness.probe.modality import detect
from harness.probe.quant import active_parameters, count, parse_quantization
from harness.probe.snapshot import Snapshot, read_snapshot
from harness.probe.tokenizer_files import tokenizer_findings
from harness.probe.toolrules import TokenizerView, tokenizer_facts, tokenizer_template, vocab_view
from harness.probe.types import Capability, Finding, Library, Probe, ReasonCode, WeightFormat
from harness.probe.weight_shapes import shape_findings
from harness.probe.weights import Weights, compute_dtype, dominant_dtype

GENERATION_KEYS = ("temperature", "top_p", "top_k", "min_p", "repetition_penalty", "max_new_tokens")


class ProbeError(Exception):
    """The path is not something to probe (missing, not a directory or .gguf); one line."""


def probe_model(path: Path | str, *, stack: Stack | None = None) -> Probe:
    """Probe a model directory (or a ``.gguf`` file). Pass one ``stack`` for many models."""
    path = Path(path)
    stack = stack if stack is not None else detect_stack()
    if path.is_file() and path.suffix == ".gguf":
        return probe_gguf(path, stack)
    if not path.exists():
        raise ProbeError(f"{path}: no such file or directory")
    if not path.is_dir():
        raise ProbeError(f"{path}: not a model directory or .gguf file")
    try:
        files = read_snapshot(path)
    except OSError as exc:
        raise ProbeError(f"{path}: cannot list ({exc.strerror or exc})") from None
    return probe_snapshot(files, stack)


def probe_snapshot(files: Snapshot, stack: Stack) -> Probe:
    """Probe a directory already read: a pure function of ``files`` and ``stack`` (a folder
    holding only GGUFs excepted: its model is the first GGUF's header, read here)."""
    problems: list[Finding] = []
    try:
        raw = files.load("config.json")
    except ProbeFileError as exc:
        raw = {}
        problems.append(Finding(ReasonCode.CORRUPT_MODEL, str(exc)))
    if raw is None:
        ggufs = files.ggufs
        if ggufs:
            return probe_gguf(ggufs[0], stack, extra=len(ggufs) - 1)
        if files.weights.format is WeightFormat.NONE:
            raise ProbeError(
                f"{files.path}: not a model directory (no config.json, weights or .gguf)"
            )
        problems.append(Finding(ReasonCode.CORRUPT_MODEL, "config.json: missing"))
    if raw is not None and not isinstance(raw, dict):
        problems.append(Finding(ReasonCode.CORRUPT_MODEL, "config.json: not a JSON object"))
    config: dict[str, Any] = raw if isinstance(raw, dict) else {}
    return _probe_directory(files, config, stack, problems)


def _probe_directory(
    files: Snapshot, config: dict[str, Any], stack: Stack, problems: list[Finding]
) -> Probe:
    path = files.path
    tok_config = files.read("tokenizer_config.json")
    tok_config = tok_config if isinstance(tok_config, dict) else {}
    template = chat_template(files)
    modality = detect(files, config, stack, chat=template is not None, name=model_name(path))
    caps = set(modality.capabilities)
    weights = files.weights_for(modules=Capability.EMBEDDINGS in caps)
    problems.extend(_weight_problems(weights))
    quant = parse_quantization(config)
    counts = count(weights.tensors, quant) if weights.tensors else None
    arch = text_arch(config)
    defaults = stack.lm.tokenizer_defaults(modality.support[0].module)
    facts = tokenizer_facts(
        TokenizerView(
            tokenizer_template(files.template, files.extra_templates, tok_config),
            vocab_view(
                files.vocab,
                tok_config,
                files.read("added_tokens.json"),
                files.read("special_tokens_map.json"),
            ),
        ),
        tok_config,
        defaults,
        stack.lm.tools,
    )
    if (
        facts.parser
        and modality.backend is Library.MLX_LM
        and stack.lm.installed
        and facts.parser not in stack.lm.tool_parsers
    ):
        problems.append(
            Finding(
                ReasonCode.RUNTIME_INCOMPATIBLE,
                f"tool parser {facts.parser!r} ({facts.parser_source}) is not in "
                f"mlx-lm {stack.lm.version}: loading its tokenizer would fail",
            )
        )
    renderer = tok_config.get("chat_template_type") or defaults.get("chat_template_type")
    if renderer and Capability.TEXT in caps:
        caps.add(Capability.CHAT)  # mlx-lm renders chats with mlx_lm.chat_templates.<renderer>
    if facts.parser and Capability.TEXT in caps:
        caps.add(Capability.TOOLS)
    if facts.thinking and Capability.TEXT in caps:
        caps.add(Capability.REASONING)
    if modality.backend in (Library.MLX_LM, Library.MLX_VLM):
        problems.extend(shape_findings(config, weights.tensors, quant))
    problems.extend(tokenizer_findings(files.names, tok_config, caps, modality.backend))
    generation = files.read("generation_config.json")
    return Probe(
        path=str(path),
        format=weights.format,
        model_type=str(config["model_type"]) if config.get("model_type") else None,
        architectures=tuple(str(a) for a in config.get("architectures") or ()),
        capabilities=frozenset(caps),
        backend=modality.backend,
        support=modality.support,
        quantization=quant,
        parameters=counts.parameters if counts else None,
        active_parameters=(
            active_parameters(counts, arch.num_experts, arch.experts_per_token)
            if counts and arch
            else None
        ),
        weights_bytes=counts.weights_bytes if counts else None,
        tower_weights_bytes=counts.tower_bytes if counts else 0,
        dtype=dominant_dtype(dict(counts.dtype_bytes)) if counts else None,
        compute_dtype=compute_dtype(weights.tensors),
        context_length=context_length(config),
        chat_template_sha256=_sha256(template),
        tool_parser=facts.parser,
        tool_parser_source=facts.parser_source,
        thinking=facts.thinking,
        text=arch,
        generation=_generation(generation),
        problems=tuple(problems),
        notes=_notes(config, stack, modality.backend.value, renderer),
    )


def chat_template(files: Snapshot) -> str | None:
    """The chat template as :func:`harness.runner.identity.chat_template` finds it (same hash):
    chat_template.jinja, else chat_template.json's, else tokenizer_config.json's (the default
    one of named templates)."""
    if files.template is not None:
        return files.template
    processor = files.read("chat_template.json")
    if isinstance(processor, Mapping) and isinstance(processor.get("chat_template"), str):
        return str(processor["chat_template"])
    config = files.read("tokenizer_config.json")
    value = config.get("chat_template") if isinstance(config, Mapping) else None
    if isinstance(value, list):  # named templates: the default one counts
        named = {t.get("name"): t.get("template") for t in value if isinstance(t, dict)}
        value = named.get("default")
    return value if isinstance(value, str) else None


def _weight_problems(weights: Weights) -> list[Finding]:
    found = [Finding(ReasonCode.CORRUPT_MODEL, p) for p in weights.problems]
    if weights.format is WeightFormat.NONE and not weights.problems:
        found.append(Finding(ReasonCode.MISSING_WEIGHTS, "no weight files (*.safetensors)"))
    elif weights.format is WeightFormat.PYTORCH:
        found.append(
            Finding(
                ReasonCode.RUNTIME_INCOMPATIBLE,
                "PyTorch weights only (.bin); convert to safetensors with mlx_lm.convert",
            )
        )
    elif weights.format is WeightFormat.GGUF:
        found.append(Finding(ReasonCode.NEEDS_CONVERSION, "GGUF beside config.json: import it"))
    return found


def _sha256(text: str | None) -> str | None:
    return hashlib.sha256(text.encode("utf-8")).hexdigest() if text is not None else None


def _generation(data: Any) -> Mapping[str, Any]:
    if not isinstance(data, Mapping):
        return MappingProxyType({})
    return MappingProxyType({k: data[k] for k in GENERATION_KEYS if k in data})


def _notes(config: Mapping[str, Any], stack: Stack, backend: str, renderer: Any) -> tuple[str, ...]:
    notes = []
    if renderer:
        notes.append(f"chat rendered by mlx_lm.chat_templates.{renderer}")
    if config.get("model_file"):
        notes.append(f"custom model code: config names model_file {config['model_file']!r}")
    if backend == "mlx_lm" and not stack.lm.tools.source.startswith("installed"):
        notes.append(f"tool-parser rules: {stack.lm.tools.source}")
    return tuple(notes)


def model_name(path: Path) -> str:
    """The repository name (``name`` of ``models--org--name`` in a Hugging Face cache path),
    else the folder's name; mlx-audio uses it as a hint when config.json has no model_type."""
    for part in reversed(path.parts):
        if part.startswith("models--"):
            return part.removeprefix("models--").split("--")[-1]
    return path.name
