"""The chat template a served model's server renders with, rendered here: the folder's own,
the text ``--chat-template`` gave mlx_lm.server, or none when it cannot be known."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.backends.chat_templating import FolderChatRendering, ServesChatTemplate
from harness.backends.http import ServedModel
from harness.backends.openai_client import Endpoint
from harness.backends.served_template import served_renderer, template_override
from tests.servers.toy_model import write_model_folder

FOLDER_TEMPLATE = "{% for m in messages %}[{{ m.role }}] {{ m.content }}\n{% endfor %}>"
OTHER_TEMPLATE = "{{ tools | length }} tools; {{ messages[-1].content }}>"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_model_folder(tmp_path / "m")
    config = {"tokenizer_class": "PreTrainedTokenizerFast", "chat_template": FOLDER_TEMPLATE}
    (tmp_path / "m" / "tokenizer_config.json").write_text(json.dumps(config))
    return tmp_path / "m"


MESSAGES = [{"role": "user", "content": "hello"}]


def test_the_folders_own_template_renders(folder: Path) -> None:
    renderer = served_renderer(folder, "mlx_lm")
    assert isinstance(renderer, FolderChatRendering)
    assert renderer.render_chat(MESSAGES) == "[user] hello\n>"


def test_a_template_the_server_was_given_replaces_the_folders(folder: Path) -> None:
    for args in (["--chat-template", OTHER_TEMPLATE], [f"--chat-template={OTHER_TEMPLATE}"]):
        assert template_override(args) == OTHER_TEMPLATE
        renderer = served_renderer(folder, "mlx_lm", ["--max-tokens", "9", *args])
        assert renderer is not None
        assert renderer.render_chat(MESSAGES, tools=[{}, {}]) == "2 tools; hello>"


def test_unknown_templates_give_no_renderer(folder: Path, tmp_path: Path) -> None:
    assert served_renderer(None, None) is None  # a bare url:
    assert served_renderer(tmp_path, "mlx_lm") is None  # no tokenizer files
    gguf = folder / "model.gguf"
    gguf.write_bytes(b"GGUF")
    assert served_renderer(gguf, "llama_server") is not None  # the folder beside the file
    assert served_renderer(gguf, "llama_server", ["--chat-template", "chatml"]) is None


def test_a_served_model_declares_its_renderer(folder: Path) -> None:
    model = ServedModel(Endpoint("http://127.0.0.1:9"), "url", None)
    assert isinstance(model, ServesChatTemplate) and model.chat_renderer is None
    renderer = served_renderer(folder, None)
    assert ServedModel(Endpoint("http://x"), "url", None, chat_renderer=renderer).chat_renderer
