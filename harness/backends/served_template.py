"""The chat template a served model's server renders with, rendered here
(:class:`harness.backends.chat_templating.FolderChatRendering`): the model folder's own, or the
one ``mlx_lm.server --chat-template`` was given. None when it cannot be known: no folder here
(a bare ``url:``), no tokenizer files in it, or a llama-server told to use another template.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from harness.backends.chat_templating import ChatTemplating, FolderChatRendering

TOKENIZER_FILES = ("tokenizer_config.json", "tokenizer.json")
MLX_TEMPLATE_FLAG = "--chat-template"  # mlx_lm.server / mlx_vlm.server: the template's text
LLAMA_TEMPLATE_FLAGS = ("--chat-template", "--chat-template-file", "--chat-template-kwargs")


def template_override(args: Sequence[str]) -> str | None:
    """The template text a ``--chat-template TEXT`` (or ``--chat-template=TEXT``) gives."""
    for i, arg in enumerate(args):
        if arg == MLX_TEMPLATE_FLAG and i + 1 < len(args):
            return args[i + 1]
        if arg.startswith(MLX_TEMPLATE_FLAG + "="):
            return arg.split("=", 1)[1]
    return None


def served_renderer(
    path: Path | None, engine: str | None, args: Sequence[str] = ()
) -> ChatTemplating | None:
    """The renderer for a model served from ``path`` by ``engine`` (``mlx_lm``, ``mlx_vlm``,
    ``llama_server``; None: a ``url:`` server, assumed to use the folder's template)."""
    if path is None:
        return None
    folder = path if path.is_dir() else path.parent
    if not any((folder / name).is_file() for name in TOKENIZER_FILES):
        return None
    if engine == "llama_server":
        if any(a.split("=", 1)[0] in LLAMA_TEMPLATE_FLAGS for a in args):
            return None  # a built-in or other template: not the folder's
        return FolderChatRendering(folder)
    return FolderChatRendering(folder, template_override(args))
