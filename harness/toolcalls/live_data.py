"""Live prompt files (YAML), checked with pydantic; every error is one line.

A directory holds ``tools.yaml`` (the tool catalogue), ``fewshot.yaml`` (example turns) and one
file per category with its prompts (any other ``*.yaml``). A prompt names catalogue tools or
gives its own inline (imported BFCL data does, since BFCL reuses names across entries); a
directory whose prompts only give their own may leave out ``tools.yaml`` and ``fewshot.yaml``.
Errors read ``file:line:column: what is wrong; how to fix it`` and are all collected before
raising.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.core.yamlpos import Located, YamlSyntaxError, load_located
from harness.toolcalls.live import Category, ExpectedCall, FewShot, LiveSet, Prompt
from harness.toolcalls.schema import conforms, parameter_schema, schema_types

_STRICT = ConfigDict(extra="forbid", frozen=True)
TOOLS_FILE = "tools.yaml"
FEWSHOT_FILE = "fewshot.yaml"


class LiveDataInvalid(Exception):
    """Raised with every error found; each is one line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


class _Tool(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object"})


class _Catalogue(BaseModel):
    model_config = _STRICT
    tools: list[_Tool] = Field(min_length=1)


class _Call(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)


class _Example(BaseModel):
    model_config = _STRICT
    user: str = Field(min_length=1)
    calls: list[_Call] = Field(default_factory=list)
    answer: str | None = None


class _FewShot(BaseModel):
    model_config = _STRICT
    tools: list[str] = Field(default_factory=list)
    examples: list[_Example] = Field(min_length=1)


class _Expected(BaseModel):
    model_config = _STRICT
    name: str = Field(min_length=1)
    arguments: dict[str, list[Any]] = Field(default_factory=dict)
    optional: dict[str, list[Any]] = Field(default_factory=dict)


class _Prompt(BaseModel):
    model_config = _STRICT
    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    system: str | None = None
    tools: list[str | _Tool] = Field(min_length=1)
    expected: list[_Expected] = Field(default_factory=list)
    note: str = ""


class _PromptFile(BaseModel):
    model_config = _STRICT
    category: Category
    prompts: list[_Prompt] = Field(min_length=1)


def _read(path: Path, errors: list[str]) -> Located | None:
    try:
        return load_located(path.read_text(encoding="utf-8"))
    except OSError as exc:
        errors.append(f"{path}:1:1: cannot read file ({exc.strerror}); check the path")
    except YamlSyntaxError as exc:
        errors.append(f"{path}:{exc.line}:{exc.column}: invalid YAML: {exc.message}")
    return None


def _at(path: Path, located: Located, loc: Sequence[str | int], key: bool = False) -> str:
    line, column = located.position(tuple(loc), prefer_key=key)
    return f"{path}:{line}:{column}"


def _validate(model: type[Any], path: Path, located: Located, errors: list[str]) -> Any:
    try:
        return model.model_validate(located.data if located.data is not None else {})
    except ValidationError as exc:
        for error in exc.errors():
            loc = tuple(p for p in error["loc"] if not (isinstance(p, str) and "[" in p))
            where = ".".join(str(p) for p in loc) or "file"
            if error["type"] == "extra_forbidden":
                fields = ", ".join(sorted(_fields(model, loc[:-1])))
                message = f"unknown key {where!r}; remove it (keys here: {fields})"
            elif error["type"] == "missing":
                message = f"missing key {where!r}; add it"
            else:
                message = f"{where}: {error['msg']}; see suites/data/toolcalls/README.md"
            errors.append(
                f"{_at(path, located, loc, error['type'] == 'extra_forbidden')}: {message}"
            )
        return None


def _fields(model: type[Any], loc: Sequence[str | int]) -> list[str]:
    current = model
    for part in loc:
        if isinstance(part, int):
            continue
        info = current.model_fields.get(part)
        inner = getattr(info.annotation, "__args__", ()) if info else ()
        found = [a for a in inner if isinstance(a, type) and issubclass(a, BaseModel)]
        if not found:
            return list(current.model_fields)
        current = found[-1]
    return list(current.model_fields)


def _openai(tool: _Tool) -> dict[str, Any]:
    function = {"name": tool.name, "description": tool.description, "parameters": tool.parameters}
    return {"type": "function", "function": function}


def _catalogue(directory: Path, errors: list[str]) -> dict[str, dict[str, Any]]:
    path = directory / TOOLS_FILE
    if not path.exists() and not (directory / FEWSHOT_FILE).exists():
        return {}  # prompts with inline tools only
    located = _read(path, errors)
    parsed = _validate(_Catalogue, path, located, errors) if located else None
    if parsed is None or located is None:
        return {}
    found: dict[str, dict[str, Any]] = {}
    for index, tool in enumerate(parsed.tools):
        if tool.name in found:
            where = _at(path, located, ("tools", index, "name"))
            errors.append(f"{where}: duplicate tool {tool.name!r}; give each tool its own name")
        found[tool.name] = _openai(tool)
    return found


def _tools(
    given: Sequence[str | _Tool],
    catalogue: Mapping[str, dict[str, Any]],
    where: str,
    errors: list[str],
) -> tuple[dict[str, Any], ...]:
    """Catalogue tools by name, inline ones as they are."""
    names = [t for t in given if isinstance(t, str)]
    unknown = [n for n in names if n not in catalogue]
    if unknown:
        known = ", ".join(sorted(catalogue))
        errors.append(f"{where}: unknown tool(s) {unknown}; use one of: {known}")
    return tuple(
        _openai(t) if isinstance(t, _Tool) else catalogue[t]
        for t in given
        if isinstance(t, _Tool) or t in catalogue
    )


def _names(given: Sequence[str | _Tool]) -> list[str]:
    return [t.name if isinstance(t, _Tool) else t for t in given]


def _fewshot(directory: Path, catalogue: Mapping[str, Any], errors: list[str]) -> FewShot:
    path = directory / FEWSHOT_FILE
    if not path.exists() and not (directory / TOOLS_FILE).exists():
        return FewShot((), ())
    located = _read(path, errors)
    parsed = _validate(_FewShot, path, located, errors) if located else None
    if parsed is None or located is None:
        return FewShot((), ())
    tools = _tools(parsed.tools, catalogue, _at(path, located, ("tools",)), errors)
    messages: list[dict[str, Any]] = []
    for index, example in enumerate(parsed.examples):
        if bool(example.calls) == (example.answer is not None):
            where = _at(path, located, ("examples", index))
            errors.append(f"{where}: give either 'calls' or 'answer' (a reply without a call)")
            continue
        for call in example.calls:
            if call.name not in parsed.tools:
                where = _at(path, located, ("examples", index, "calls"))
                errors.append(f"{where}: {call.name!r} is not in fewshot tools; add it there")
        messages.append({"role": "user", "content": example.user})
        calls = [
            {"type": "function", "function": {"name": c.name, "arguments": dict(c.arguments)}}
            for c in example.calls
        ]
        reply: dict[str, Any] = {"role": "assistant", "content": example.answer or ""}
        if calls:
            reply["tool_calls"] = calls
        messages.append(reply)
    return FewShot(tuple(messages), tools)


def _check_expected(
    prompt: _Prompt, category: Category, tools: Sequence[Mapping[str, Any]], where: Any
) -> list[str]:
    problems = []
    calls = len(prompt.expected)
    names = _names(prompt.tools)
    if len(set(names)) != len(names):
        problems.append(f"{where('tools')}: a tool name appears twice; give each tool once")
    wanted = {
        Category.SIMPLE: (calls == 1 and len(prompt.tools) == 1, "one tool and one call"),
        Category.MULTIPLE: (calls == 1 and len(prompt.tools) >= 2, "2+ tools and one call"),
        Category.PARALLEL: (calls >= 2, "two or more calls"),
        Category.PARALLEL_MULTIPLE: (calls >= 2 and len(names) >= 2, "2+ tools and 2+ calls"),
        Category.IRRELEVANCE: (calls == 0, "no expected call"),
    }[category]
    if not wanted[0]:
        problems.append(f"{where('expected')}: a {category.value} prompt has {wanted[1]}")
    for index, call in enumerate(prompt.expected):
        at = where("expected", index)
        if call.name not in names:
            problems.append(f"{at}: {call.name!r} is not among the prompt's tools; add it")
            continue
        function = next(t["function"] for t in tools if t["function"]["name"] == call.name)
        parameters = function.get("parameters") or {}
        known = set(parameters.get("properties") or {})
        required = set(parameters.get("required") or [])
        overlap = set(call.arguments) & set(call.optional)
        if overlap:
            problems.append(f"{at}: {sorted(overlap)} both required and optional; pick one")
        if required - set(call.arguments):
            missing = sorted(required - set(call.arguments))
            problems.append(f"{at}: schema-required {missing} must be under 'arguments'")
        for kind, values in (("arguments", call.arguments), ("optional", call.optional)):
            for key, acceptable in values.items():
                if key not in known:
                    problems.append(f"{at}.{kind}.{key}: not a parameter of {call.name!r}")
                    continue
                types = schema_types(parameter_schema(call.name, key, tools))
                if not acceptable:
                    problems.append(f"{at}.{kind}.{key}: list at least one acceptable value")
                bad = [v for v in acceptable if not conforms(v, types)]
                if bad:
                    problems.append(
                        f"{at}.{kind}.{key}: {bad[0]!r} is not {'|'.join(types)} as the "
                        "schema says; fix the value or the schema"
                    )
    return problems


def _to_expected(call: _Expected) -> ExpectedCall:
    return ExpectedCall(
        call.name,
        {k: tuple(v) for k, v in call.arguments.items()},
        {k: tuple(v) for k, v in call.optional.items()},
    )


def _prompts(
    path: Path, catalogue: Mapping[str, dict[str, Any]], fewshot: FewShot, errors: list[str]
) -> list[Prompt]:
    located = _read(path, errors)
    parsed = _validate(_PromptFile, path, located, errors) if located else None
    if parsed is None or located is None:
        return []
    reserved = {t["function"]["name"] for t in fewshot.tools}
    found = []
    for index, prompt in enumerate(parsed.prompts):

        def where(*loc: str | int, _i: int = index) -> str:
            return _at(path, located, ("prompts", _i, *loc))

        tools = _tools(prompt.tools, catalogue, where("tools"), errors)
        clash = sorted(reserved & set(_names(prompt.tools)))
        if clash:
            errors.append(f"{where('tools')}: {clash} belong to the few-shot examples; drop them")
        if len(tools) != len(prompt.tools):
            continue
        problems = _check_expected(prompt, parsed.category, tools, where)
        errors.extend(problems)
        if problems:
            continue
        messages: list[dict[str, Any]] = []
        if prompt.system:
            messages.append({"role": "system", "content": prompt.system})
        messages.append({"role": "user", "content": prompt.question})
        found.append(
            Prompt(
                id=f"{parsed.category.value}/{prompt.id}",
                category=parsed.category,
                messages=tuple(messages),
                tools=tools,
                expected=tuple(_to_expected(c) for c in prompt.expected),
                source=where(),
            )
        )
    return found


def load_live(directory: str | Path, files: Sequence[str] = ("*.yaml",)) -> LiveSet:
    """Every prompt and the few-shot examples under ``directory`` (prompt files: those matching
    one of the glob patterns ``files``); raises LiveDataInvalid."""
    root = Path(directory)
    if not root.is_dir():
        raise LiveDataInvalid([f"{root}: no such directory; point 'data' at a live prompt set"])
    errors: list[str] = []
    catalogue = _catalogue(root, errors)
    fewshot = _fewshot(root, catalogue, errors)
    prompts: list[Prompt] = []
    seen: dict[str, str] = {}
    chosen = {path for pattern in files for path in root.glob(pattern)}
    for path in sorted(chosen):
        if path.name in (TOOLS_FILE, FEWSHOT_FILE) or path.suffix != ".yaml":
            continue
        for prompt in _prompts(path, catalogue, fewshot, errors):
            if prompt.id in seen:
                errors.append(
                    f"{prompt.source}: duplicate id {prompt.id!r} (first at {seen[prompt.id]})"
                )
                continue
            seen[prompt.id] = prompt.source
            prompts.append(prompt)
    if not prompts and not errors:
        wanted = " or ".join(files)
        errors.append(f"{root}: no prompt files ({wanted} besides tools.yaml and fewshot.yaml)")
    if errors:
        raise LiveDataInvalid(errors)
    return LiveSet(tuple(prompts), fewshot)
