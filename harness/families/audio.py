"""One mlx-audio family, end to end: generate a tiny model of it, load it with mlx-audio's own
loader (strict weights) and run it once: text to speech makes audio from a sentence, speech to
text transcribes a second of silence. :func:`try_audio_family` returns one
:class:`~harness.families.row.ArchRow` whose columns (:data:`COLUMNS`) each hold an
:class:`~harness.families.row.Outcome` with a one-line reason.

The zoo's hand-made families (Whisper, Soprano) are built with their tokenizers; the others are
derived from their config classes (:mod:`harness.models.zoo.derive_audio`) without one, so a
family that needs a tokenizer, a G2P package or a codec from the hub fails its run (or load) with
that reason.
Derived weights are saved under mlx-audio's own parameter names and layouts; a family whose
``sanitize`` converts PyTorch layouts (conv kernels) regardless may then fail its run with a
shape error that is the derivation's, not the family's: the row's reason shows it.
"""

from __future__ import annotations

import contextlib
import tempfile
import time
from pathlib import Path
from typing import Any

from harness.core.exception_line import exception_line
from harness.families.row import ArchRow, Cell, OnEvent, Outcome, Stop, generated, step

COLUMNS = ("load", "run")
TEXT = "The birch canoe slid on the smooth planks."
STT_RATE = 16000  # Hz: a second of silence for speech-to-text families


def _hand_made(kind: str, model_type: str) -> Any:
    from harness.models.zoo.families import FAMILIES
    from harness.models.zoo.families_audio import AUDIO_FAMILIES

    for family in (*FAMILIES.values(), *AUDIO_FAMILIES.values()):
        if family.backend == "mlx_audio" and family.model_type == model_type:
            tts = "tts" in family.tags
            return family if tts == (kind == "tts") else None
    return None


def _generate(kind: str, model_type: str, out_dir: Path) -> str:
    from harness.models.zoo.build import build
    from harness.models.zoo.derive_audio import build_tiny

    start = time.perf_counter()
    hand_made = _hand_made(kind, model_type)
    try:
        if hand_made is not None:
            build(hand_made, out_dir)
            return f"hand-made (zoo/{hand_made.name}), built in {time.perf_counter() - start:.1f} s"
        params = build_tiny(kind, model_type, out_dir)
    except Exception as exc:  # the family's own error is this row's finding
        raise Stop(exception_line(exc, 200)) from None
    return f"derived, {params} parameters, built in {time.perf_counter() - start:.1f} s"


def try_audio_family(name: str, *, on_event: OnEvent | None = None) -> ArchRow:
    """Generate, load and run a tiny ``name`` (``tts/<model_type>`` or ``stt/<model_type>``).

    ``on_event(column, None)`` as a column starts and ``on_event(column, cell)`` as it ends
    ("generated" first), so a parent watching from outside knows where a dead process was.
    """
    event = on_event or (lambda column, cell: None)
    kind, _, model_type = name.partition("/")
    with tempfile.TemporaryDirectory(prefix=f"audio-{model_type}-") as tmp:
        path = Path(tmp) / model_type
        made = generated(event, lambda: _generate(kind, model_type, path))
        if made.outcome is not Outcome.OK:
            return ArchRow(name, made)
        cells: dict[str, Cell] = {}
        with contextlib.suppress(Stop):
            model = step(cells, "load", lambda: _load(kind, path), event)
            step(cells, "run", lambda: _run(kind, model), event)
        return ArchRow(name, made, {c: cells[c] for c in COLUMNS if c in cells})


def _load(kind: str, path: Path) -> tuple[Any, Cell]:
    if kind == "tts":
        from mlx_audio.tts.utils import load_model as load_tts

        return load_tts(path), Cell(Outcome.OK, "mlx_audio.tts.utils.load_model")
    from mlx_audio.stt.utils import load_model as load_stt

    return load_stt(path), Cell(Outcome.OK, "mlx_audio.stt.utils.load_model")


def _run(kind: str, model: Any) -> tuple[None, Cell]:
    import numpy as np

    if kind == "tts":
        from harness.models.tts_generate import float_samples, generate_options

        first = next(iter(model.generate(text=TEXT, **generate_options(model.generate))), None)
        if first is None:
            raise RuntimeError("generate yielded no audio")
        samples, rate = float_samples(first.audio), int(first.sample_rate)
        if samples.size == 0:
            raise RuntimeError("generate yielded an empty chunk")
        return None, Cell(Outcome.OK, f"{samples.size / max(1, rate):.2f} s of audio at {rate} Hz")
    result = model.generate(np.zeros(STT_RATE, np.float32))
    text = str(getattr(result, "text", result))
    return None, Cell(Outcome.OK, f"transcribed 1 s of silence: {len(text)} characters")
