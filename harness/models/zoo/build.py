"""Generate a zoo model directory: random weights (seeded), real tokenizer, family template."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from harness.models.zoo.families import FAMILIES, Family
from harness.models.zoo.tokenizer import train_tokenizer, write_tokenizer_config

MARKER = "harness-model.json"
ZOO_VERSION = 1


def build(family: Family, out_dir: Path, *, seed: int = 0) -> Path:
    """Write ``family`` as an mlx-lm model directory at ``out_dir`` (atomically) and return it."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}-", dir=out_dir.parent))
    try:
        _write_model(family, tmp, seed=seed)
        if out_dir.exists():
            shutil.rmtree(out_dir)
        tmp.rename(out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    return out_dir


def is_current(out_dir: Path, family: Family, *, seed: int = 0) -> bool:
    """True when ``out_dir`` holds this family built by this zoo version and seed."""
    marker = out_dir / MARKER
    if not marker.is_file():
        return False
    try:
        data = json.loads(marker.read_text())
    except (OSError, ValueError):
        return False
    return bool(data == _marker(family, seed))


def _marker(family: Family, seed: int) -> dict[str, object]:
    return {"source": f"zoo/{family.name}", "zoo_version": ZOO_VERSION, "seed": seed}


def _write_model(family: Family, out_dir: Path, *, seed: int) -> None:
    import mlx.core as mx
    from mlx_lm.utils import _get_classes, save_model

    config = dict(family.config)
    train_tokenizer(out_dir, special_tokens=family.special_tokens, vocab_size=config["vocab_size"])
    write_tokenizer_config(
        out_dir,
        chat_template=family.chat_template,
        bos_token=family.bos_token,
        eos_token=family.eos_token,
    )
    mx.random.seed(seed)
    model_cls, args_cls = _get_classes(config)
    model = model_cls(args_cls.from_dict(config))
    mx.eval(model.parameters())
    save_model(out_dir, model)
    (out_dir / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    (out_dir / MARKER).write_text(json.dumps(_marker(family, seed), indent=2) + "\n")


def family_names() -> list[str]:
    """Names of all zoo families, in table order."""
    return list(FAMILIES)
