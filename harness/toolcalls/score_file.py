"""Score tool calls made elsewhere: a JSONL of outputs per prompt id against live prompt data.

Each line is ``{"id": ..., "calls": [{"name", "arguments"}]}`` (decoded calls) or ``{"id": ...,
"text": ..., "parser": ...}`` (raw model text, read by the named parser as its server would;
``finish_reason`` ``"length"`` marks a cut reply). Ids are the live data's (``simple/<slug>``;
imported BFCL: ``simple/simple_python_0``). Every error is one ``file:line: what; fix`` line,
all collected before raising. The score names its string-match mode.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from harness.toolcalls.classify import CallFailure, CallVerdict
from harness.toolcalls.formats import format_names, resolve
from harness.toolcalls.live import Category, Prompt
from harness.toolcalls.match import score
from harness.toolcalls.model import CorpusCase, Extraction, ToolCall
from harness.toolcalls.scorer import extract_case
from harness.toolcalls.values import StringMatch


class OutputsInvalid(Exception):
    """Raised with every error found in an outputs file; each is one line."""

    def __init__(self, errors: list[str]) -> None:
        super().__init__("\n".join(errors))
        self.errors = errors


class _Call(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    arguments: Any = Field(default_factory=dict)


class _Output(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    id: str = Field(min_length=1)
    calls: list[_Call] | None = None
    text: str | None = None
    parser: str | None = None
    finish_reason: Literal["stop", "length"] = "stop"


@dataclass(frozen=True)
class Output:
    """One prompt's answer: decoded calls, or text and the parser that reads it."""

    id: str
    line: int
    calls: tuple[ToolCall, ...] | None
    text: str | None
    parser: str | None
    finish_reason: Literal["stop", "length"]


@dataclass(frozen=True)
class Result:
    prompt: Prompt
    verdict: CallVerdict


@dataclass(frozen=True)
class FileScore:
    results: tuple[Result, ...]
    unanswered: tuple[str, ...]  # prompt ids with no line in the file
    strings: StringMatch

    def categories(self) -> dict[Category, list[Result]]:
        found: dict[Category, list[Result]] = {}
        for result in self.results:
            found.setdefault(result.prompt.category, []).append(result)
        return {c: found[c] for c in Category if c in found}


def read_outputs(
    path: str | Path, prompts: Mapping[str, Prompt], parser: str | None = None
) -> list[Output]:
    """The file's outputs, each for a known prompt; raises OutputsInvalid."""
    source = Path(path)
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise OutputsInvalid([f"{source}: cannot read ({exc.strerror}); check the path"]) from exc
    errors: list[str] = []
    found: list[Output] = []
    seen: dict[str, int] = {}
    known_parsers = format_names()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{source}:{number}"
        try:
            raw = _Output.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            errors.append(f"{where}: invalid JSON ({exc.msg}); write one JSON object per line")
            continue
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "line"
            errors.append(
                f"{where}: {field}: {first['msg']}; a line is "
                '{"id", "calls": [{"name", "arguments"}]} or {"id", "text", "parser"}'
            )
            continue
        if raw.id not in prompts:
            sample = next(iter(prompts), "simple/<slug>")
            errors.append(f"{where}: unknown id {raw.id!r}; use the data's ids, e.g. {sample!r}")
            continue
        if raw.id in seen:
            errors.append(f"{where}: id {raw.id!r} again (first on line {seen[raw.id]}); keep one")
            continue
        seen[raw.id] = number
        name = raw.parser or parser
        if (raw.calls is None) == (raw.text is None):
            errors.append(f"{where}: give either 'calls' (decoded) or 'text' (raw model output)")
            continue
        if raw.text is not None:
            if name is None:
                errors.append(f"{where}: 'text' needs a parser; add \"parser\" or --parser")
                continue
            if name not in known_parsers and not resolve(name):
                errors.append(
                    f"{where}: unknown parser {name!r}; use one of: {', '.join(known_parsers)}"
                )
                continue
            if not resolve(name):
                errors.append(f"{where}: parser {name!r} is not installed here; install it")
                continue
        calls = None
        if raw.calls is not None:
            calls = tuple(ToolCall(c.name, c.arguments) for c in raw.calls)
        found.append(Output(raw.id, number, calls, raw.text, name, raw.finish_reason))
    if errors:
        raise OutputsInvalid(errors)
    return found


def _judge(prompt: Prompt, output: Output, strings: StringMatch) -> CallVerdict:
    if output.calls is not None:
        return score(prompt.expected, Extraction(output.calls, ""), (), prompt.tools, strings)
    assert output.text is not None and output.parser is not None
    impl = resolve(output.parser)[0]
    case = CorpusCase(
        id=output.id,
        parser=impl.format.name,
        text=output.text,
        expected=(),
        source=str(output.line),
        tools=prompt.tools,
        finish_reason=output.finish_reason,
    )
    got = extract_case(case, impl)
    return score(prompt.expected, got, impl.format.markup, prompt.tools, strings)


def score_outputs(
    prompts: Sequence[Prompt], outputs: Sequence[Output], strings: StringMatch
) -> FileScore:
    by_id = {p.id: p for p in prompts}
    results = tuple(Result(by_id[o.id], _judge(by_id[o.id], o, strings)) for o in outputs)
    answered = {o.id for o in outputs}
    return FileScore(results, tuple(p.id for p in prompts if p.id not in answered), strings)


def as_json(scored: FileScore, outputs: str, data: Sequence[str]) -> dict[str, Any]:
    """The record: per-category accuracy and failure classes, every verdict, the string mode."""

    def block(results: Sequence[Result]) -> dict[str, Any]:
        ok = sum(r.verdict.failure is CallFailure.OK for r in results)
        failures = Counter(
            r.verdict.failure.value for r in results if r.verdict.failure is not CallFailure.OK
        )
        return {
            "prompts": len(results),
            "ok": ok,
            "accuracy": ok / len(results) if results else None,
            "failures": dict(sorted(failures.items())),
        }

    return {
        "outputs": outputs,
        "data": list(data),
        "string_match": scored.strings.value,
        "overall": block(scored.results),
        "categories": {c.value: block(r) for c, r in scored.categories().items()},
        "unanswered": len(scored.unanswered),
        "results": [
            {
                "id": r.prompt.id,
                "category": r.prompt.category.value,
                "failure": r.verdict.failure.value,
                "detail": r.verdict.detail,
            }
            for r in scored.results
        ],
    }


def table(record: Mapping[str, Any]) -> list[str]:
    """Printable lines: one per category, then overall, naming the string mode."""
    lines = [f"string_match: {record['string_match']}"]
    rows = [*record["categories"].items(), ("overall", record["overall"])]
    for name, row in rows:
        failures = ", ".join(f"{k} {v}" for k, v in row["failures"].items()) or "-"
        share = f"{row['accuracy']:.1%}" if row["accuracy"] is not None else "-"
        lines.append(f"{name:<18} {row['ok']:>5}/{row['prompts']:<5} {share:>6}  {failures}")
    if record["unanswered"]:
        lines.append(f"{record['unanswered']} prompts had no output line (not scored)")
    return lines
