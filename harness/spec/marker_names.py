"""Tags become pytest markers: which tags pytest can take, and a safe marker name for any text.

A tag's marker is the tag with every character other than a letter, digit or ``_`` written as
``_`` (``sliding-window`` -> ``-m sliding_window``). pytest refuses a marker whose name is
empty or starts with ``_`` (``MarkGenerator.__getattr__`` in ``_pytest/mark/structures.py``:
"Marker name must NOT start with underscore"), so a tag starts with a letter or a digit. In
``-m`` (``_pytest/mark/expression.py``) ``and``, ``or`` and ``not`` are operators, so no marker
can be selected by those names; and a built-in marker name would change the cases (a tag
``skip`` would skip them, ``xfail`` would expect them to fail). Those are refused too.
"""

from __future__ import annotations

MARKER_OPERATORS = frozenset({"and", "or", "not"})
# pytest's built-in markers that act on an item, and the harness's own
BUILTIN_MARKERS = frozenset(
    {"skip", "skipif", "xfail", "parametrize", "usefixtures", "filterwarnings", "harness_case"}
)


def _as_marker(text: str) -> str:
    return "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in text)


def tag_problem(tag: str) -> tuple[str, str] | None:
    """``(what is wrong, the fix)`` when ``tag`` cannot be a pytest marker, else None."""
    name = _as_marker(tag)
    if name in MARKER_OPERATORS:
        return f"tag {tag!r} is an operator in pytest -m", f"rename it, e.g. {name}_tag"
    if name in BUILTIN_MARKERS:
        return f"tag {tag!r} is a built-in pytest marker", f"rename it, e.g. {name}_tag"
    if not tag[:1].isalnum():
        return (
            f"tag {tag!r} must start with a letter or digit (pytest refuses marker names "
            "that are empty or start with _)",
            f"e.g. {marker_name(tag)}",
        )
    return None


def marker_name(text: str) -> str:
    """The marker for ``text``: a tag's marker as above, and for any other text a name pytest
    still takes (leading ``_`` dropped; an empty, operator or built-in name gets ``_tag``)."""
    name = _as_marker(text).lstrip("_")
    if not name or name in MARKER_OPERATORS or name in BUILTIN_MARKERS:
        return f"{name or 'unnamed'}_tag"
    return name
