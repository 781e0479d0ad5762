"""``mlx-harness run SUITE --pin-set NAME|all``: each pin set's run happens in its own cached
environment (overlays of the fake package here) and its record names the pin set and the
resolved versions; unknown names are one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.backends.fake import write_fake_model
from harness.cli import main
from harness.results.store import load_run
from tests.runner.fake_dep_index import TRACE_ENV, write_index

SUITE = """\
schema_version: 1
defaults: {repeats: 2, warmup: 0}
models:
  - {name: m, path: model, backend: fake_dep}
scenarios:
  - scenario: load
pin_sets:
  - {name: old, pins: ["harness-fake-dep==1.2"]}
  - {name: new, pins: ["harness-fake-dep==1.7"]}
"""


@pytest.fixture
def workdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MLX_HARNESS_CACHE", str(tmp_path / "cache"))
    write_fake_model(tmp_path / "model")
    write_index(tmp_path / "wheels", broken_from="1.7")
    (tmp_path / "p.suite.yaml").write_text(SUITE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _run(workdir: Path, *pin_set: str) -> list[str]:
    args = ["run", str(workdir / "p.suite.yaml"), "--report-dir", str(workdir / "reports")]
    args += ["--run-id", "nightly", "--pin-env", "overlay", "--find-links", str(workdir / "wheels")]
    return [*args, *(a for name in pin_set for a in ("--pin-set", name))]


@pytest.mark.slow
def test_every_pin_set_runs_in_its_environment(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(_run(workdir, "all")) == 1  # 1.7's load fails on purpose
    out = capsys.readouterr().out
    assert "pin set old: environment built (cold, " in out
    old, new = (load_run(workdir / "reports" / f"nightly-{n}") for n in ("old", "new"))
    assert old.pin_set is not None and old.pin_set.name == "old"
    assert old.pin_set.resolved["harness-fake-dep"] == "1.2"
    assert old.pin_set.installer in ("uv", "pip") and old.pin_set.environment_cold is True
    assert old.packages["harness-fake-dep"] == "1.2"
    assert new.packages["harness-fake-dep"] == "1.7"
    assert [r.status.value for r in old.results] == ["passed"]
    assert [r.status.value for r in new.results] == ["errored"]
    assert "old → new: 1 newly failing (of 1 cases)" in out  # the matrix of both pin sets
    matrix = (workdir / "reports" / "nightly-matrix" / "matrix.md").read_text()
    assert "harness-fake-dep==1.2" in matrix and "🔴 newly failing" in matrix
    assert main([*_run(workdir, "old")[:-2], "--run-id", "again", "--pin-set", "old"]) == 0
    assert "pin set old: environment reused (cached)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("names", "fragment"),
    [(["nope"], "--pin-set nope: no such pin set; the suites name old, new")],
)
def test_unknown_pin_set_is_one_line(
    workdir: Path, capsys: pytest.CaptureFixture[str], names: list[str], fragment: str
) -> None:
    assert main(_run(workdir, *names)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and fragment in err, err


def test_a_suite_without_pin_sets_says_how(
    workdir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (workdir / "p.suite.yaml").write_text(SUITE.split("pin_sets:")[0])
    assert main(_run(workdir, "old")) == 2
    assert "the suites name no pin_sets:; add e.g." in capsys.readouterr().err


TIMED_SUITE = """\
schema_version: 1
defaults: {repeats: 4, warmup: 0}
models:
  - {name: m, path: model, backend: fake_dep}
scenarios:
  - scenario: throughput
    params: {prompt_tokens: 4, gen_tokens: 2, ignore_eos: true}
pin_sets:
  - {name: old, pins: ["harness-fake-dep==1.2"]}
  - {name: new, pins: ["harness-fake-dep==1.3"]}
"""


def _blocks(lines: list[str]) -> list[str]:
    """Which version generated, one entry per unbroken stretch of the same version."""
    return [v for i, v in enumerate(lines) if i == 0 or lines[i - 1] != v]


# (order option, expected stretches of generation by version)
ORDERS = [
    # turns: start-ups A B, then the rounds (2, 1, 1) in rotating order B A | A B | B A
    ([], ["1.3", "1.2", "1.3", "1.2"]),
    (["--pin-set-order", "sequential"], ["1.2", "1.3"]),
]


@pytest.mark.slow
@pytest.mark.parametrize(("order", "expected"), ORDERS, ids=["interleaved", "sequential"])
def test_pin_sets_take_turns_a_round_at_a_time(
    workdir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    order: list[str],
    expected: list[str],
) -> None:
    (workdir / "p.suite.yaml").write_text(TIMED_SUITE)
    trace = workdir / "trace"
    monkeypatch.setenv(TRACE_ENV, str(trace))
    assert main([*_run(workdir, "all"), *order]) == 0
    assert _blocks(trace.read_text().split()) == expected
    out = capsys.readouterr().out
    old = load_run(workdir / "reports" / "nightly-old")
    (result,) = old.results
    assert len(result.metric("throughput.decode_tps").samples) == 4  # type: ignore[union-attr]
    assert old.pin_set is not None
    if order:
        assert old.pin_set.interleaved_with == ()
        assert "measured one after another" in out
    else:
        assert old.pin_set.interleaved_with == ("old", "new")
        assert result.artifacts["repeats"]["rounds"] == 3
        assert "[old]      passed  p::m::throughput" in out  # each run's lines behind its name
        assert "old → new:" in out and "one after another" not in out
