"""YAML to plain data, remembering where every key and value came from (line, column).

Only plain data comes out: mappings with text keys, lists, text, numbers, booleans, null and
dates. Everything else is refused with a position and a fix instead of reaching the caller:
tags (``!!python/...`` is never constructed, let alone run), duplicate keys, keys that are not
text, merge keys, control characters in text, recursive aliases, nesting deeper than
:data:`MAX_DEPTH` and more than :data:`MAX_VALUES` values once aliases are expanded (an alias
bomb composes to a few shared nodes but would expand exponentially).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import yaml

Path_ = tuple[str | int, ...]

MAX_DEPTH = 64  # nesting levels, aliases included (a suite needs about 6)
MAX_VALUES = 100_000  # values once aliases are expanded (a suite holds a few hundred)
MAX_PROBLEMS = 20  # problems reported from one file before giving up

SYNTAX_HINT = "check the indentation and colons on this line and the one above"
DEPTH_HINT = "flatten the structure; a suite needs only a few levels"
_YAML = "tag:yaml.org,2002:"
_SCALAR_TAGS = frozenset(_YAML + t for t in ("str", "int", "float", "bool", "null", "timestamp"))
# plain '<<' and '=' resolve to these; as values (and '=' as a key) they are just text
_TEXT_TAGS = frozenset({_YAML + "merge", _YAML + "value"})
# C0 and C1 controls and DEL; text values may hold tabs and line breaks, keys may not
_VALUE_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_KEY_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
# PyYAML problem text -> (message, fix) for the cases where the generic fix would mislead
_KNOWN_PROBLEMS = (
    ("'\\t'", "a tab character where YAML expects spaces", "indent with spaces, not tabs"),
    (
        "expected a single document",
        "a second YAML document ('---'); a suite file holds one",
        "remove the '---' line and what follows it, or move that part to its own file",
    ),
    ("found duplicate anchor", None, "give each anchor (&name) its own name"),
    ("found undefined alias", None, "define the anchor (&name) before the alias (*name)"),
)


@dataclass(frozen=True)
class Located:
    """Plain data plus 1-based (line, column) positions of values and of mapping keys."""

    data: Any
    values: dict[Path_, tuple[int, int]] = field(default_factory=dict)
    keys: dict[Path_, tuple[int, int]] = field(default_factory=dict)

    def position(self, loc: Path_, *, prefer_key: bool = False) -> tuple[int, int]:
        """Best position for ``loc``: the exact key or value, else its nearest ancestor."""
        for depth in range(len(loc), -1, -1):
            prefix = tuple(loc[:depth])
            first, second = (self.keys, self.values) if prefer_key else (self.values, self.keys)
            if prefix in first:
                return first[prefix]
            if prefix in second:
                return second[prefix]
        return (1, 1)


@dataclass(frozen=True)
class YamlProblem:
    """One thing wrong in a YAML file: 1-based position, what is wrong and the fix."""

    line: int
    column: int
    message: str
    hint: str = SYNTAX_HINT


class YamlSyntaxError(Exception):
    """The file is not plain YAML data; ``problems`` lists each problem (the first is also
    ``line``, ``column``, ``message`` and ``hint``)."""

    def __init__(self, line: int, column: int, message: str, hint: str = SYNTAX_HINT) -> None:
        self.problems: tuple[YamlProblem, ...] = (YamlProblem(line, column, message, hint),)
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message
        self.hint = hint

    @classmethod
    def of(cls, problems: list[YamlProblem]) -> YamlSyntaxError:
        first = problems[0]
        error = cls(first.line, first.column, first.message, first.hint)
        error.problems = tuple(problems)
        return error


def load_located(text: str) -> Located:
    """Parse one YAML document into plain data; raise :class:`YamlSyntaxError` naming every
    problem (up to :data:`MAX_PROBLEMS`) with its position."""
    import yaml

    try:
        loader = _make_loader()(text)
        try:
            node = loader.get_single_node()
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as exc:
        raise YamlSyntaxError.of([_marked_problem(exc)]) from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError.of([_reader_problem(exc, text)]) from None
    except RecursionError:  # a guard: the depth limit keeps the composer far from it
        raise YamlSyntaxError(1, 1, "the file nests too deeply", DEPTH_HINT) from None
    located = Located(data=None)
    if node is None:
        return located
    converter = _Converter(loader, located)
    data = converter.run(node)
    if converter.problems:
        raise YamlSyntaxError.of(converter.problems)
    return Located(data=data, values=located.values, keys=located.keys)


def _marked_problem(exc: yaml.MarkedYAMLError) -> YamlProblem:
    mark = exc.problem_mark or exc.context_mark
    line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
    problem = exc.problem or "invalid YAML"
    message = f"{problem} {exc.context}" if exc.context else problem
    hint = SYNTAX_HINT
    for fragment, better, fix in _KNOWN_PROBLEMS:
        if fragment in message:
            message, hint = better or message, fix
            break
    return YamlProblem(line, col, message, hint)


def _reader_problem(exc: yaml.YAMLError, text: str) -> YamlProblem:
    position = getattr(exc, "position", None)
    character = getattr(exc, "character", None)
    message = (
        f"character U+{character:04X} is not allowed in YAML text"
        if isinstance(character, int)
        else (str(exc).splitlines() or ["invalid YAML"])[0]
    )
    if not isinstance(position, int):
        return YamlProblem(1, 1, message, "save the file as plain UTF-8 text")
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    return YamlProblem(line, column, message, "save the file as plain UTF-8 text")


def _make_loader() -> type:
    import yaml

    class Loader(yaml.SafeLoader):
        """SafeLoader's composer with a depth limit and recursive aliases refused (raising
        :class:`YamlSyntaxError`, which passes through PyYAML untouched)."""

        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.depth = 0
            self.aliases = 0
            self.open_anchors: set[str] = set()

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            if isinstance(event, yaml.AliasEvent):
                if event.anchor in self.open_anchors:
                    raise YamlSyntaxError(
                        *_at(event),
                        f"the alias *{event.anchor} sits inside the value it names "
                        "(a recursive alias)",
                        "an alias may only name a value that is complete before it",
                    )
                self.aliases += 1
                return super().compose_node(parent, index)
            if self.depth >= MAX_DEPTH:
                raise YamlSyntaxError(
                    *_at(event), f"nesting deeper than {MAX_DEPTH} levels", DEPTH_HINT
                )
            anchor = getattr(event, "anchor", None)
            self.depth += 1
            if anchor is not None:
                self.open_anchors.add(anchor)
            try:
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1
                if anchor is not None:
                    self.open_anchors.discard(anchor)

    return Loader


class _Stop(Exception):
    """Conversion cannot go on (size or depth limit, too many problems)."""


def _at(node: Any) -> tuple[int, int]:
    return (node.start_mark.line + 1, node.start_mark.column + 1)


def _shown_tag(tag: str) -> str:
    return "!!" + tag[len(_YAML) :] if tag.startswith(_YAML) else tag


_KINDS = {"MappingNode": "a mapping", "SequenceNode": "a list"}
_AS = {
    _YAML + "int": "a whole number",
    _YAML + "float": "a number",
    _YAML + "bool": "true or false",
    _YAML + "timestamp": "a date",
}


class _Converter:
    """Walks composed nodes into plain data, filling ``located`` and collecting problems."""

    def __init__(self, loader: Any, located: Located) -> None:
        self.loader = loader
        self.located = located
        self.problems: list[YamlProblem] = []
        self.count = 0

    def run(self, node: Any) -> Any:
        try:
            return self.convert(node, (), 1)
        except _Stop:
            return None

    def problem(self, node: Any, message: str, hint: str, *, fatal: bool = False) -> None:
        problem = YamlProblem(*_at(node), message, hint)
        if problem not in self.problems:  # a shared (aliased) node is walked once per use
            self.problems.append(problem)
        if fatal or len(self.problems) >= MAX_PROBLEMS:
            raise _Stop

    def convert(self, node: Any, path: Path_, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            if self.loader.aliases:
                message = f"more than {MAX_VALUES} values once aliases are expanded (alias bomb?)"
                hint = "use fewer aliases (*name)"
            else:
                message, hint = f"more than {MAX_VALUES} values", "split the suite"
            self.problem(node, message, hint, fatal=True)
        if depth > MAX_DEPTH:
            self.problem(
                node,
                f"nesting deeper than {MAX_DEPTH} levels through aliases",
                DEPTH_HINT,
                fatal=True,
            )
        self.located.values[path] = _at(node)
        kind = type(node).__name__
        if kind == "MappingNode":
            return self.mapping(node, path, depth) if self.allowed(node, _YAML + "map") else None
        if kind == "SequenceNode":
            if not self.allowed(node, _YAML + "seq"):
                return None
            return [self.convert(item, (*path, i), depth + 1) for i, item in enumerate(node.value)]
        if node.tag in _TEXT_TAGS:
            return str(node.value)
        if node.tag not in _SCALAR_TAGS:
            self.allowed(node, "")
            return None
        value = self.scalar(node)
        if isinstance(value, str) and (bad := _VALUE_CONTROL.search(value)):
            self.problem(
                node,
                f"control character {ascii(bad.group())[1:-1]} in text",
                "remove it; suite text is plain",
            )
        return value

    def allowed(self, node: Any, tag: str) -> bool:
        if node.tag == tag:
            return True
        self.problem(
            node,
            f"the tag {_shown_tag(node.tag)!r} is not allowed (suites hold plain data)",
            "remove the tag",
        )
        return False

    def scalar(self, node: Any) -> Any:
        import yaml

        try:
            return self.loader.construct_object(node, deep=True)
        except (ValueError, TypeError, KeyError, AttributeError, OverflowError, yaml.YAMLError):
            # e.g. a date that does not exist (2026-13-45), !!int abc, 5000 digits
            self.problem(
                node,
                f"cannot read {node.value[:40]!r} as {_AS.get(node.tag, _shown_tag(node.tag))}",
                "fix the value, or quote it to keep it as text",
            )
            return None

    def mapping(self, node: Any, path: Path_, depth: int) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, int] = {}
        for key_node, value_node in node.value:
            key = self.key(key_node)
            if key is None:
                continue
            line = key_node.start_mark.line + 1
            if key in seen:
                self.problem(
                    key_node,
                    f"duplicate key {key[:40]!r} (first on line {seen[key]})",
                    "keep one of the two",
                )
                continue
            seen[key] = line
            child = (*path, key)
            self.located.keys[child] = _at(key_node)
            result[key] = self.convert(value_node, child, depth + 1)
        return result

    def key(self, node: Any) -> str | None:
        kind = _KINDS.get(type(node).__name__)
        if kind is not None:
            self.problem(node, f"a key must be text, got {kind}", "write the key as plain text")
            return None
        if node.tag == _YAML + "merge":
            self.problem(
                node,
                "merge keys (<<) are not supported",
                "write the keys out, or share the whole value with an alias (*name)",
            )
            return None
        if node.tag not in _SCALAR_TAGS | _TEXT_TAGS:
            self.allowed(node, "")
            return None
        key = str(node.value) if node.tag in _TEXT_TAGS else self.scalar(node)
        if not isinstance(key, str):
            shown = "null" if key is None else repr(key)
            self.problem(
                node,
                f"a key must be text, got {shown} ({_shown_tag(node.tag)})",
                f"quote it: '{node.value[:40]}':" if node.value else "give the key a name",
            )
            return None
        if bad := _KEY_CONTROL.search(key):
            self.problem(
                node,
                f"control character {ascii(bad.group())[1:-1]} in a key",
                "remove it; keys are plain names",
            )
            return None
        return key
