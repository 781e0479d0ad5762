"""BFCL's checker and ours on the same entries and mutated outputs: verdicts side by side.

For every BFCL entry our importer takes, :mod:`bfcl_mutations` makes outputs; BFCL's
``ast_checker`` judges the decoded calls (a failed decode for broken text), ours judges the same
calls through ``toolcalls score``'s path (:func:`harness.toolcalls.score_file.score_outputs`;
broken text through the json_tools parser). A disagreement is either one of the differences we
keep on purpose (:data:`DIFFERENCES`, each recognised by a precise test, never by the kind
alone) or a fault to fix.

Run as a script (``make bfcl-agreement``) it prints the agreement table for every BFCL entry in
both string modes; tests/toolcalls/test_toolcalls_bfcl_agreement.py asserts it.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bfcl_mutations import Mutation, mutations
from bfcl_reference import BfclChecker, bfcl_checker

from harness.toolcalls.bfcl_import import ANSWERS, CATEGORIES, PREFIX
from harness.toolcalls.classify import CallFailure
from harness.toolcalls.live import Prompt
from harness.toolcalls.match import pairing
from harness.toolcalls.model import ToolCall
from harness.toolcalls.score_file import Output, score_outputs
from harness.toolcalls.values import StringMatch

STEMS = tuple(CATEGORIES)


@dataclass(frozen=True)
class Entry:
    stem: str
    id: str
    functions: tuple[Mapping[str, Any], ...]
    ground_truth: tuple[Mapping[str, Any], ...]


@dataclass(frozen=True)
class Judged:
    entry: Entry
    mutation: Mutation
    bfcl: bool
    bfcl_error: str
    ours: bool
    our_failure: str
    difference: str | None  # the documented difference that explains a disagreement

    @property
    def agree(self) -> bool:
        return self.bfcl == self.ours


def read_entries(root: Path, stems: Sequence[str] = STEMS) -> list[Entry]:
    """BFCL's entries and answers from the wheel's data folder under ``root``."""
    data = root / "bfcl_eval" / "data"
    found = []
    for stem in stems:
        questions = _jsonl(data / f"{PREFIX}{stem}.json")
        answers_path = data / ANSWERS / f"{PREFIX}{stem}.json"
        answers = {a["id"]: a for a in _jsonl(answers_path)} if answers_path.is_file() else {}
        for q in questions:
            truth = answers.get(q["id"], {}).get("ground_truth") or []
            found.append(Entry(stem, q["id"], tuple(q["function"]), tuple(truth)))
    return found


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _prompt_id(entry: Entry) -> str:
    return f"{CATEGORIES[entry.stem].value}/{entry.id}"


def _output(entry: Entry, mutation: Mutation) -> Output:
    pid = _prompt_id(entry)
    if mutation.calls is None:
        finish = "length" if mutation.cut else "stop"
        return Output(pid, 0, None, mutation.text, "json_tools", finish)
    calls = tuple(ToolCall(n, a) for call in mutation.calls for n, a in call.items())
    return Output(pid, 0, calls, None, None, "stop")


def _calls(mutation: Mutation) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(n, a) for call in mutation.calls or [] for n, a in call.items())


def _bfcl_greedy_missed(checker: BfclChecker, entry: Entry, prompt: Prompt, m: Mutation) -> bool:
    """Parallel calls BFCL fails by pairing greedily (each answer call takes the first output
    call that fits, in order) although a one-to-one pairing exists in which BFCL's own
    per-call checker passes every pair."""
    calls = _calls(m)
    if "parallel" not in entry.stem or len(calls) != len(prompt.expected):
        return False
    order = pairing(prompt.expected, calls, prompt.tools, StringMatch.BFCL)
    by_name = {f["name"]: f for f in entry.functions}
    for answer, j in zip(entry.ground_truth, order, strict=True):
        name = next(iter(answer))
        call = {calls[j].name: calls[j].arguments}
        if not checker.simple(by_name[name], call, answer):
            return False
    return True


def _broken_in_irrelevance(entry: Entry, m: Mutation, ours: str) -> bool:
    return "irrelevance" in entry.stem and m.calls is None and ours == "parse_error"


def _deep(value: Any, leaf: Callable[[Any], Any]) -> Any:
    if isinstance(value, dict):
        return {k: _deep(v, leaf) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep(v, leaf) for v in value]
    return leaf(value)


def _passes_bfcl_when(
    checker: BfclChecker, entry: Entry, m: Mutation, leaf: Callable[[Any], Any], answers: bool
) -> bool:
    """BFCL passes the output once ``leaf`` is applied to every value nested in an argument
    (a list item or an object value, at any depth; the answers' too when ``answers``)."""

    def nested(arguments: Mapping[str, Any]) -> dict[str, Any]:
        return {
            k: _deep(v, leaf) if isinstance(v, (dict, list)) else v for k, v in arguments.items()
        }

    calls = [{n: nested(a) for n, a in call.items()} for call in m.calls or []]
    truth = entry.ground_truth
    if answers:
        truth = tuple(
            {n: {k: [_deep(c, leaf) for c in v] for k, v in a.items()} for n, a in call.items()}
            for call in truth
        )
    valid, _ = checker.judge(entry.functions, calls, truth, entry.stem)
    return valid


def _number_as_float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


# Differences kept on purpose: name -> why. Each is recognised by a precise test on the
# disagreeing output (in judge_all), never by the mutation kind alone.
DIFFERENCES: Mapping[str, str] = {
    "broken_call_is_not_abstention": (
        "a malformed or cut tool call in an irrelevance prompt: BFCL counts the failed decode "
        "as 'no call', so as correct (gorilla #1362, #443); we score parse_error, since the "
        "model did try to call"
    ),
    "greedy_pairing": (
        "parallel calls: BFCL pairs each answer call with the first output call that fits, in "
        "order, and can miss a pairing that exists; we solve the assignment, and every pair "
        "of ours passes BFCL's own per-call checker"
    ),
    "integer_in_float_array": (
        "an integer inside an array of float (e.g. [1, 3]): BFCL rejects it although it takes "
        "an integer for a float argument at the top level; JSON has one number type and JSON "
        "Schema's number includes integers, so we take it at every depth (BFCL passes the "
        "same output with the integers written as floats)"
    ),
    "nested_text_normalised": (
        "text two or more levels down (a string in a list in an object): BFCL standardises "
        "strings one level deep only; in BFCL string mode we standardise at every depth (BFCL "
        "passes the same output once its own standardize_string is applied at every depth)"
    ),
    "strict_strings": (
        "string_match: strict only (our default): punctuation is significant ('Nashville, TN' "
        "is not 'Nashville TN'); under string_match: bfcl our verdict equals BFCL's"
    ),
}


def _difference(
    checker: BfclChecker,
    entry: Entry,
    prompt: Prompt,
    m: Mutation,
    failure: CallFailure,
    strings: StringMatch,
) -> str | None:
    """The documented difference behind a disagreement, if one is."""
    ok = failure is CallFailure.OK
    if _broken_in_irrelevance(entry, m, failure.value):
        return "broken_call_is_not_abstention"
    if strings is StringMatch.STRICT and not ok:
        again = score_outputs([prompt], [_output(entry, m)], StringMatch.BFCL).results[0]
        if again.verdict.failure is CallFailure.OK:
            return "strict_strings"
    if not ok or m.calls is None:
        return None
    if _bfcl_greedy_missed(checker, entry, prompt, m):
        return "greedy_pairing"
    if _passes_bfcl_when(checker, entry, m, _number_as_float, answers=False):
        return "integer_in_float_array"
    standardise = checker.module.standardize_string

    def text(value: Any) -> Any:
        return standardise(value) if isinstance(value, str) else value

    if _passes_bfcl_when(checker, entry, m, text, answers=True):
        return "nested_text_normalised"
    return None


def judge_all(
    checker: BfclChecker,
    entries: Sequence[Entry],
    prompts: Mapping[str, Prompt],
    strings: StringMatch = StringMatch.BFCL,
    kinds: Callable[[Mutation], bool] = lambda m: True,
) -> list[Judged]:
    """Both verdicts for every mutation of every entry our importer took."""
    judged: list[Judged] = []
    for entry in entries:
        prompt = prompts.get(_prompt_id(entry))
        if prompt is None:
            continue  # skipped by the importer (counted there, with its reason)
        chosen = [m for m in mutations(entry.functions, entry.ground_truth, entry.stem) if kinds(m)]
        ours = score_outputs([prompt], [_output(entry, m) for m in chosen], strings).results
        for m, result in zip(chosen, ours, strict=True):
            bfcl, error = checker.judge(entry.functions, m.calls, entry.ground_truth, entry.stem)
            failure = result.verdict.failure
            ok = failure is CallFailure.OK
            difference = None
            if ok != bfcl:
                difference = _difference(checker, entry, prompt, m, failure, strings)
            judged.append(Judged(entry, m, bfcl, error, ok, failure.value, difference))
    return judged


@dataclass(frozen=True)
class Row:
    kind: str
    outputs: int
    both_right: int
    both_wrong: int
    documented: int
    other: int

    @property
    def agreement(self) -> float:
        """Share agreeing among the outputs outside the documented differences."""
        judged = self.outputs - self.documented
        return (self.both_right + self.both_wrong) / judged if judged else 1.0


def table(judged: Sequence[Judged]) -> list[Row]:
    kinds: dict[str, list[Judged]] = {}
    for j in judged:
        kinds.setdefault(j.mutation.kind, []).append(j)
    rows = []
    for kind, mine in kinds.items():
        rows.append(
            Row(
                kind,
                len(mine),
                sum(j.agree and j.ours for j in mine),
                sum(j.agree and not j.ours for j in mine),
                sum(not j.agree and j.difference is not None for j in mine),
                sum(not j.agree and j.difference is None for j in mine),
            )
        )
    return rows


def markdown(rows: Sequence[Row]) -> list[str]:
    lines = [
        "| mutation | outputs | both right | both wrong | documented difference | other "
        "disagreement | agreement (outside documented) |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    total = Row("all", *(sum(getattr(r, f) for r in rows) for f in _COUNTS))
    for r in [*rows, total]:
        lines.append(
            f"| {r.kind} | {r.outputs} | {r.both_right} | {r.both_wrong} | {r.documented} | "
            f"{r.other} | {r.agreement:.2%} |"
        )
    return lines


_COUNTS = ("outputs", "both_right", "both_wrong", "documented", "other")


def load(stems: Sequence[str] = STEMS) -> tuple[Path, list[Entry], dict[str, Prompt]]:
    """The pinned wheel's folder, BFCL's entries and our imported prompts (fetched and
    imported into the cache when missing)."""
    from harness.toolcalls.bfcl_data import ensure_imported, fetch_bfcl, file_patterns
    from harness.toolcalls.live_data import load_live

    root = fetch_bfcl()
    live = load_live(ensure_imported(), file_patterns(tuple(stems)))
    return root, read_entries(root, stems), {p.id: p for p in live.prompts}


def main() -> int:
    root, entries, prompts = load()
    print(f"{len(entries)} BFCL entries, {len(prompts)} imported ({root.name})")
    with bfcl_checker(root) as checker:
        for strings in (StringMatch.BFCL, StringMatch.STRICT):
            judged = judge_all(checker, entries, prompts, strings)
            print(f"\nstring_match: {strings.value}\n")
            print("\n".join(markdown(table(judged))))
            found = Counter(j.difference for j in judged if j.difference)
            for name, count in sorted(found.items()):
                print(f"- {name} ({count}): {DIFFERENCES[name]}")
            for j in [j for j in judged if not j.agree and j.difference is None][:20]:
                print(
                    f"UNEXPLAINED {j.entry.id} {j.mutation.kind}: BFCL {j.bfcl} "
                    f"({j.bfcl_error}), ours {j.our_failure}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
