"""The plug-in registry: built-ins and entry points alike, did-you-mean hints, import errors that
surface. Entry points come from a real ``*.dist-info`` put on ``sys.path`` for the test."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from harness.core.registry import Registry, UnknownPluginError

_COUNTER = itertools.count()

MODULES = {
    "builtin_mod": "VALUE = 'builtin'\n",
    "plugin_mod": "VALUE = 'plugin'\nOTHER = 'other'\n",
    "broken_mod": "import no_such_dependency_for_the_registry_test\nVALUE = 'never'\n",
    "raising_mod": "raise ImportError('plugin needs libfoo 2')\n",
}


@pytest.fixture()
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, str]]:
    """(module prefix, entry-point group): the modules of MODULES under a fresh prefix, and a
    dist-info whose group lists ENTRY_POINTS (both unique to this test)."""
    prefix = f"regtoy{next(_COUNTER)}_{tmp_path.name.replace('-', '_')}_"
    group = f"{prefix}group"
    for name, text in MODULES.items():
        (tmp_path / f"{prefix}{name}.py").write_text(text)
    info = tmp_path / f"{prefix}dist-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {prefix}dist\nVersion: 0.0\n")
    lines = [f"{k} = {prefix}{v}" for k, v in ENTRY_POINTS.items()]
    (info / "entry_points.txt").write_text(f"[{group}]\n" + "\n".join(lines) + "\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield prefix, group
    for name in [m for m in sys.modules if m.startswith(prefix)]:
        del sys.modules[name]


ENTRY_POINTS = {
    "plugin": "plugin_mod:VALUE",
    "builtin": "plugin_mod:OTHER",  # the same name as a built-in: the built-in stays
    "broken": "broken_mod:VALUE",
    "raising": "raising_mod:VALUE",
    "missing": "absent_mod:VALUE",
}
BUILTINS = {"builtin": "builtin_mod:VALUE", "throughput": "builtin_mod:VALUE"}


def _registry(
    prefix: str, group: str | None, builtins: Mapping[str, str] = BUILTINS
) -> Registry[str]:
    return Registry("toy", {k: f"{prefix}{v}" for k, v in builtins.items()}, group=group)


# (id, name asked for, the value, or the exception type and a fragment of its message)
GETS: list[tuple[str, str, str | tuple[type[BaseException], str]]] = [
    ("builtin", "throughput", "builtin"),
    ("entry_point_added", "plugin", "plugin"),
    ("builtin_not_overridden", "builtin", "builtin"),
    ("plugin_dependency_missing", "broken", (ModuleNotFoundError, "no_such_dependency")),
    ("plugin_import_error", "raising", (ImportError, "plugin needs libfoo 2")),
    ("plugin_module_missing", "missing", (ModuleNotFoundError, "absent_mod")),
    (
        "unknown_close",
        "throughpt",
        (UnknownPluginError, "unknown toy 'throughpt'; did you mean 'throughput'?"),
    ),
    (
        "unknown_far",
        "zzzz",
        (UnknownPluginError, "unknown toy 'zzzz'; known: broken, builtin, missing"),
    ),
]


@pytest.mark.parametrize(("name", "expected"), [r[1:] for r in GETS], ids=[r[0] for r in GETS])
def test_get(
    plugins: tuple[str, str], name: str, expected: str | tuple[type[BaseException], str]
) -> None:
    registry = _registry(*plugins)
    if isinstance(expected, str):
        assert registry.get(name) == expected
        assert registry.get(name) is registry.get(name)  # loaded once
        return
    kind, fragment = expected
    with pytest.raises(kind) as caught:
        registry.get(name)
    assert type(caught.value) is kind  # the plug-in's own error, not wrapped or swallowed
    assert fragment in str(caught.value)


def test_names_membership_and_iteration_include_entry_points(plugins: tuple[str, str]) -> None:
    registry = _registry(*plugins)
    expected = ["broken", "builtin", "missing", "plugin", "raising", "throughput"]
    assert registry.names() == expected and list(registry) == expected
    assert "plugin" in registry and "nope" not in registry and 3 not in registry


def test_without_a_group_no_entry_point_is_read(plugins: tuple[str, str]) -> None:
    prefix, _group = plugins
    registry = _registry(prefix, None)
    assert registry.names() == ["builtin", "throughput"]
    with pytest.raises(
        UnknownPluginError, match="unknown toy 'plugin'; known: builtin, throughput"
    ):
        registry.get("plugin")


# (name, hint)
HINTS = [
    ("throughpt", "did you mean 'throughput'?"),
    ("plugn", "did you mean 'plugin'?"),
    ("BUILTIN", "known: broken, builtin, missing, plugin, raising, throughput"),
    ("", "known: broken, builtin, missing, plugin, raising, throughput"),
]


@pytest.mark.parametrize(("name", "hint"), HINTS)
def test_hints(plugins: tuple[str, str], name: str, hint: str) -> None:
    assert _registry(*plugins).hint(name) == hint


def test_an_error_does_not_poison_the_registry(plugins: tuple[str, str]) -> None:
    """A plug-in that fails to import fails again the next time (nothing half-loaded is kept),
    and the others still load."""
    registry = _registry(*plugins)
    for _ in range(2):
        with pytest.raises(ImportError, match="libfoo"):
            registry.get("raising")
    assert registry.get("plugin") == "plugin"


def test_the_shipped_registries_hint_their_names() -> None:
    from harness.backends import BACKENDS
    from harness.scenarios import SCENARIOS

    assert SCENARIOS.hint("prompt_cach") == "did you mean 'prompt_cache'?"
    assert BACKENDS.hint("mlx-lm") == "did you mean 'mlx_lm'?"
    with pytest.raises(UnknownPluginError, match="unknown backend 'mlx_vlmm'"):
        BACKENDS.get("mlx_vlmm")
