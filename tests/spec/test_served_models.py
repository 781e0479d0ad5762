"""``serve:`` and ``url:`` in a suite: what they plan, and one clear line for each misuse."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.core.types import ModelSource, ServerRef
from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.plan import plan

HEAD = "schema_version: 1\nmodels:\n"
TAIL = "scenarios:\n  - scenario: load\n"

# (name, model entry lines, expected backend, source, key, server)
GOOD = [
    (
        "serve_shorthand",
        "  - path: {model}\n    serve: mlx_lm\n",
        ModelSource.PATH,
        "fake-model",
        ServerRef(engine="mlx_lm"),
    ),
    (
        "serve_mapping",
        "  - path: {model}\n    serve: {{engine: llama_server, args: [-c, '512'], "
        "env: {{B: '2', A: '1'}}, startup_timeout_s: 30}}\n",
        ModelSource.PATH,
        "fake-model",
        ServerRef(
            engine="llama_server",
            args=("-c", "512"),
            env=(("A", "1"), ("B", "2")),
            startup_timeout_s=30.0,
        ),
    ),
    (
        "serve_request_model",  # old mlx_lm.server: requests name its default model
        "  - path: {model}\n    serve: {{engine: mlx_lm, request_model: default_model}}\n",
        ModelSource.PATH,
        "fake-model",
        ServerRef(engine="mlx_lm", request_model="default_model"),
    ),
    (
        "url_alone",
        "  - url: http://127.0.0.1:9/\n    api_key_env: MY_KEY\n    served_model: m\n",
        ModelSource.URL,
        "http://127.0.0.1:9/",
        ServerRef(url="http://127.0.0.1:9/", api_key_env="MY_KEY", request_model="m"),
    ),
    (
        "url_with_local_files",
        "  - name: remote\n    url: http://127.0.0.1:9\n    path: {model}\n",
        ModelSource.PATH,
        "remote",
        ServerRef(url="http://127.0.0.1:9"),
    ),
]


@pytest.mark.parametrize(
    ("lines", "source", "key", "server"), [g[1:] for g in GOOD], ids=[g[0] for g in GOOD]
)
def test_served_models_plan_with_backend_http(
    write_suite, fake_model: Path, lines: str, source: ModelSource, key: str, server: ServerRef
) -> None:
    cases = plan(load_suite(write_suite(HEAD + lines.format(model=fake_model) + TAIL)))
    (case,) = cases
    assert case.model.backend == "http"
    assert case.model.source is source
    assert case.model.key == key
    assert case.model.server == server
    assert case.expectation is None  # nothing to resolve is no skip
    if source is ModelSource.URL:
        assert case.model.path is None
    else:
        assert case.model.path == str(fake_model)


def test_a_served_chat_template_becomes_its_text_on_the_command_line(
    write_suite, fake_model: Path
) -> None:
    from harness.toolcalls.shipped import template_path

    lines = f"  - path: {fake_model}\n    serve: {{engine: mlx_lm, chat_template: smollm2_tools, "
    (case,) = plan(load_suite(write_suite(HEAD + lines + "args: [--max-tokens, '9']}\n" + TAIL)))
    assert case.model.server is not None
    text = template_path("smollm2_tools").read_text(encoding="utf-8")
    assert case.model.server.args == ("--chat-template", text, "--max-tokens", "9")


def test_plain_model_has_no_server(write_suite, fake_model: Path) -> None:
    (case,) = plan(
        load_suite(write_suite(f"{HEAD}  - path: {fake_model}\n    backend: fake\n{TAIL}"))
    )
    assert case.model.server is None
    assert case.model.backend == "fake"


# (name, model entry lines, the line it names, fragments of the one error line)
BAD = [
    (
        "serve_and_url",
        "  - path: {model}\n    serve: mlx_lm\n    url: http://127.0.0.1:9\n",
        3,
        ["'serve' and 'url' cannot both be given"],
    ),
    ("unknown_engine", "  - path: {model}\n    serve: vllm\n", 4, ["unknown engine 'vllm'"]),
    (
        "other_backend",
        "  - path: {model}\n    serve: mlx_lm\n    backend: mlx_lm\n",
        3,
        ["served models use backend http", "remove 'backend'"],
    ),
    (
        "key_without_url",
        "  - path: {model}\n    api_key_env: K\n",
        3,
        ["'api_key_env' needs 'url'"],
    ),
    ("not_http", "  - url: ftp://host\n", 3, ["url"]),
    (
        "url_ending_in_v1",
        "  - url: http://127.0.0.1:8080/v1/\n",
        3,
        ["ends in /v1", "/v1/v1/", "write url: http://127.0.0.1:8080"],
    ),
    ("bad_env_name", "  - url: http://h\n    api_key_env: 'my key'\n", 4, ["api_key_env"]),
    ("serve_without_model", "  - serve: mlx_lm\n", 3, ["exactly one of"]),
    (
        "template_not_shipped",
        "  - path: {model}\n    serve: {{engine: mlx_lm, chat_template: nope}}\n",
        4,
        ["chat template 'nope' is not shipped", "smollm2_tools"],
    ),
    (
        "template_other_engine",
        "  - path: {model}\n    serve: {{engine: llama_server, chat_template: smollm2_tools}}\n",
        4,
        ["serve engine llama_server takes no chat_template"],
    ),
]


@pytest.mark.parametrize(
    ("lines", "line", "fragments"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_served_model_misuse_is_one_line(
    write_suite, fake_model: Path, lines: str, line: int, fragments: list[str]
) -> None:
    path = write_suite(HEAD + lines.format(model=fake_model) + TAIL)
    with pytest.raises(SuiteInvalid) as info:
        load_suite(path)
    messages = [str(e) for e in info.value.errors]
    assert len(messages) == 1, messages
    assert messages[0].startswith(f"{path}:{line}:"), messages[0]
    assert "\n" not in messages[0]
    for fragment in fragments:
        assert fragment in messages[0]


def test_one_folder_served_by_two_engines_gets_two_workers(write_suite, fake_model: Path) -> None:
    """The same files through llama-server, through a one-slot llama-server and in process
    are three loads: a worker is never reused across servers."""
    from harness.spec.plan import worker_key

    text = (
        f"{HEAD}  - {{name: a, path: {fake_model}, serve: llama_server}}\n"
        f"  - {{name: b, path: {fake_model}, serve: {{engine: llama_server, args: [-np, '1']}}}}\n"
        f"  - {{name: c, path: {fake_model}, serve: mlx_lm}}\n"
        f"  - {{name: d, path: {fake_model}, backend: fake}}\n"
        f"  - {{name: e, path: {fake_model}, serve: mlx_lm}}\n{TAIL}"
    )
    keys = {case.model.key: worker_key(case) for case in plan(load_suite(write_suite(text)))}
    assert len({keys[k] for k in "abcd"}) == 4
    assert keys["c"] == keys["e"]  # the same server for the same files: one load will do
