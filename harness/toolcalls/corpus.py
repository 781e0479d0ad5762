"""Corpus files: JSONL, one case a line, checked with pydantic; every error is one line.

Errors read ``file:line: what is wrong; how to fix it`` and are all collected before raising.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harness.toolcalls.formats import format_names, get_format
from harness.toolcalls.model import CorpusCase, KnownBroken, ParserOwner, ToolCall
from harness.toolcalls.schema import conforms, function_schema, parameter_schema, schema_types

_STRICT = ConfigDict(extra="forbid", strict=True, frozen=True)


class _KnownBrokenModel(BaseModel):
    model_config = _STRICT
    reason: str = Field(min_length=1)
    link: str = Field(min_length=1)
    backends: list[Literal["mlx_lm", "mlx_vlm", "harness"]] | None = None


class _CallModel(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class _CaseModel(BaseModel):
    model_config = _STRICT
    id: str = Field(min_length=1)
    parser: str = Field(min_length=1)
    text: str
    expected: list[_CallModel]
    tools: list[dict[str, Any]] | None = None
    note: str = ""
    known_broken: list[_KnownBrokenModel] = Field(default_factory=list)
    finish_reason: Literal["stop", "length"] = "stop"
    starts_in_reasoning: bool = False
    markup_in_content_ok: bool = False

    @field_validator("known_broken", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, dict) else value


FIELDS = tuple(_CaseModel.model_fields)

_HINTS = {
    "id": 'give a unique text id, e.g. "json_tools/two-calls"',
    "parser": "use a format name, e.g. json_tools or qwen3_coder",
    "text": "put the raw model output in one JSON string",
    "expected": 'give a list of {"name": ..., "arguments": {...}}; [] means no call',
    "name": "give the function name as text",
    "arguments": "give the arguments as a JSON object",
    "tools": 'give OpenAI tools: [{"type": "function", "function": {"name": ..., ...}}]',
    "note": "write the note as text",
    "known_broken": 'give {"reason": "...", "link": "..."} (optional "backends": ["mlx_lm"])',
    "reason": "say what the parser gets wrong",
    "link": "give an issue URL or the parser's source location",
    "backends": 'list some of "mlx_lm", "mlx_vlm", "harness"',
    "finish_reason": 'use "stop" (default) or "length" for output cut by the token limit',
    "starts_in_reasoning": "use true when the prompt left a think block open",
    "markup_in_content_ok": "use true when the content may legitimately show call markup",
}


class CorpusInvalid(Exception):
    """Raised with every error found; each is one line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


def _where(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text or "case"


def _describe(error: Any) -> str:
    loc = tuple(error.get("loc", ()))
    where = _where(loc)
    named = [p for p in loc if isinstance(p, str) and p in _HINTS]
    hint = _HINTS[named[-1]] if named else "see the corpus format"
    kind = error.get("type")
    if kind == "extra_forbidden":
        return f"unknown field {where!r}; remove it (fields: {', '.join(FIELDS)})"
    if kind == "missing":
        return f"missing field {where!r}; {hint}"
    got = error.get("input")
    shown = type(got).__name__ if isinstance(got, (dict, list)) else repr(got)[:40]
    return f"{where}: {error.get('msg', 'invalid')} (got {shown}); {hint}"


def _semantic(model: _CaseModel) -> list[str]:
    problems = []
    if get_format(model.parser) is None:
        names = ", ".join(format_names())
        problems.append(f"parser {model.parser!r} is not a known format; use one of: {names}")
    tools = model.tools
    for index, call in enumerate(model.expected):
        if tools is None:
            continue
        if function_schema(call.name, tools) is None:
            problems.append(
                f"expected[{index}]: {call.name!r} is not among the tools; add it or fix the name"
            )
            continue
        for key, value in call.arguments.items():
            types = schema_types(parameter_schema(call.name, key, tools))
            if not conforms(value, types):
                problems.append(
                    f"expected[{index}].arguments.{key}: {value!r} is not "
                    f"{'|'.join(types)} as the schema says; fix the value or the schema"
                )
    return problems


def _to_case(model: _CaseModel, source: str) -> CorpusCase:
    return CorpusCase(
        id=model.id,
        parser=model.parser,
        text=model.text,
        expected=tuple(ToolCall(c.name, dict(c.arguments)) for c in model.expected),
        source=source,
        tools=tuple(model.tools) if model.tools is not None else None,
        note=model.note,
        known_broken=tuple(
            KnownBroken(
                k.reason,
                k.link,
                tuple(ParserOwner(b) for b in k.backends) if k.backends is not None else None,
            )
            for k in model.known_broken
        ),
        finish_reason=model.finish_reason,
        starts_in_reasoning=model.starts_in_reasoning,
        markup_in_content_ok=model.markup_in_content_ok,
    )


def parse_corpus(text: str, path: str) -> tuple[list[CorpusCase], list[str]]:
    """Cases and one-line errors for the JSONL ``text`` of the file at ``path``."""
    cases: list[CorpusCase] = []
    errors: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        source = f"{path}:{number}"
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            errors.append(f"{source}: not JSON ({exc.msg}, column {exc.colno}); one object a line")
            continue
        if not isinstance(raw, dict):
            errors.append(f"{source}: a JSON {type(raw).__name__}, not an object; one case a line")
            continue
        try:
            model = _CaseModel.model_validate(raw)
        except ValidationError as exc:
            errors.extend(f"{source}: {_describe(e)}" for e in exc.errors())
            continue
        problems = _semantic(model)
        errors.extend(f"{source}: {p}" for p in problems)
        if not problems:
            cases.append(_to_case(model, source))
    return cases, errors


def corpus_files(paths: Iterable[str | Path]) -> list[Path]:
    """Files named directly, and the ``*.jsonl`` files under directories."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(path.rglob("*.jsonl")))
        elif path.exists():
            found.append(path)
        else:
            raise CorpusInvalid([f"{raw}: no such file or directory"])
    return found


def load_corpus(paths: Iterable[str | Path]) -> tuple[CorpusCase, ...]:
    """Every case in the files (directories: their ``*.jsonl``); raises CorpusInvalid."""
    cases: list[CorpusCase] = []
    errors: list[str] = []
    first_seen: dict[str, str] = {}
    for path in corpus_files(paths):
        found, problems = parse_corpus(path.read_text(encoding="utf-8"), str(path))
        errors.extend(problems)
        for case in found:
            if case.id in first_seen:
                errors.append(
                    f"{case.source}: duplicate id {case.id!r} (first at {first_seen[case.id]}); "
                    "give each case its own id"
                )
                continue
            first_seen[case.id] = case.source
            cases.append(case)
    if errors:
        raise CorpusInvalid(errors)
    return tuple(cases)
