"""One architecture of mlx-lm, end to end: derive a tiny model, write it, load it through mlx-lm,
generate, and check its cache, trimming and tool template. :func:`try_architecture` returns one
:class:`ArchRow` whose every column is an :class:`Outcome` with a one-line reason.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import tempfile
from pathlib import Path
from typing import Any

from harness.core.exception_line import exception_line
from harness.families.row import ArchRow, Cell, OnEvent, Outcome, Stop, generated, step

MAX_PARAMS = 20_000_000  # more than this after shrinking: a size field under another name
PROMPT = "The capital of France is"
COLUMNS = ("load", "generate", "cache", "trim", "tools")


def try_architecture(name: str, *, seed: int = 0, on_event: OnEvent | None = None) -> ArchRow:
    """Derive, write, load and exercise a tiny ``name`` (a module of ``mlx_lm.models``).

    ``on_event(column, None)`` is called as a column's check starts and ``on_event(column, cell)``
    when it ends ("generated" first), so a caller watching from outside knows where a process
    that died was.
    """
    event = on_event or (lambda column, cell: None)
    with tempfile.TemporaryDirectory(prefix=f"arch-{name}-") as tmp:
        path = Path(tmp) / "model"
        made = generated(event, lambda: f"{_generate(name, path, seed=seed)} parameters")
        if made.outcome is not Outcome.OK:
            return ArchRow(name, made)
        cells: dict[str, Cell] = {}
        tokenizer = None
        with contextlib.suppress(Stop):
            model, tokenizer = step(cells, "load", lambda: _load(path), event)
            ids = list(tokenizer.encode(PROMPT))
            with contextlib.suppress(Stop):  # the cache is tried even when generation fails
                step(cells, "generate", lambda: _generate_step(model, tokenizer, ids), event)
            cache = step(cells, "cache", lambda: _cache(model, ids), event)
            step(cells, "trim", lambda: _trim(model, cache, ids), event)
        event("tools", None)
        cells["tools"] = _tools(name, tokenizer)
        event("tools", cells["tools"])
        return ArchRow(name, made, {c: cells[c] for c in COLUMNS if c in cells})


def _import(name: str) -> Any:
    """The module, with what it prints captured: a module may exit on a missing dependency."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            return importlib.import_module(f"mlx_lm.models.{name}")
    except SystemExit as exc:
        said = " ".join(out.getvalue().split()) or f"exit status {exc.code}"
        raise Stop(f"importing it exits: {said}") from None
    except Exception as exc:
        raise Stop(f"importing it fails: {exception_line(exc, 200)}") from None


def _generate(name: str, out_dir: Path, *, seed: int) -> int:
    """Write a tiny random ``name`` into ``out_dir``: config.json, safetensors, a tokenizer."""
    module = _import(name)
    if not (hasattr(module, "Model") and hasattr(module, "ModelArgs")):
        raise Stop("defines no Model and ModelArgs: not an architecture")
    import mlx.core as mx
    from mlx.utils import tree_flatten
    from mlx_lm.utils import save_model

    from harness.models.zoo.common import model_config, seeded_init, write_json, write_tokenizer
    from harness.models.zoo.derive_text import tiny_config, tokenizer_family
    from harness.models.zoo.families import FAMILIES

    try:
        config = tiny_config(name)
        family = tokenizer_family(name, config, FAMILIES)
        out_dir.mkdir(parents=True)
        vocab = write_tokenizer(family, out_dir)
        config = model_config(family, vocab)
        seeded_init(seed)
        model = module.Model(module.ModelArgs.from_dict(config))
        leaves: Any = tree_flatten(model.parameters())
        params = sum(int(array.size) for _name, array in leaves)
        if params > MAX_PARAMS:
            raise Stop(f"{params} parameters after shrinking: a size field the derivation lacks")
        mx.eval([array for _name, array in leaves])
        save_model(out_dir, model)
        write_json(out_dir / "config.json", config)
    except Stop:
        raise
    except Exception as exc:
        raise Stop(exception_line(exc, 200)) from None
    return params


def _load(path: Path) -> tuple[Any, Cell]:
    from mlx_lm import load

    model, tokenizer = load(str(path))[:2]
    return (model, tokenizer), Cell(Outcome.OK, "mlx_lm.load")


def _generate_step(model: Any, tokenizer: Any, ids: list[int]) -> tuple[None, Cell]:
    from mlx_lm import stream_generate

    responses = list(stream_generate(model, tokenizer, ids, max_tokens=2))
    last = responses[-1] if responses else None
    tokens = 0 if last is None else int(last.generation_tokens)
    if tokens < 1:
        raise RuntimeError("stream_generate produced no token")
    return None, Cell(Outcome.OK, f"{tokens} tokens")


def _cache(model: Any, ids: list[int]) -> tuple[Any, Cell]:
    """The prompt cache mlx-lm makes for the model, filled by a prefill of ``ids``."""
    import mlx.core as mx
    from mlx_lm.models.cache import make_prompt_cache

    cache = make_prompt_cache(model)
    mx.eval(model(mx.array([ids]), cache=cache))
    kinds = sorted({type(c).__name__ for c in cache})
    return cache, Cell(Outcome.OK, ", ".join(kinds))


def _trim(model: Any, cache: Any, ids: list[int]) -> tuple[None, Cell]:
    """Trim one token off a filled cache, then decode on from it."""
    import mlx.core as mx
    from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

    if not can_trim_prompt_cache(cache):
        fixed = sorted({type(c).__name__ for c in cache if not c.is_trimmable()})
        return None, Cell(Outcome.ABSENT, f"not trimmable: {', '.join(fixed)}")
    trimmed = trim_prompt_cache(cache, 1)
    if trimmed != 1:
        raise RuntimeError(f"trim_prompt_cache(cache, 1) trimmed {trimmed} tokens")
    mx.eval(model(mx.array([ids[-1:]]), cache=cache))
    return None, Cell(Outcome.OK, "trimmed 1 token, decoded on")


def _tools(name: str, tokenizer: Any) -> Cell:
    """The tool parser mlx-lm picked at load (the module's TOKENIZER_DEFAULTS, else template)."""
    from harness.models.zoo.derive_text import PLAIN_CHATML

    defaults = getattr(importlib.import_module(f"mlx_lm.models.{name}"), "TOKENIZER_DEFAULTS", {})
    declared = defaults.get("tool_parser_type") if isinstance(defaults, dict) else None
    if tokenizer is None:
        if declared:
            return Cell(Outcome.OK, f"{declared} (TOKENIZER_DEFAULTS; not loaded)")
        return Cell(Outcome.NOT_RUN, "not loaded")
    parser = tokenizer._tokenizer.init_kwargs.get("tool_parser_type")
    plain = tokenizer.chat_template == PLAIN_CHATML
    template = "no zoo family of this model_type" if plain else "its zoo template has none"
    if parser is None:
        return Cell(Outcome.ABSENT, f"no tool template known: no TOKENIZER_DEFAULTS, {template}")
    source = "TOKENIZER_DEFAULTS" if parser == declared else "zoo family template"
    return Cell(Outcome.OK, f"{parser} ({source})")
