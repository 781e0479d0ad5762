"""A value escaped once however often a table shows it: the escaper's answer for each distinct
value (of its type: ``1``, ``1.0`` and ``True`` are shown apart, and so are a str and a Markup
of the same text), kept for one table's rows."""

from __future__ import annotations

from collections.abc import Callable


class ShownOnce(dict[object, str]):
    """Calls ``escaper`` once per distinct value (and type) and answers repeats from memory.

    ``shown(value)`` takes any value; a loop over many cells may index a plain str directly,
    ``shown[text]`` (a str is its own key, anything else is keyed with its type)."""

    def __init__(self, escaper: Callable[[object], str]) -> None:
        super().__init__()
        self._escaper = escaper

    def __missing__(self, key: object) -> str:
        value = key if type(key) is str else key[1]  # type: ignore[index]
        text = self[key] = self._escaper(value)
        return text

    def __call__(self, value: object) -> str:
        try:
            return self[value] if type(value) is str else self[(type(value), value)]
        except TypeError:  # unhashable: escaped each time
            return self._escaper(value)
