"""A typed registry of named plug-ins, loaded lazily from ``"module:attr"`` strings.

Built-ins register exactly like outside plug-ins (entry points), and an unknown name gets a
did-you-mean hint. Import errors of a plug-in are raised, never swallowed.
"""

from __future__ import annotations

import difflib
import importlib
from collections.abc import Callable, Iterator, Mapping
from typing import Generic, TypeVar

T = TypeVar("T")


class UnknownPluginError(LookupError):
    """A name that is not registered; the message carries a did-you-mean hint."""


class IncompletePluginError(TypeError):
    """A plug-in that lacks a part of its contract; the message names the parts and the fix."""


class Registry(Generic[T]):
    """Named ``"module:attr"`` targets, resolved on first use.

    ``group`` is the entry-point group outside packages use to add their own plug-ins;
    ``missing`` names the parts of its contract a loaded plug-in lacks (``fix`` says how to
    give them), so that every plug-in :meth:`get` returns is whole.
    """

    def __init__(
        self,
        kind: str,
        builtins: Mapping[str, str],
        group: str | None = None,
        *,
        missing: Callable[[object], tuple[str, ...]] | None = None,
        fix: str = "",
    ) -> None:
        self.kind = kind
        self._targets = dict(builtins)
        self._group = group
        self._missing = missing
        self._fix = fix
        self._loaded: dict[str, T] = {}
        self._scanned = group is None

    def _scan(self) -> None:
        if self._scanned:
            return
        self._scanned = True
        assert self._group is not None
        from importlib.metadata import entry_points  # only here: costly to import in a worker

        for ep in entry_points(group=self._group):
            self._targets.setdefault(ep.name, ep.value)

    def names(self) -> list[str]:
        self._scan()
        return sorted(self._targets)

    def __contains__(self, name: object) -> bool:
        self._scan()
        return name in self._targets

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def hint(self, name: str) -> str:
        """A did-you-mean suggestion for ``name`` or the list of known names."""
        close = difflib.get_close_matches(name, self.names(), n=1)
        if close:
            return f"did you mean '{close[0]}'?"
        return "known: " + ", ".join(self.names())

    def get(self, name: str) -> T:
        if name not in self._targets:  # a built-in needs no scan: an entry point never replaces it
            self._scan()
        if name in self._loaded:
            return self._loaded[name]
        target = self._targets.get(name)
        if target is None:
            raise UnknownPluginError(f"unknown {self.kind} '{name}'; {self.hint(name)}")
        module_name, _, attr = target.partition(":")
        module = importlib.import_module(module_name)
        value: T = getattr(module, attr)
        lacking = self._missing(value) if self._missing is not None else ()
        if lacking:
            raise IncompletePluginError(
                f"{self.kind} '{name}' ({target}) lacks {', '.join(lacking)}"
                + (f"; {self._fix}" if self._fix else "")
            )
        self._loaded[name] = value
        return value
