"""BFCL question and possible-answer files into live prompt files (YAML, tools per prompt).

Reads the Berkeley Function Calling Leaderboard's data (the ``bfcl-eval`` wheel, or a directory
holding ``BFCL_v4_<category>.json`` and ``possible_answer/``), never the network. Each entry
becomes a prompt with its own tools inline (BFCL reuses tool names with different schemas
across entries). BFCL's types become JSON Schema: ``dict`` -> ``object``, ``float`` ->
``number``, ``tuple`` -> ``array`` (a tuple arrives as a JSON list), ``any`` -> no ``type`` (any
value); ``integer``, ``string``, ``boolean``, ``array`` stay. In a possible answer, ``""`` among
an argument's values marks it optional; a nested dict's values are acceptable lists of their own
and are expanded into whole acceptable dicts. An entry that cannot be taken is listed with a
one-line reason and counted, never half imported.
"""

from __future__ import annotations

import itertools
import json
import re
import zipfile
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.toolcalls.live import Category
from harness.toolcalls.schema import mismatch

PREFIX = "BFCL_v4_"
ANSWERS = "possible_answer"
WHEEL_DATA = "bfcl_eval/data/"
MAX_EXPANDED = 256  # acceptable whole values one nested argument may expand to
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
PER_FILE = 100  # prompts per written file (the YAML loader caps the values in one file)

# BFCL file stem -> our category; file names are BFCL_v4_<stem>.json
CATEGORIES: Mapping[str, Category] = {
    "simple_python": Category.SIMPLE,
    "multiple": Category.MULTIPLE,
    "parallel": Category.PARALLEL,
    "parallel_multiple": Category.PARALLEL_MULTIPLE,
    "irrelevance": Category.IRRELEVANCE,
    "live_simple": Category.SIMPLE,
    "live_multiple": Category.MULTIPLE,
    "live_parallel": Category.PARALLEL,
    "live_parallel_multiple": Category.PARALLEL_MULTIPLE,
    "live_irrelevance": Category.IRRELEVANCE,
}
_ABSENT = object()  # a nested key the answer lets be left out
_TYPES = {"dict": "object", "float": "number", "tuple": "array"}


class BfclImportError(Exception):
    """The source is not BFCL data (missing file, bad JSON); one line naming it and the fix."""


class _Skip(Exception):
    """An entry we cannot take; the message is the one-line reason."""


@dataclass(frozen=True)
class Skipped:
    file: str  # BFCL stem, e.g. "live_irrelevance"
    id: str
    reason: str


@dataclass(frozen=True)
class Imported:
    """Prompt files (file stem -> YAML-ready document) and the entries left out."""

    files: Mapping[str, Mapping[str, Any]]
    skipped: tuple[Skipped, ...]

    def count(self, stem: str) -> int:
        return len(self.files[stem]["prompts"]) if stem in self.files else 0

    def counts(self) -> dict[str, tuple[int, int]]:
        """Per BFCL stem taken or left, in :data:`CATEGORIES` order: (imported, skipped)."""
        left = Counter(s.file for s in self.skipped)
        return {
            stem: (self.count(stem), left[stem])
            for stem in CATEGORIES
            if self.count(stem) or left[stem]
        }


def _reader(source: Path) -> Any:
    """A function name -> text (or None when absent) over a wheel or a directory."""
    if source.is_file():
        try:
            archive = zipfile.ZipFile(source)
        except zipfile.BadZipFile as exc:
            raise BfclImportError(
                f"{source}: not a wheel ({exc}); give the bfcl-eval .whl"
            ) from exc
        names = set(archive.namelist())

        def from_wheel(name: str) -> str | None:
            full = WHEEL_DATA + name
            return archive.read(full).decode("utf-8") if full in names else None

        return from_wheel
    if source.is_dir():
        root = source / "bfcl_eval" / "data" if (source / "bfcl_eval").is_dir() else source

        def from_dir(name: str) -> str | None:
            path = root / name
            return path.read_text(encoding="utf-8") if path.is_file() else None

        return from_dir
    raise BfclImportError(f"{source}: no such file or directory; give the wheel or BFCL data dir")


def _lines(text: str, name: str) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            yield json.loads(line)
        except json.JSONDecodeError as exc:
            raise BfclImportError(f"{name}:{number}: invalid JSON ({exc.msg})") from exc


