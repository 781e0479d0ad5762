"""One mlx-vlm family, end to end: generate a tiny zoo model of it, load it through the harness's
``mlx_vlm`` backend, generate from a text turn and from an image turn, fill a prompt cache, and
name the tool parser mlx-vlm infers. :func:`try_vision_family` returns one
:class:`~harness.families.row.ArchRow` whose columns (:data:`COLUMNS`) each hold an
:class:`~harness.families.row.Outcome` with a one-line reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.core.exception_line import exception_line
from harness.families.row import ArchRow, Cell, OnEvent, Outcome, Stop, generated, step

COLUMNS = ("load", "text", "image", "cache", "tool")
PROMPT = "Describe the picture."
IMAGE_PX = 64
GEN_TOKENS = 2


def _hand_made(name: str) -> Any:
    """The hand-made zoo vision family of ``name`` (families_media), or None."""
    from harness.models.zoo.families import FAMILIES

    family = FAMILIES.get(name)
    return family if family is not None and family.backend == "mlx_vlm" else None


def _derive(name: str) -> str:
    """Why ``name`` gets no tiny model, or "" when the derivation builds it."""
    from harness.models.zoo.derive_vision import TrialStatus, try_family

    try:
        module = importlib.import_module(f"mlx_vlm.models.{name}")
    except Exception as exc:
        return f"importing it fails: {exception_line(exc, 160)}"
    if not dataclasses.is_dataclass(getattr(module, "VisionConfig", None)):
        return "no VisionConfig: a text-only or non-generative module"
    trial = try_family(name)
    if trial.status is TrialStatus.BUILT:
        return ""
    return trial.reason


def _generate(name: str, out_dir: Path) -> str:
    from harness.models.zoo.build import build
    from harness.models.zoo.derive_vision_family import recipe

    hand_made = _hand_made(name)
    if hand_made is None:
        why = _derive(name)
        if why:
            raise Stop(why)
    start = time.perf_counter()
    try:
        build(hand_made or recipe(name), out_dir)
    except Exception as exc:
        raise Stop(f"writing it fails: {exception_line(exc, 160)}") from None
    built_s = time.perf_counter() - start
    return f"{'derived' if hand_made is None else 'hand-made'}, built in {built_s:.1f} s"


def try_vision_family(name: str, *, on_event: OnEvent | None = None) -> ArchRow:
    """Generate, load and exercise a tiny ``name`` (a package of ``mlx_vlm.models``).

    ``on_event(column, None)`` as a column starts and ``on_event(column, cell)`` as it ends
    ("generated" first), so a parent watching from outside knows where a dead process was.
    """
    event = on_event or (lambda column, cell: None)
    with tempfile.TemporaryDirectory(prefix=f"vision-{name}-") as tmp:
        path = Path(tmp) / "model"
        made = generated(event, lambda: _generate(name, path))
        if made.outcome is not Outcome.OK:
            return ArchRow(name, made)
        cells: dict[str, Cell] = {}
        with contextlib.suppress(Stop):
            model = step(cells, "load", lambda: _load(path), event)
            with contextlib.suppress(Stop):
                step(cells, "text", lambda: _text(model), event)
            with contextlib.suppress(Stop):
                step(cells, "image", lambda: _image(model), event)
            with contextlib.suppress(Stop):
                step(cells, "cache", lambda: _cache(model), event)
            step(cells, "tool", lambda: _tool(model), event)
        return ArchRow(name, made, {c: cells[c] for c in COLUMNS if c in cells})


def _load(path: Path) -> tuple[Any, Cell]:
    from harness.backends.mlx_vlm import BACKEND

    model, _info = BACKEND.load(path)
    return model, Cell(Outcome.OK, "mlx_vlm.load")


def _text(model: Any) -> tuple[None, Cell]:
    ids = model.chat_tokens([{"role": "user", "content": PROMPT}])
    tokens = list(model.stream_tokens(ids, max_tokens=GEN_TOKENS))
    if not tokens:
        raise RuntimeError("no token generated from a text turn")
    return None, Cell(Outcome.OK, f"{len(tokens)} tokens from {len(ids)} prompt tokens")


def _image(model: Any) -> tuple[None, Cell]:
    import numpy as np
    from PIL import Image

    pixels = np.random.default_rng(0).integers(0, 256, (IMAGE_PX, IMAGE_PX, 3), dtype=np.uint8)
    prompt = model.prepare_images(PROMPT, [Image.fromarray(pixels)])
    tokens = list(model.stream_image_prompt(prompt, max_tokens=GEN_TOKENS))
    if not tokens:
        raise RuntimeError("no token generated from an image turn")
    counted = (
        f"{prompt.image_tokens} image tokens"
        if prompt.image_tokens
        else "image tokens not counted (the config names no placeholder the prompt has)"
    )
    return None, Cell(Outcome.OK, f"{len(tokens)} tokens; {counted}")


def _cache(model: Any) -> tuple[None, Cell]:
    """mlx-vlm's prompt cache for the language model, filled by a text prefill."""
    import mlx.core as mx
    from mlx_vlm.models.cache import make_prompt_cache

    language = model.model.language_model
    cache = make_prompt_cache(language)
    ids = model.chat_tokens([{"role": "user", "content": PROMPT}])
    out = language(mx.array([ids]), cache=cache)
    mx.eval(getattr(out, "logits", out))
    kinds = sorted({type(c).__name__ for c in cache})
    fixed = sorted({type(c).__name__ for c in cache if not c.is_trimmable()})
    if fixed:
        return None, Cell(Outcome.OK, f"{', '.join(kinds)}; not trimmable: {', '.join(fixed)}")
    return None, Cell(Outcome.OK, f"{', '.join(kinds)}; trimmable")


def _tool(model: Any) -> tuple[None, Cell]:
    """The tool parser mlx-vlm infers from the processor's chat template."""
    from mlx_vlm.tools.registry import _infer_tool_parser_from_processor

    parser = _infer_tool_parser_from_processor(model.processor)
    if parser is None:
        return None, Cell(Outcome.ABSENT, "no tool markup in the zoo template: no parser inferred")
    return None, Cell(Outcome.OK, str(parser))
