"""Model sources the spec tests select from and resolve: a hub-style cache, model copies."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import struct
from pathlib import Path


def commit_hash(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def hub_repo(
    cache: Path,
    repo_id: str,
    source: Path,
    *,
    commit: str | None = None,
    refs: tuple[str, ...] = ("main",),
) -> Path:
    """Write ``source`` into ``cache`` as huggingface_hub does: files in ``blobs/<sha256>``,
    relative links to them in ``snapshots/<commit>/``, ``refs/<ref>`` holding the commit.
    Returns the snapshot directory. A file over :data:`COPIED_BYTES` (a big model's sparse
    weights) is hard-linked, not copied, and named by the hash of its size and first bytes: it
    stays sparse and is never read whole."""
    commit = commit or commit_hash(repo_id)
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    snapshot = repo / "snapshots" / commit
    snapshot.mkdir(parents=True)
    (repo / "blobs").mkdir(exist_ok=True)
    for file in sorted(p for p in source.rglob("*") if p.is_file()):
        if file.stat().st_size > COPIED_BYTES:
            blob = repo / "blobs" / _head_hash(file)
            if not blob.exists():
                os.link(file, blob)
        else:
            data = file.read_bytes()
            blob = repo / "blobs" / hashlib.sha256(data).hexdigest()
            blob.write_bytes(data)
        link = snapshot / file.relative_to(source)
        link.parent.mkdir(parents=True, exist_ok=True)
        up = Path(*([".."] * (len(link.relative_to(repo).parts) - 1)))
        link.symlink_to(up / "blobs" / blob.name)
    for ref in refs:
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(commit)
    return snapshot


COPIED_BYTES = 1 << 26  # 64 MiB: the tiny models' files are copied and hashed whole


def _head_hash(file: Path) -> str:
    with file.open("rb") as f:
        head = f.read(1 << 20)
    return hashlib.sha256(file.stat().st_size.to_bytes(8, "little") + head).hexdigest()


def copy_model(source: Path, dest: Path, *, chat: bool = True) -> Path:
    """A copy of a model directory; ``chat=False`` drops its chat template."""
    shutil.copytree(source, dest)
    if not chat:
        (dest / "chat_template.jinja").unlink(missing_ok=True)
        config = dest / "tokenizer_config.json"
        data = json.loads(config.read_text())
        data.pop("chat_template", None)
        config.write_text(json.dumps(data))
    return dest


def big_model(source: Path, dest: Path, weights_bytes: int) -> Path:
    """``source``'s config and tokenizer with one sparse float32 tensor of ``weights_bytes``
    (its header says so; the file takes no disk space)."""
    shutil.copytree(source, dest, ignore=shutil.ignore_patterns("*.safetensors"))
    count = weights_bytes // 4
    header = json.dumps(
        {
            "model.embed_tokens.weight": {
                "dtype": "F32",
                "shape": [count],
                "data_offsets": [0, count * 4],
            }
        }
    ).encode()
    with (dest / "model.safetensors").open("wb") as f:
        f.write(struct.pack("<Q", len(header)) + header)
        f.truncate(8 + len(header) + count * 4)
    return dest
