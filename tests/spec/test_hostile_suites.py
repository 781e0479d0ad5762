"""Hostile suite files: any bytes give one-line ``file:line:col: what; fix`` errors, never a
traceback, from load_suite, ``mlx-harness validate`` and pytest collection alike."""

from __future__ import annotations

import codecs
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harness.cli import main
from harness.core.yamlpos import MAX_DEPTH, MAX_VALUES
from harness.spec.errors import SuiteInvalid
from harness.spec.loader import load_suite
from harness.spec.suite_text import MAX_BYTES
from tests.spec.hostile_corpus import INCLUDE, SEED, SUITES_DIR, corpus

ONE_LINE = re.compile(r"^[^:\n]+:\d+:\d+: [^\n]+$")
HEAD = b"schema_version: 1\nscenarios:\n  - scenario: load\n"  # three valid lines
BOMB = b"".join(  # "billion laughs": 9 levels of 9 aliases, 9^9 values once expanded
    [b"l0: &l0 [x, x, x, x, x, x, x, x, x]\n"]
    + [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * 9)}]\n".encode() for i in range(1, 9)]
)

DEEP_ALIASES = (  # each anchor 30 levels deep, 90 once the aliases are expanded
    b"a: &a " + b"[" * 30 + b"x" + b"]" * 30 + b"\n"
    b"b: &b " + b"[" * 30 + b"*a" + b"]" * 30 + b"\n"
    b"c: " + b"[" * 30 + b"*b" + b"]" * 30 + b"\n"
)

