"""A value escaped once however often a table shows it: the escaper's answer for each distinct
value (of its type: ``1`` and ``1.0`` are shown apart), kept for one table's rows."""

from __future__ import annotations

from collections.abc import Callable


class ShownOnce:
    """Calls ``escaper`` once per distinct value (and type) and answers repeats from memory."""

    def __init__(self, escaper: Callable[[object], str]) -> None:
        self._escaper = escaper
        self._shown: dict[tuple[type, object], str] = {}

    def __call__(self, value: object) -> str:
        key = (type(value), value)
        try:
            return self._shown[key]
        except KeyError:
            text = self._shown[key] = self._escaper(value)
            return text
        except TypeError:  # unhashable: escaped each time
            return self._escaper(value)
