"""``select:`` entries: expanded at load time into ordinary, stably named model entries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.cli import main
from harness.models.catalog import embedded_models
from harness.spec.errors import SuiteInvalid
from harness.spec.expand import expand_models
from harness.spec.loader import SourcedModel, load_suite
from harness.spec.plan import plan
from harness.spec.schema import ModelEntry
from tests.spec.model_sources import big_model, commit_hash, copy_model, hub_repo

CHAT_UNDER_1GB = """\
schema_version: 1
models:
  - select: {{source: [{source}], capability: [chat], max_weights: 1 GB{extra}}}
    tags: [picked]
scenarios:
  - scenario: load
"""


def _suite(write_suite, source: str, extra: str = "") -> Path:  # type: ignore[no-untyped-def]
    return write_suite(CHAT_UNDER_1GB.format(source=source, extra=extra))


@pytest.fixture()
def harness_cache(tmp_path: Path, tiny_llama: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A harness cache where only zoo/llama is prepared."""
    root = tmp_path / "harness-cache"
    shutil.copytree(tiny_llama, root / "models" / "zoo" / "llama")
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(root))
    return root


@pytest.fixture()
def hub(tmp_path: Path, tiny_llama: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A hub cache: two chat models under 1 GB, one without a chat template, one of 1.5 GB."""
    cache = tmp_path / "hf" / "hub"
    src = tmp_path / "src"
    hub_repo(cache, "org/chat-small", tiny_llama)
    hub_repo(cache, "org/no-chat", copy_model(tiny_llama, src / "no-chat", chat=False))
    hub_repo(cache, "org/big", big_model(tiny_llama, src / "big", 1_500_000_000))
    hub_repo(cache, "org/pinned", tiny_llama, commit=commit_hash("pinned"), refs=())
    (cache / "models--org--empty").mkdir()  # an interrupted download: no snapshot
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


def test_chat_under_1gb_from_the_embedded_models(write_suite, harness_cache: Path) -> None:  # type: ignore[no-untyped-def]
    loaded = load_suite(_suite(write_suite, "embedded"))
    assert [m.entry.key for m in loaded.models] == ["zoo/llama"]
    entry = loaded.models[0].entry
    assert entry.embedded == "zoo/llama" and entry.backend == "mlx_lm"
    assert entry.tags[0] == "picked" and "zoo" in entry.tags
    (selection,) = loaded.selections
    reasons = {o.name: o.reason for o in selection.left_out}
    assert reasons["smollm2-135m-instruct"].startswith("not prepared")
    (case,) = plan(loaded)
    assert case.case_id == "t::zoo/llama::load"
    assert case.model.path == str(harness_cache / "models" / "zoo" / "llama")
    assert "picked" in case.marks


REAL_CHAT_UNDER_1GB = {
    "smollm2-135m-instruct",
    "smollm2-135m-instruct-f32",
    *(f"zoo/{f}" for f in ("llama", "qwen2", "qwen3", "gemma3_text", "mistral", "phi3")),
    *(f"zoo/{f}" for f in ("qwen3_moe", "lfm2", "qwen2-caller", "mistral-caller")),
    *(f"zoo/{f}" for f in ("qwen3-coder-caller", "pythonic-caller", "gemma4-caller")),
    *(f"zoo/{f}" for f in ("gemma4-hyphen-caller", "qwen2-pair-caller", "qwen2-split-caller")),
    "zoo/mistral-pair-caller",
    "zoo/qwen3-thinker",
    "zoo/qwen3-think-caller",
}


def test_chat_under_1gb_on_the_prepared_embedded_models(tmp_path: Path) -> None:
    """The real catalog: gemma3-270m has no chat template (and is 1.07 GB), whisper is audio,
    the vision zoo models need mlx-vlm (not a harness backend here)."""
    from harness.models.catalog import embedded_models

    if not all(m.prepared for m in embedded_models()):
        pytest.skip("needs every embedded model prepared (mlx-harness models prepare)")
    entry = ModelEntry.model_validate(
        {"select": {"source": ["embedded"], "capability": ["chat"], "max_weights": "1 GB"}}
    )
    expansion = expand_models(
        [SourcedModel(entry, tmp_path / "s.yaml", 3, 5)],
        hub_cache=tmp_path / "no-hub",
        runnable=("mlx_lm",),
    )
    assert {m.entry.key for m in expansion.models} == REAL_CHAT_UNDER_1GB
    reasons = {o.name: o.reason for o in expansion.selections[0].left_out}
    assert reasons["gemma3-270m"].startswith("capability: lacks chat")
    assert reasons["zoo/llava"].startswith("backend mlx_vlm is not available")
    text = ModelEntry.model_validate({"select": {"capability": "text", "max_weights": "1 GB"}})
    by_size = expand_models(
        [SourcedModel(text, tmp_path / "s.yaml", 3, 5)],
        hub_cache=tmp_path / "no-hub",
        runnable=("mlx_lm",),
    )
    gone = {o.name: o.reason for o in by_size.selections[0].left_out}
    assert gone["gemma3-270m"] == "max_weights: 1.07 GB > 1 GB"


def test_chat_under_1gb_from_a_hub_cache(write_suite, hub: Path) -> None:  # type: ignore[no-untyped-def]
    loaded = load_suite(_suite(write_suite, "hf_cache"))
    assert [m.entry.key for m in loaded.models] == ["org/chat-small", "org/pinned"]
    pinned = loaded.models[1].entry
    assert pinned.hub == "org/pinned" and pinned.revision == commit_hash("pinned")
    reasons = {o.name: o.reason for o in loaded.selections[0].left_out}
    assert reasons == {
        "org/big": "max_weights: 1.5 GB > 1 GB",
        "org/no-chat": "capability: lacks chat (has text)",
    }
    cases = plan(loaded)
    assert [c.case_id for c in cases] == ["t::org/chat-small::load", "t::org/pinned::load"]
    snapshot = hub / "models--org--chat-small" / "snapshots" / commit_hash("org/chat-small")
    assert cases[0].model.path == str(snapshot)
    assert cases[0].expectation is None


def test_dirs_under_roots_are_named_by_their_path(  # type: ignore[no-untyped-def]
    write_suite, tmp_path: Path, tiny_llama: Path
) -> None:
    copy_model(tiny_llama, tmp_path / "models" / "llama")
    copy_model(tiny_llama, tmp_path / "models" / "org" / "qwen-ish")
    copy_model(tiny_llama, tmp_path / "models" / "plain", chat=False)
    (tmp_path / "models" / "notes").mkdir()
    suite = _suite(write_suite, "dirs", ", roots: [models]")
    loaded = load_suite(suite)
    assert [m.entry.key for m in loaded.models] == ["llama", "org/qwen-ish"]
    assert loaded.models[0].entry.path == str(tmp_path / "models" / "llama")
    assert [c.case_id for c in plan(loaded)] == ["t::llama::load", "t::org/qwen-ish::load"]


def test_a_listed_model_is_not_chosen_again(write_suite, harness_cache: Path) -> None:  # type: ignore[no-untyped-def]
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - {name: mine, embedded: zoo/llama}\n"
        "  - select: {source: [embedded], capability: chat}\n"
        "  - select: {source: [embedded]}\n"
        "scenarios:\n  - scenario: load\n"
    )
    loaded = load_suite(suite)
    assert [m.entry.key for m in loaded.models] == ["mine"]
    first, second = ({o.name: o.reason for o in s.left_out} for s in loaded.selections)
    assert first["zoo/llama"] == "listed as 'mine'"
    assert second["zoo/llama"] == "listed as 'mine'"
    assert len(loaded.warnings) == 2


def test_a_selector_that_chooses_nothing_warns_and_validate_still_passes(  # type: ignore[no-untyped-def]
    write_suite, harness_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(write_suite, "embedded", ", family: mamba*")
    loaded = load_suite(suite)
    assert loaded.models == () and plan(loaded) == []
    (warning,) = loaded.warnings
    total = len(embedded_models())  # every embedded model is a candidate, prepared or not
    assert str(warning).startswith(
        f"{suite}:3:5: warning: selector chose none of {total} models (e.g."
    )
    assert "(e.g. smollm2-135m-instruct: not prepared" in str(warning)
    reasons = {o.name: o.reason for o in loaded.selections[0].left_out}
    assert reasons["zoo/llama"] == "family: llama is not mamba*"
    assert main(["validate", str(suite)]) == 0
    out, err = capsys.readouterr()
    assert "ok (0 models, 0 cases)" in out and f"select chose 0 of {len(embedded_models())}" in out
    assert "warning: selector chose none" in err
    assert main(["run", str(suite), "--report-dir", str(suite.parent / "r")]) == 5
    assert "no cases to run" in capsys.readouterr().err


def test_validate_expand_lists_chosen_and_left_out(  # type: ignore[no-untyped-def]
    write_suite, harness_cache: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(write_suite, "embedded")
    assert main(["validate", str(suite)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [
        f"{suite}: ok (1 models, 1 cases)",
        f"  {suite}:3:5: select chose 1 of {len(embedded_models())}: zoo/llama",
    ]
    assert main(["validate", "--expand", str(suite)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[1] == f"  {suite}:3:5: select chose 1 of {len(embedded_models())}"
    chosen = [line.split() for line in lines if line.startswith("    + ")]
    assert chosen == [
        ["+", "zoo/llama", "embedded", "llama", "mlx_lm", "32-bit", "427", "kB", "chat,text,tools"]
    ]
    assert any(
        line.split()[1] == "gemma3-270m" and "not prepared" in line
        for line in lines
        if line.startswith("    - ")
    )


# (name, models: text, expected line:col, fragments of the one error line)
BAD = [
    (
        "unknown_capability",
        "  - select: {capability: [chat, tool]}\n",
        "3:33",
        ["models.0.select.capability.1: unknown capability 'tool'", "did you mean 'tools'?"],
    ),
    (
        "bad_size_unit",
        "  - select:\n      max_weights: 1 GBs\n",
        "4:20",
        ["unknown size unit 'GBs' in '1 GBs'", "did you mean 'GB'?"],
    ),
    (
        "not_a_size",
        "  - select: {max_weights: lots}\n",
        "3:27",
        ["'lots' is not a size", "e.g. 1 GB"],
    ),
    (
        "unknown_backend",
        "  - select: {backend: mlx-lm}\n",
        "3:23",
        ["unknown backend 'mlx-lm'", "did you mean 'mlx_lm'?"],
    ),
    (
        "typo_key",
        "  - select: {sourse: [embedded]}\n",
        "3:14",
        ["unknown key 'sourse' in models.0.select", "did you mean 'source'?"],
    ),
    (
        "name_with_select",
        "  - select: {capability: chat}\n    name: mine\n",
        "3:5",
        ["'name' cannot be used with 'select'", "remove it"],
    ),
    (
        "dirs_without_roots",
        "  - select: {source: [dirs]}\n",
        "3:13",
        ["source 'dirs' needs 'roots:'", "add roots:"],
    ),
    (
        "missing_root",
        "  - select: {roots: [nowhere]}\n",
        "3:5",
        ["select root 'nowhere' is not a directory", "fix the path"],
    ),
]


@pytest.mark.parametrize(
    ("models", "position", "fragments"), [b[1:] for b in BAD], ids=[b[0] for b in BAD]
)
def test_bad_selector_gives_one_clear_line(  # type: ignore[no-untyped-def]
    write_suite, harness_cache: Path, models: str, position: str, fragments: list[str]
) -> None:
    suite = write_suite(f"schema_version: 1\nmodels:\n{models}scenarios:\n  - scenario: load\n")
    with pytest.raises(SuiteInvalid) as info:
        load_suite(suite)
    (line,) = [str(e) for e in info.value.errors]
    assert line.startswith(f"{suite}:{position}: "), line
    for fragment in fragments:
        assert fragment in line, line


def test_the_schema_offers_select() -> None:
    from harness.spec.schema import json_schema

    schema = json_schema()
    assert "select" in schema["$defs"]["ModelEntry"]["properties"]
    selector = schema["$defs"]["Selector"]["properties"]
    assert "chat" in selector["capability"]["anyOf"][0]["enum"]
    assert {"type": "string", "pattern": selector["max_weights"]["anyOf"][0]["anyOf"][1]["pattern"]}