# (name, bytes, line of the error, fragment of its message)
HOSTILE: list[tuple[str, bytes, int, str]] = [
    ("binary", bytes(range(256)) * 8, 1, "NUL byte: this looks like a binary file"),
    ("nul_in_a_line", HEAD + b"name: a\x00b\n", 4, "NUL byte"),
    ("utf16_bom", codecs.BOM_UTF16_LE + HEAD.decode().encode("utf-16-le"), 1, "UTF-16 text"),
    ("utf16_no_bom", HEAD.decode().encode("utf-16-le"), 1, "looks like UTF-16 text"),
    ("utf32_bom", HEAD.decode().encode("utf-32"), 1, "UTF-32 text"),
    ("latin1", HEAD + "name: café\n".encode("latin-1"), 4, "byte 0xE9 is not UTF-8"),
    ("escape_sequence", HEAD + b"name: \x1b[31mred\n", 4, "control character \\x1b"),
    ("escaped_control", HEAD + b'name: "a\\x1bb"\n', 4, "control character \\x1b in text"),
    ("tab_indent", HEAD + b"defaults:\n\trepeats: 2\n", 5, "a tab character"),
    ("deep_flow", HEAD + b"name: " + b"[" * 5000 + b"]" * 5000 + b"\n", 4, "nesting deeper"),
    (
        "deep_block",
        HEAD + b"".join(b" " * i + b"k:\n" for i in range(1000)),
        3 + MAX_DEPTH,
        f"nesting deeper than {MAX_DEPTH} levels",
    ),
    ("alias_bomb", HEAD + BOMB, 4, f"more than {MAX_VALUES} values once aliases are expanded"),
    ("alias_depth", HEAD + DEEP_ALIASES, 4, "nesting deeper than 64 levels through aliases"),
    ("recursive_alias", HEAD + b"name: &a [*a]\n", 4, "recursive alias"),
    ("mutual_alias", HEAD + b"name: &a {b: &b [*a]}\n", 4, "recursive alias"),
    ("undefined_alias", HEAD + b"name: *nowhere\n", 4, "undefined alias"),
    ("duplicate_key", HEAD + b"name: a\nname: b\n", 5, "duplicate key 'name' (first on line 4)"),
    ("duplicate_top", HEAD + b"schema_version: 1\n", 4, "duplicate key 'schema_version'"),
    ("huge", HEAD + b"# " + b"x" * MAX_BYTES, 1, "limited to 1 MiB"),
    (
        "python_tag",
        HEAD + b"name: !!python/object/apply:os.system ['touch pwned']\n",
        4,
        "the tag '!!python/object/apply:os.system' is not allowed",
    ),
    ("python_name", HEAD + b"name: !!python/name:os.system\n", 4, "'!!python/name:os.system'"),
    ("local_tag", HEAD + b"name: !shell ls\n", 4, "the tag '!shell' is not allowed"),
    ("binary_tag", HEAD + b"name: !!binary aGk=\n", 4, "the tag '!!binary'"),
    ("two_documents", HEAD + b"---\nname: b\n", 4, "a second YAML document"),
    ("top_level_list", b"- schema_version: 1\n", 1, "must be a YAML mapping"),
    ("top_level_scalar", b"just text\n", 1, "got the single value 'just text'"),
    ("list_key", HEAD + b"? [a, b]\n: 1\n", 4, "a key must be text, got a list"),
    ("mapping_key", HEAD + b"? {a: b}\n: 1\n", 4, "a key must be text, got a mapping"),
    ("null_key", HEAD + b"~: 1\n", 4, "a key must be text, got null"),
    ("number_key", HEAD + b"defaults: {1: 2}\n", 4, "a key must be text, got 1"),
    ("bool_key", HEAD + b"on: 1\n", 4, "a key must be text, got True"),
    ("merge_key", HEAD + b"defaults:\n  <<: {repeats: 2}\n", 5, "merge keys (<<)"),
    ("impossible_date", HEAD + b"x: 2026-13-45\n", 4, "cannot read '2026-13-45' as a date"),
    ("bad_explicit_int", HEAD + b"name: !!int abc\n", 4, "cannot read 'abc' as a whole number"),
    ("huge_int", HEAD + b"x: " + b"9" * 5000 + b"\n", 4, "as a whole number"),
    ("unclosed_quote", HEAD + b"name: 'abc\n", 5, "invalid YAML"),
    ("empty", b"", 1, "missing required key"),
    ("wrong_type_defaults", HEAD + b"defaults: [1, 2]\n", 4, "defaults: expected a mapping"),
    ("wrong_type_models", HEAD + b"models: 1\n", 4, "models: expected a list"),
    ("wrong_type_entry", HEAD + b"models: [1]\n", 4, "expected a mapping, got 1; e.g. - {"),
    ("wrong_type_tags", HEAD + b"models:\n  - {embedded: x, tags: [[a]]}\n", 5, "expected text"),
    ("wrong_type_gate", HEAD + b"gates: {a: [1]}\n", 4, "gates.a: expected text"),
    ("infinite_timeout", HEAD + b"defaults: {timeout_s: .inf}\n", 4, "a finite number"),
    ("private_tag", HEAD + b"models:\n  - {embedded: x, tags: [_private]}\n", 5, "'_private'"),
    ("operator_tag", HEAD + b"models:\n  - {embedded: x, tags: [not]}\n", 5, "operator"),
    ("builtin_tag", HEAD + b"models:\n  - {embedded: x, tags: [skip]}\n", 5, "built-in"),
    ("long_key", HEAD + b"k" * 1000 + b": 1\n", 4, "unknown key 'kkkkk"),
]


def _errors(path: Path) -> list[str]:
    with pytest.raises(SuiteInvalid) as info:
        load_suite(path, hub_cache=path.parent / "no-hub")
    return [str(e) for e in info.value.errors]


def _one_line_each(lines: list[str], *paths: Path) -> None:
    assert lines
    for line in lines:
        assert ONE_LINE.match(line), line[:300]
        assert line.startswith(tuple(f"{p}:" for p in paths)), line[:300]
        assert len(line) < 1000, line[:300]


@pytest.mark.parametrize(
    ("data", "line", "fragment"), [h[1:] for h in HOSTILE], ids=[h[0] for h in HOSTILE]
)
def test_hostile_bytes_give_one_line_errors(
    tmp_path: Path, data: bytes, line: int, fragment: str
) -> None:
    path = tmp_path / "t.suite.yaml"
    path.write_bytes(data)
    lines = _errors(path)
    _one_line_each(lines, path)
    assert any(e.startswith(f"{path}:{line}:") and fragment in e for e in lines), lines[:5]


