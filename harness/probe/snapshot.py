"""A model directory read once: what the probe's rules are pure functions of.

``read_snapshot`` lists the folder, parses every JSON file a rule looks at, reads the chat
template files and the vocabulary files' bytes (searched, never parsed: a 30 MB tokenizer.json
costs seconds to parse and milliseconds to search), and reads the weights' headers (never their
data). Each file is opened at most once; afterwards nothing touches the disk. A GGUF-only
folder is the exception: its model is the GGUF header, which :mod:`.gguf_probe` reads.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any

from harness.probe.files import ProbeFileError, load_json
from harness.probe.weights import (
    Weights,
    find_module_weights,
    find_weights,
    gguf_files,
    with_modules,
)

JSON_FILES = (
    "config.json",
    "tokenizer_config.json",
    "generation_config.json",
    "preprocessor_config.json",
    "processor_config.json",
    "chat_template.json",
    "added_tokens.json",
    "special_tokens_map.json",
)
TEMPLATE_FILE = "chat_template.jinja"
TEMPLATE_FOLDER = "additional_chat_templates"
VOCAB_FILES = ("tokenizer.json", "vocab.json")


def _frozen(mapping: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class Snapshot:
    """What one model directory holds, as far as the probe's rules are concerned."""

    path: Path
    names: frozenset[str]  # top-level files (symlinks to files count, as in a hub cache)
    folders: frozenset[str]  # top-level directories
    json: Mapping[str, Any]  # JSON_FILES present and parsed: name -> content
    json_errors: Mapping[str, str]  # JSON_FILES present but unreadable: name -> one line
    template: str | None  # chat_template.jinja
    extra_templates: Mapping[str, str]  # additional_chat_templates/*.jinja, by stem
    vocab: tuple[bytes, ...]  # tokenizer.json / vocab.json, as stored
    weights: Weights  # top-level weight files and their headers
    module_weights: Weights  # */*.safetensors (sentence-transformers modules)
    pooling: bool  # a sentence-transformers *_Pooling/config.json

    def read(self, name: str) -> Any:
        """A JSON file's content; None when it is missing or broken (optional files)."""
        return self.json.get(name)

    def load(self, name: str) -> Any:
        """A JSON file's content, None when missing; :class:`ProbeFileError` when broken."""
        if name in self.json_errors:
            raise ProbeFileError(self.json_errors[name])
        return self.json.get(name)

    @property
    def ggufs(self) -> tuple[Path, ...]:
        return gguf_files(self.path, self.names)

    def weights_for(self, *, modules: bool) -> Weights:
        """The weights the loader reads: with the module folders' for embedding models."""
        return with_modules(self.weights, self.module_weights) if modules else self.weights


def read_snapshot(path: Path) -> Snapshot:
    """Read the directory ``path`` once (it must exist and be a directory)."""
    names, folders = _listing(path)
    parsed: dict[str, Any] = {}
    errors: dict[str, str] = {}
    for name in JSON_FILES:
        if name in names:
            try:
                parsed[name] = load_json(path / name)
            except ProbeFileError as exc:
                errors[name] = str(exc)
    extra: dict[str, str] = {}
    if TEMPLATE_FOLDER in folders:
        for file in sorted((path / TEMPLATE_FOLDER).glob("*.jinja")):
            text = _text(file)
            if text is not None:
                extra[file.name.removesuffix(".jinja")] = text
    return Snapshot(
        path=path,
        names=names,
        folders=folders,
        json=_frozen(parsed),
        json_errors=_frozen(errors),
        template=_text(path / TEMPLATE_FILE) if TEMPLATE_FILE in names else None,
        extra_templates=_frozen(extra),
        vocab=tuple(b for n in VOCAB_FILES if n in names and (b := _bytes(path / n)) is not None),
        weights=find_weights(path, names),
        module_weights=find_module_weights(path, folders),
        pooling=any(
            f.endswith("_Pooling") and (path / f / "config.json").is_file() for f in folders
        ),
    )


def _listing(path: Path) -> tuple[frozenset[str], frozenset[str]]:
    files, folders = set(), set()
    with os.scandir(path) as entries:
        for entry in entries:
            try:
                if entry.is_file():
                    files.add(entry.name)
                elif entry.is_dir():
                    folders.add(entry.name)
            except OSError:  # a dangling or unreadable entry: not part of the model
                continue
    return frozenset(files), frozenset(folders)


def _bytes(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _text(path: Path) -> str | None:
    data = _bytes(path)
    return data.decode("utf-8", errors="replace") if data is not None else None
