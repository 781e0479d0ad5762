"""A ``url:`` model timed by a token-counting scenario without a local tokenizer warns at
validate time (and in run's pre-flight, which prints the same warnings), naming the fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.cli import main
from harness.spec.loader import load_suite
from harness.spec.tokenizer_warnings import FIX, counts_tokens

HEAD = "schema_version: 1\ndefaults: {repeats: 5}\nmodels:\n"
URL = "http://127.0.0.1:9"

# (name, model entry, scenario, expected warning fragment; None: no warning)
CASES = [
    ("url_alone", f"  - {{name: s, url: '{URL}'}}\n", "http_throughput", "has no local source"),
    ("url_alone_serving", f"  - {{name: s, url: '{URL}'}}\n", "serving", "has no local source"),
    (
        "url_with_folder_without_tokenizer",
        f"  - {{name: s, url: '{URL}', path: BARE}}\n",
        "http_throughput",
        "has no tokenizer.json in",
    ),
    ("url_with_tokenizer", f"  - {{name: s, url: '{URL}', path: TOK}}\n", "http_throughput", None),
    ("url_not_timed", f"  - {{name: s, url: '{URL}'}}\n", "api_contracts", None),
    ("not_a_url", "  - {name: s, path: TOK, backend: fake}\n", "load", None),
]


def _suite(tmp_path: Path, entry: str, scenario: str) -> Path:
    bare, tok = tmp_path / "bare", tmp_path / "tok"
    bare.mkdir(exist_ok=True)
    tok.mkdir(exist_ok=True)
    (tok / "tokenizer.json").write_text("{}")
    text = HEAD + entry.replace("BARE", str(bare)).replace("TOK", str(tok))
    suite = tmp_path / "t.suite.yaml"
    suite.write_text(text + f"scenarios:\n  - scenario: {scenario}\n")
    return suite


@pytest.mark.parametrize(
    ("entry", "scenario", "fragment"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_url_model_without_a_local_tokenizer_warns(
    tmp_path: Path, entry: str, scenario: str, fragment: str | None
) -> None:
    suite = _suite(tmp_path, entry, scenario)
    found = [w for w in load_suite(suite).warnings if "tokens will be counted" in w.message]
    if fragment is None:
        assert found == []
        return
    (warning,) = found
    assert fragment in warning.message and warning.hint == FIX
    assert str(warning).startswith(f"{suite}:4:5: warning: url: model 's' ")


def test_validate_prints_the_warning_with_its_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = _suite(tmp_path, f"  - {{name: s, url: '{URL}'}}\n", "http_throughput")
    assert main(["validate", str(suite)]) == 0
    err = capsys.readouterr().err
    assert "url: model 's' has no local source: its tokens will be counted one a streamed" in err
    assert "give the model a local source (path:, embedded: or hub:)" in err


@pytest.mark.parametrize(
    ("scenario", "counts"),
    [("http_throughput", True), ("serving", True), ("api_contracts", False), ("load", False)],
)
def test_which_scenarios_count_tokens(scenario: str, counts: bool) -> None:
    assert counts_tokens(scenario) is counts