def test_an_included_file_is_read_as_carefully(tmp_path: Path) -> None:
    suite = tmp_path / "t.suite.yaml"
    suite.write_bytes(HEAD + b"include: [shared.yaml]\n")
    shared = tmp_path / "shared.yaml"
    for data, fragment in [
        (b"models: []\n" + BOMB, "more than"),
        (b"\xff\xfe" + b"m\x00", "UTF-16"),
        (b"models: !!python/object/new:os.system [ls]\n", "not allowed"),
        (b"- a list\n", "start with 'models: or expect:'"),
    ]:
        shared.write_bytes(data)
        lines = _errors(suite)
        _one_line_each(lines, shared)
        assert fragment in lines[0]


def test_a_utf8_byte_order_mark_is_fine(tmp_path: Path) -> None:
    """YAML allows a UTF-8 BOM, and Windows editors write one: it loads, positions unchanged."""
    path = tmp_path / "t.suite.yaml"
    path.write_bytes(codecs.BOM_UTF8 + HEAD + b"defaults: {repeats: many}\n")
    assert _errors(path) == [
        f"{path}:4:21: defaults.repeats: expected a whole number, got 'many'; e.g. repeats: 3"
    ]


def test_aliases_within_the_limits_are_plain_shared_values(tmp_path: Path) -> None:
    path = tmp_path / "t.suite.yaml"
    path.write_bytes(
        b"schema_version: 1\nscenarios:\n  - scenario: load\n    gates: &g {load.load_s: '< 60'}\n"
        b"  - scenario: load\n    id: again\n    gates: *g\n"
    )
    loaded = load_suite(path, hub_cache=tmp_path / "no-hub")
    assert [s.gates for s in loaded.suite.scenarios] == [{"load.load_s": "< 60"}] * 2


def test_a_python_tag_never_runs(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = tmp_path / "t.suite.yaml"
    path.write_bytes(HEAD + f"name: !!python/object/apply:os.system ['touch {marker}']\n".encode())
    _errors(path)
    assert not marker.exists()


def _kinds(mutants: list[Any]) -> set[tuple[str, str]]:
    """(suite, mutation kind) of each mutant: ``audio.suite.yaml:insert12@line39`` ->
    (``audio.suite.yaml``, ``insert``)."""
    found = set()
    for mutant in mutants:
        suite, _, rest = mutant.id.partition(":")
        found.add((suite, re.sub(r"\d+", "", rest.split("@")[0])))
    return found


PARTS = 16  # the corpus in strides; each holds every (suite, mutation kind) pair of the whole
QUICK_STRIDE = 48  # `make test`'s sample: every 48th mutant, and the first of each kind it misses


def _part(every: list[Any], part: int | str) -> list[Any]:
    """One stride of the corpus (``make test-nightly`` runs all 16: the whole corpus), or the
    quick sample: a third of a stride's mutants and still every (suite, kind) pair."""
    if part != "quick":
        return every[int(part) :: PARTS]
    sample = every[::QUICK_STRIDE]
    missing = _kinds(every) - _kinds(sample)
    for mutant in every:
        kind = next(iter(_kinds([mutant])))
        if kind in missing:
            sample.append(mutant)
            missing.discard(kind)
    return sample


@pytest.mark.parametrize(
    "part",
    [
        "quick",
        *(pytest.param(part, id=f"part{part}", marks=pytest.mark.nightly) for part in range(PARTS)),
    ],
)
def test_the_generated_corpus_never_gives_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, part: int | str
) -> None:
    """Mutations of every shipped suite (seed SEED): only SuiteInvalid, each error one line.

    An empty model cache: the mutations are of the suite text, and selectors then have nothing
    prepared to probe (probing 30-odd prepared models per mutant made this test take minutes).
    The corpus (about 23,000 mutants) takes minutes to load (PyYAML's pure-Python composer,
    which keeps positions): ``make test`` loads a sample of every kind of mutation (about 500),
    ``make test-nightly`` all of it, in sixteen strides."""
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "empty-cache"))
    shutil.copytree(SUITES_DIR / "data", tmp_path / "data")
    include, shipped_include = tmp_path / INCLUDE, (SUITES_DIR / INCLUDE).read_bytes()
    every = corpus(SEED)
    assert len(every) >= 3000
    mutants = _part(every, part)
    assert _kinds(mutants) == _kinds(every)  # a part leaves out no kind of mutation
    tracebacks, bad_lines, loaded = [], [], 0
    written = None
    for mutant in mutants:
        wanted = shipped_include if mutant.include is None else mutant.include
        if wanted != written:
            include.write_bytes(wanted)
            written = wanted
        path = tmp_path / mutant.suite_name
        path.write_bytes(mutant.suite)
        try:
            load_suite(path, hub_cache=tmp_path / "no-hub")
            loaded += 1
        except SuiteInvalid as exc:
            for line in map(str, exc.errors):
                if not ONE_LINE.match(line) or not line.startswith((f"{path}:", f"{include}:")):
                    bad_lines.append(f"{mutant.id}: {line[:200]}")
        except Exception as exc:  # what the corpus is looking for
            tracebacks.append(f"{mutant.id}: {type(exc).__name__}: {exc}"[:300])
    assert tracebacks == [], f"{len(tracebacks)} of {len(mutants)} raised: {tracebacks[:5]}"
    assert bad_lines == [], bad_lines[:5]
    assert loaded < len(mutants)  # most are refused (with an empty cache, most parts load none)


