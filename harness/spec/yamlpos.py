"""YAML to plain data, remembering where every key and value came from (line, column)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Path_ = tuple[str | int, ...]


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


class YamlSyntaxError(Exception):
    def __init__(self, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.column = column
        self.message = message


def load_located(text: str) -> Located:
    """Parse one YAML document; raise :class:`YamlSyntaxError` with a position on bad syntax."""
    import yaml

    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or "invalid YAML"
        context = f" {exc.context}" if exc.context else ""
        raise YamlSyntaxError(line, col, f"{problem}{context}") from None
    except yaml.YAMLError as exc:
        raise YamlSyntaxError(1, 1, str(exc).splitlines()[0]) from None
    located = Located(data=None)
    if node is None:
        return located
    data = _convert(node, (), located)
    return Located(data=data, values=located.values, keys=located.keys)


def _convert(node: Any, path: Path_, out: Located) -> Any:
    import yaml

    out.values[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.MappingNode):
        result: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = yaml.SafeLoader(  # scalars construct without a full document
                ""
            ).construct_object(key_node, deep=True)
            child = (*path, key if isinstance(key, (str, int)) else str(key))
            out.keys[child] = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            result[key] = _convert(value_node, child, out)
        return result
    if isinstance(node, yaml.SequenceNode):
        return [_convert(item, (*path, i), out) for i, item in enumerate(node.value)]
    return yaml.SafeLoader("").construct_object(node, deep=True)