def convert_schema(schema: Any) -> Any:
    """BFCL's parameter schema as JSON Schema (types renamed, ``any`` left untyped)."""
    if isinstance(schema, list):
        return [convert_schema(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value != "any":
                out[key] = _TYPES.get(value, value)
        elif key in ("properties",) and isinstance(value, dict):
            out[key] = {k: convert_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "anyOf", "oneOf"):
            out[key] = convert_schema(value)
        else:
            out[key] = value
    return out


def _tool(function: Mapping[str, Any]) -> dict[str, Any]:
    parameters = convert_schema(function.get("parameters") or {"type": "object"})
    return {
        "name": function["name"],
        "description": function.get("description") or "",
        "parameters": parameters,
    }


def expand(value: Any) -> list[Any]:
    """A possible-answer value as whole acceptable values: a dict of acceptable lists becomes
    every dict it allows ("" leaves the key out); a list of such dicts, every list."""
    if isinstance(value, dict):
        keys = list(value)
        options: list[list[Any]] = []
        for key in keys:
            choices = value[key] if isinstance(value[key], list) else [value[key]]
            flat: list[Any] = []
            for choice in choices:
                flat.extend([_ABSENT] if choice == "" else expand(choice))
            options.append(flat)
        found: list[Any] = []
        for combo in itertools.product(*options):
            found.append({k: v for k, v in zip(keys, combo, strict=True) if v is not _ABSENT})
            if len(found) > MAX_EXPANDED:
                raise _Skip(f"nested answer allows over {MAX_EXPANDED} values")
        return found
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        combos = itertools.product(*(expand(v) for v in value))
        items = [list(c) for c in itertools.islice(combos, MAX_EXPANDED + 1)]
        if len(items) > MAX_EXPANDED:
            raise _Skip(f"nested answer allows over {MAX_EXPANDED} values")
        return items
    return [value]


def _expected(answer: Mapping[str, Any], tools: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    if len(answer) != 1:
        raise _Skip(f"an answer call names {len(answer)} functions, not one")
    name, arguments = next(iter(answer.items()))
    tool = next((t for t in tools if t["name"] == name), None)
    if tool is None:
        raise _Skip(f"answer calls {name!r}, which is not among the entry's functions")
    properties = tool["parameters"].get("properties") or {}
    required = set(tool["parameters"].get("required") or [])
    call: dict[str, Any] = {"name": name, "arguments": {}, "optional": {}}
    for key, choices in arguments.items():
        if key not in properties:
            raise _Skip(f"answer argument {name}.{key} is not in the schema")
        values: list[Any] = []
        for choice in choices:
            if choice != "":
                values.extend(expand(choice))
        for value in values:  # the types all the way down, as the matcher judges them
            bad = mismatch(value, properties[key], f"{name}.{key}")
            if bad:
                raise _Skip(f"{bad.path}: answer {bad.value!r} is not {'|'.join(bad.types)}")
        if not values and "" not in choices:
            raise _Skip(f"{name}.{key} has no acceptable value (BFCL data fault)")
        if "" not in choices or key in required:
            # BFCL's checker wants every schema-required argument, "" or not
            if not values:
                raise _Skip(f'{name}.{key} is required but its only answer is "" (absent)')
            call["arguments"][key] = values
        elif values:
            call["optional"][key] = values
        # only "" acceptable: the argument must be left out, so it is not listed at all
    missing = sorted(required - set(call["arguments"]))
    if missing:
        raise _Skip(f"{name}: required {missing} have no answer")
    return {k: v for k, v in call.items() if v or k == "name"}


def _shape(category: Category, tools: int, calls: int) -> None:
    ok, wanted = {
        Category.SIMPLE: (calls == 1 and tools == 1, "one tool and one call"),
        Category.MULTIPLE: (calls == 1 and tools >= 2, "2+ tools and one call"),
        Category.PARALLEL: (calls >= 2, "two or more calls"),
        Category.PARALLEL_MULTIPLE: (calls >= 2 and tools >= 2, "2+ tools and 2+ calls"),
        Category.IRRELEVANCE: (calls == 0, "no call"),
    }[category]
    if not ok:
        raise _Skip(f"{tools} tools and {calls} calls; {category.value} needs {wanted}")


def _check_text(value: Any) -> None:
    if isinstance(value, str) and _CONTROL.search(value):
        raise _Skip("control character in text (the YAML loader refuses them)")
    if isinstance(value, dict):
        for k, v in value.items():
            _check_text(k)
            _check_text(v)
    elif isinstance(value, list):
        for v in value:
            _check_text(v)


def _entry(entry: Mapping[str, Any], answer: Mapping[str, Any] | None, cat: Category) -> dict:
    turns = entry.get("question") or []
    if len(turns) != 1:
        raise _Skip(f"{len(turns)} turns; only single-turn entries are taken")
    roles = [m.get("role") for m in turns[0]]
    if roles not in (["user"], ["system", "user"]):
        raise _Skip(f"messages {'+'.join(map(str, roles))}; only [system+]user are taken")
    functions = entry.get("function") or []
    if not functions:
        raise _Skip("no functions offered")
    tools = [_tool(f) for f in functions]
    names = [t["name"] for t in tools]
    if len(set(names)) != len(names):
        raise _Skip("two functions share a name")
    if cat is Category.IRRELEVANCE:
        expected: list[dict[str, Any]] = []
    elif answer is None:
        raise _Skip("no possible answer")
    else:
        expected = [_expected(call, tools) for call in answer.get("ground_truth") or []]
    _shape(cat, len(tools), len(expected))
    prompt: dict[str, Any] = {"id": entry["id"]}
    if roles[0] == "system":
        prompt["system"] = turns[0][0]["content"]
    prompt["question"] = turns[0][-1]["content"]
    if not prompt["question"]:
        raise _Skip("empty question")
    prompt["tools"] = tools
    if expected:
        prompt["expected"] = expected
    _check_text(prompt)
    return prompt


def import_bfcl(source: str | Path, stems: Sequence[str] | None = None) -> Imported:
    """The BFCL categories ``stems`` (default: every one in :data:`CATEGORIES`) from a wheel or
    a directory, as prompt files; raises BfclImportError when a category file is missing."""
    read = _reader(Path(source))
    files: dict[str, dict[str, Any]] = {}
    skipped: list[Skipped] = []
    for stem in stems or list(CATEGORIES):
        if stem not in CATEGORIES:
            known = ", ".join(CATEGORIES)
            raise BfclImportError(f"unknown BFCL category {stem!r}; use one of: {known}")
        category = CATEGORIES[stem]
        name = f"{PREFIX}{stem}.json"
        text = read(name)
        if text is None:
            raise BfclImportError(f"{source}: no {name}; is this bfcl-eval's data?")
        answers: dict[str, Any] = {}
        answer_text = read(f"{ANSWERS}/{name}")
        if answer_text is not None:
            answers = {a["id"]: a for a in _lines(answer_text, f"{ANSWERS}/{name}")}
        elif category is not Category.IRRELEVANCE:
            raise BfclImportError(f"{source}: no {ANSWERS}/{name}; is this bfcl-eval's data?")
        prompts = []
        for entry in _lines(text, name):
            try:
                prompts.append(_entry(entry, answers.get(entry["id"]), category))
            except _Skip as why:
                skipped.append(Skipped(stem, str(entry.get("id")), str(why)))
        if prompts:
            files[stem] = {"category": category.value, "prompts": prompts}
    return Imported(files, tuple(skipped))


def write(imported: Imported, out: str | Path) -> list[Path]:
    """Write ``bfcl_<stem>[_NN].yaml`` (at most :data:`PER_FILE` prompts each) per category and
    ``skipped.txt`` (file, id, reason; tab-separated); return the files written."""
    import yaml

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    written = []
    header = "# Imported from BFCL (gorilla, Apache-2.0) by mlx-harness toolcalls import-bfcl\n"
    for stem, document in imported.files.items():
        prompts = list(document["prompts"])
        chunks = [prompts[i : i + PER_FILE] for i in range(0, len(prompts), PER_FILE)]
        for number, chunk in enumerate(chunks, 1):
            suffix = f"_{number:02d}" if len(chunks) > 1 else ""
            path = root / f"bfcl_{stem}{suffix}.yaml"
            part = {"category": document["category"], "prompts": chunk}
            body = yaml.safe_dump(part, sort_keys=False, allow_unicode=True, width=100)
            path.write_text(header + body, encoding="utf-8")
            written.append(path)
    path = root / "skipped.txt"
    path.write_text("".join(f"{s.file}\t{s.id}\t{s.reason}\n" for s in imported.skipped))
    written.append(path)
    return written