END_TO_END = ["binary", "utf16_bom", "alias_bomb", "recursive_alias", "python_tag", "private_tag"]


@pytest.mark.parametrize("name", END_TO_END)
def test_validate_command_prints_the_line_without_a_traceback(tmp_path: Path, name: str) -> None:
    data, line, fragment = next(h[1:] for h in HOSTILE if h[0] == name)
    path = tmp_path / "t.suite.yaml"
    path.write_bytes(data)
    out = subprocess.run(
        [sys.executable, "-m", "harness.cli", "validate", str(path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 2  # bad input
    assert "Traceback" not in out.stderr
    errors = out.stderr.splitlines()
    assert all(ONE_LINE.match(e) for e in errors), errors
    assert any(e.startswith(f"{path}:{line}:") and fragment in e for e in errors), errors


@pytest.mark.parametrize("name", END_TO_END)
def test_pytest_collection_shows_the_line_without_a_traceback(
    pytester: pytest.Pytester, name: str
) -> None:
    data, line, fragment = next(h[1:] for h in HOSTILE if h[0] == name)
    path = pytester.path / "t.suite.yaml"
    path.write_bytes(data)
    result = pytester.runpytest(str(path))
    assert result.ret == pytest.ExitCode.USAGE_ERROR  # bad input, as the README says
    output = "\n".join(result.outlines + result.errlines)
    assert "Traceback" not in output and "raise " not in output
    shown = [o for o in result.outlines if o.startswith(f"{path}:")]
    assert len(shown) == 1, shown
    assert shown[0].startswith(f"{path}:{line}:") and fragment in shown[0], shown


def _empty_dir(root: Path) -> Path:
    (root / "suites").mkdir()
    (root / "suites" / "shared.yaml").write_text("models: []\n")
    return root / "suites"


def _plain_yaml(root: Path) -> Path:
    (root / "smoke.yaml").write_bytes(HEAD)
    return root / "smoke.yaml"


def _fifo(root: Path) -> Path:
    os.mkfifo(root / "pipe.suite.yaml")
    return root / "pipe.suite.yaml"


# (name, what to make under tmp_path, fragment of the one line)
NOT_SUITES = [
    ("dir_without_suites", _empty_dir, "no *.suite.yaml files in this directory"),
    ("not_named_suite", _plain_yaml, "not a suite file (the name must end in .suite.yaml"),
    ("named_pipe", _fifo, "a named pipe, not a suite file"),
    ("device", lambda root: Path(os.devnull), "a character device, not a suite file"),
    ("missing", lambda root: root / "nope.suite.yaml", "no such file or directory"),
]


@pytest.mark.parametrize(
    ("make", "fragment"), [n[1:] for n in NOT_SUITES], ids=[n[0] for n in NOT_SUITES]
)
@pytest.mark.parametrize("command", ["validate", "run"])
def test_paths_that_hold_no_suite_are_one_line(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    make: Callable[[Path], Path],
    fragment: str,
    command: str,
) -> None:
    path = make(tmp_path)
    assert (
        main(
            [command, str(path), "--report-dir", str(tmp_path / "reports")]
            if command == "run"
            else [command, str(path)]
        )
        == 2
    )
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"mlx-harness: error: {path}: "), err
    assert fragment in err[0]
