"""``hub:`` ids against a real hub-style cache built in tmp: environment, revisions, aliases,
one-line errors, no network unless allowed, and a resolved snapshot that really loads."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import huggingface_hub  # imported first on purpose: its constants are fixed at import
import pytest

from harness.core.types import ExpectKind
from harness.spec.hub_cache import cached_models, hub_cache_dir, repo_id
from harness.spec.loader import load_suite
from harness.spec.plan import plan
from harness.spec.resolve import ResolveError, resolve_model
from harness.spec.schema import ModelEntry
from tests.spec.model_sources import commit_hash, copy_model, hub_repo

MAIN = commit_hash("main")
V2 = commit_hash("v2")


@pytest.fixture()
def cache(tmp_path: Path, tiny_llama: Path) -> Path:
    """``org/tiny`` at two commits: main, and branch v2 (without a chat template)."""
    cache = tmp_path / "elsewhere" / "hub"
    hub_repo(cache, "org/tiny", tiny_llama, commit=MAIN)
    hub_repo(
        cache,
        "org/tiny",
        copy_model(tiny_llama, tmp_path / "v2", chat=False),
        commit=V2,
        refs=("v2",),
    )
    return cache


@pytest.fixture()
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def _entry(**fields: Any) -> ModelEntry:
    return ModelEntry.model_validate(fields)


ENV_CASES = [
    ({"HF_HUB_CACHE": "/c/hub"}, "/c/hub"),
    ({"HF_HUB_CACHE": "/c/hub", "HF_HOME": "/h"}, "/c/hub"),
    ({"HUGGINGFACE_HUB_CACHE": "/legacy"}, "/legacy"),
    ({"HF_HOME": "/h"}, "/h/hub"),
    ({"HF_HOME": "$BASE/hf", "BASE": "/b"}, "/b/hf/hub"),
    ({"XDG_CACHE_HOME": "/x"}, "/x/huggingface/hub"),
    ({}, str(Path.home() / ".cache" / "huggingface" / "hub")),
    ({"HF_HUB_CACHE": "~/hc"}, str(Path.home() / "hc")),
]


@pytest.mark.parametrize(("env", "expected"), ENV_CASES, ids=[str(sorted(e)) for e, _ in ENV_CASES])
def test_hub_cache_dir_follows_huggingface_hub_rules(env: dict[str, str], expected: str) -> None:
    assert hub_cache_dir(env) == Path(expected)


@pytest.mark.parametrize(
    ("folder", "expected"),
    [("models--org--name", "org/name"), ("models--gpt2", "gpt2"), ("datasets--a--b", None)],
)
def test_repo_ids_of_cache_folders(folder: str, expected: str | None) -> None:
    assert repo_id(folder) == expected


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME"])
def test_environment_set_after_import_is_honoured(
    cache: Path, monkeypatch: pytest.MonkeyPatch, no_network: None, variable: str
) -> None:
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE", "HF_HOME"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, str(cache if variable == "HF_HUB_CACHE" else cache.parent))
    assert Path(huggingface_hub.constants.HF_HUB_CACHE) != cache  # the library did not see it
    resolved = resolve_model(_entry(hub="org/tiny"), Path("."))
    assert resolved == cache / "models--org--tiny" / "snapshots" / MAIN


@pytest.mark.parametrize(
    ("revision", "commit"), [(None, MAIN), ("main", MAIN), ("v2", V2), (V2, V2), (MAIN, MAIN)]
)
def test_revision_by_branch_or_commit(
    cache: Path, no_network: None, revision: str | None, commit: str
) -> None:
    entry = _entry(hub="org/tiny", revision=revision)
    resolved = resolve_model(entry, Path("."), hub_cache=cache)
    assert resolved == cache / "models--org--tiny" / "snapshots" / commit


MISSING = [
    ({"hub": "org/missing"}, "hub model 'org/missing' is not in the local Hugging Face cache"),
    ({"hub": "org/tiny", "revision": "v3"}, "hub model 'org/tiny' at revision 'v3' is not in"),
    ({"hub": "org/tiny", "revision": "0" * 40}, f"hub model 'org/tiny' at revision '{'0' * 40}'"),
]


@pytest.mark.parametrize(("fields", "message"), MISSING, ids=["model", "branch", "commit"])
def test_missing_model_or_revision_is_one_line_with_the_fix(
    cache: Path, no_network: None, fields: dict[str, str], message: str
) -> None:
    with pytest.raises(ResolveError) as info:
        resolve_model(_entry(**fields), Path("."), hub_cache=cache)
    assert info.value.message.startswith(message)
    assert info.value.message.endswith(f"({cache})")
    assert "\n" not in info.value.message + info.value.hint
    assert "pass --allow-download" in info.value.hint


def test_alias_names_the_cases_and_a_missing_model_is_a_skip(  # type: ignore[no-untyped-def]
    write_suite, cache: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - {name: tiny-v2, hub: org/tiny, revision: v2}\n"
        "  - {hub: org/tiny}\n  - {hub: org/gone}\nscenarios:\n  - scenario: load\n"
    )
    v2, main, gone = plan(load_suite(suite))
    assert v2.case_id == "t::tiny-v2::load" and main.case_id == "t::org/tiny::load"
    assert v2.model.path == str(cache / "models--org--tiny" / "snapshots" / V2)
    assert main.model.path == str(cache / "models--org--tiny" / "snapshots" / MAIN)
    assert v2.expectation is None and main.expectation is None
    assert gone.model.path is None
    assert gone.expectation is not None and gone.expectation.kind is ExpectKind.SKIP
    assert "'org/gone' is not in the local Hugging Face cache" in gone.expectation.reason


@pytest.mark.parametrize(
    ("typed", "near"),
    [("org/tiyn", "org/tiny"), ("Org/Tiny-", "org/tiny"), ("other/model", None)],
)
def test_an_uncached_hub_id_warns_in_validate_with_did_you_mean(  # type: ignore[no-untyped-def]
    write_suite, cache: Path, monkeypatch: pytest.MonkeyPatch, no_network: None, typed, near
) -> None:
    """A mistyped id: the suite loads (the run would skip it), with one warning line naming
    the cached model it was probably meant to be; the skip reason says the same."""
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    suite = write_suite(
        f"schema_version: 1\nmodels:\n  - {{hub: {typed}}}\nscenarios:\n  - scenario: load\n"
    )
    loaded = load_suite(suite)
    (warning,) = [
        w for w in loaded.warnings if "is not in the local Hugging Face cache" in w.message
    ]
    line = str(warning)
    assert line.startswith(f"{suite}:3:") and "\n" not in line
    assert f"warning: hub model '{typed}'" in line and "its cases will be skipped" in line
    assert (f"did you mean '{near}'?" in line) is (near is not None)
    (case,) = plan(loaded)
    assert case.expectation is not None and case.expectation.kind is ExpectKind.SKIP
    assert (f"did you mean '{near}' (in the cache)?" in case.expectation.reason) is (
        near is not None
    )


def test_a_cached_hub_id_gives_no_warning(  # type: ignore[no-untyped-def]
    write_suite, cache: Path, monkeypatch: pytest.MonkeyPatch, no_network: None
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - {hub: org/tiny}\nscenarios:\n  - scenario: load\n"
    )
    assert not [w for w in load_suite(suite).warnings if "Hugging Face cache" in w.message]


@pytest.mark.parametrize(
    ("suite_allows", "cli_allows", "local_only"),
    [(False, False, True), (True, False, False), (False, True, False)],
)
def test_only_allow_download_lets_the_hub_client_go_online(  # type: ignore[no-untyped-def]
    write_suite,
    cache: Path,
    monkeypatch: pytest.MonkeyPatch,
    suite_allows: bool,
    cli_allows: bool,
    local_only: bool,
) -> None:
    calls: list[dict[str, Any]] = []

    def fake_snapshot_download(repo: str, **kwargs: Any) -> str:
        calls.append(kwargs)
        return str(cache / "models--org--tiny" / "snapshots" / MAIN)

    monkeypatch.setattr(huggingface_hub, "snapshot_download", fake_snapshot_download)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    suite = write_suite(
        f"schema_version: 1\nallow_download: {str(suite_allows).lower()}\n"
        "models:\n  - hub: org/tiny\nscenarios:\n  - scenario: load\n"
    )
    plan(load_suite(suite), allow_download=cli_allows)
    assert [c["local_files_only"] for c in calls] == [local_only]
    assert calls[0]["cache_dir"] == str(cache)


def test_cached_models_lists_the_main_snapshot_or_the_only_commit(
    cache: Path, tiny_llama: Path
) -> None:
    hub_repo(cache, "org/pinned", tiny_llama, commit=commit_hash("p"), refs=())
    found = {m.repo_id: m for m in cached_models(cache)}
    assert set(found) == {"org/tiny", "org/pinned"}
    assert found["org/tiny"].revision is None
    assert found["org/tiny"].snapshot == cache / "models--org--tiny" / "snapshots" / MAIN
    assert found["org/pinned"].revision == commit_hash("p")
    assert cached_models(cache / "nowhere") == []


def test_a_resolved_snapshot_probes_and_loads_through_mlx_lm(cache: Path, no_network: None) -> None:
    from harness.backends.mlx_lm import BACKEND
    from harness.probe.probe import probe_model
    from harness.probe.types import Capability, Library

    snapshot = resolve_model(_entry(hub="org/tiny"), Path("."), hub_cache=cache)
    assert (snapshot / "config.json").is_symlink()  # files are links into blobs/, as the hub writes
    probe = probe_model(snapshot)
    assert probe.model_type == "llama" and probe.backend is Library.MLX_LM
    assert Capability.CHAT in probe.capabilities and not probe.problems
    v2 = probe_model(
        resolve_model(_entry(hub="org/tiny", revision="v2"), Path("."), hub_cache=cache)
    )
    assert Capability.CHAT not in v2.capabilities
    model, info = BACKEND.load(snapshot)
    assert info.weights_bytes == (snapshot / "model.safetensors").stat().st_size
    tokens = list(model.stream_tokens(model.encode("Hello"), max_tokens=3, ignore_eos=True))
    assert len(tokens) == 3
