"""Write a text family as an mlx-lm model directory (mlx-lm's own model classes, random weights)."""

from __future__ import annotations

from pathlib import Path

from harness.models.zoo.common import (
    BuiltModel,
    check_float32,
    model_config,
    seeded_init,
    write_extra_files,
    write_json,
    write_tokenizer,
)
from harness.models.zoo.family import Family


def write_text_model(family: Family, out_dir: Path, *, seed: int) -> BuiltModel:
    """Write tokenizer, config and seeded float32 weights of ``family``; return the parameter count
    (and, for a content-bearing family, what its probes showed).

    The model class comes from ``mlx_lm.utils._get_classes``, the way ``mlx_lm.load`` resolves
    ``model_type`` (including remappings such as mistral -> llama). A derived family's config is
    completed from the installed mlx-lm first (:meth:`Family.resolved`). A content-bearing
    family's weights are then made to answer from the whole prompt
    (:func:`harness.models.zoo.content.make_content_bearing`), which raises when they cannot be;
    a caller's are trained to call tools (:func:`harness.models.zoo.calling.train_to_call`), a
    thinker's to think, then answer (:func:`harness.models.zoo.thinking.train_to_think`).
    """
    from mlx_lm.utils import _get_classes, load_tokenizer, save_model

    family = family.resolved()
    vocab = write_tokenizer(family, out_dir)
    config = model_config(family, vocab)
    write_json(out_dir / "config.json", config)
    model_cls, args_cls = _get_classes(config)
    seeded_init(seed)
    model = model_cls(args_cls.from_dict(config))
    n_params = check_float32(model)
    content = None
    if family.calling:
        from harness.models.zoo.calling import ATTEMPTS, THOUGHT, NotCalling, train_to_call

        tokenizer = load_tokenizer(out_dir)
        parser = family.expected_parser or "json_tools"
        for attempt in range(ATTEMPTS):  # another seed where training fell short (other numerics)
            if attempt:
                seeded_init(seed + attempt)
                model = model_cls(args_cls.from_dict(config))
            try:
                if family.calls_per_turn == 2:
                    from harness.models.zoo.calling_pair import train_to_call_pair

                    trained = train_to_call_pair(
                        model, tokenizer, name=family.name, parser=parser, seed=seed + attempt
                    )
                else:
                    trained = train_to_call(
                        model,
                        tokenizer,
                        name=family.name,
                        parser=parser,
                        seed=seed + attempt,
                        names=family.tool_names,
                        thought=THOUGHT if family.call_in_thought else None,
                    )
            except NotCalling:
                if attempt == ATTEMPTS - 1:
                    raise
                continue
            content = {**trained.as_dict(), "seed": seed + attempt}
            break
    elif family.thinking:
        from harness.models.zoo import thinking

        tokenizer = load_tokenizer(out_dir)
        for attempt in range(thinking.ATTEMPTS):
            if attempt:
                seeded_init(seed + attempt)
                model = model_cls(args_cls.from_dict(config))
            try:
                taught = thinking.train_to_think(
                    model, tokenizer, name=family.name, seed=seed + attempt
                )
            except thinking.NotThinking:
                if attempt == thinking.ATTEMPTS - 1:
                    raise
                continue
            content = {**taught.as_dict(), "seed": seed + attempt}
            break
    elif family.content_bearing:
        from harness.models.zoo.content import make_content_bearing

        tokenizer = load_tokenizer(out_dir)
        vocab_size = int(config["vocab_size"])
        report = make_content_bearing(model, tokenizer, vocab_size=vocab_size, name=family.name)
        content = report.as_dict()
    save_model(out_dir, model)
    write_extra_files(family, out_dir)
    if family.thinking:  # the same model for llama-server
        from harness.models.zoo.thinker_gguf import write_thinker_gguf

        write_thinker_gguf(out_dir)
    return BuiltModel(n_params, content)
