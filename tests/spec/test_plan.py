from __future__ import annotations

from pathlib import Path

from harness.core.types import ExpectKind
from harness.spec.loader import load_suite
from harness.spec.plan import group_by_first_seen, plan

SUITE = """\
schema_version: 1
defaults: {{repeats: 2, warmup: 0, timeout_s: 30, memory_threshold: 0.5}}
models:
  - name: a
    path: {a}
    backend: fake
    tags: [small]
  - name: b
    path: {b}
    backend: fake
scenarios:
  - scenario: load
  - scenario: throughput
    params: {{gen_tokens: 4}}
    sweep: {{prompt_tokens: [8, 16], ignore_eos: [true]}}
    repeats: 5
    gates: {{throughput.ttft_s: "< 1"}}
  - scenario: load
    id: reload
    models: [b]
    params: {{reloads: 1}}
expect:
  - model: b
    scenario: throughput
    status: xfail
    reason: known slow
    link: https://example.invalid/1
gates:
  throughput.decode_tps: ">= 1"
  memory.mlx_peak_bytes: "< 1e12"
"""


def _plan(write_suite, tmp_path: Path):  # type: ignore[no-untyped-def]
    from harness.backends.fake import write_fake_model

    a = write_fake_model(tmp_path / "a")
    b = write_fake_model(tmp_path / "b")
    return plan(load_suite(write_suite(SUITE.format(a=a, b=b))))


def test_ids_are_stable_and_readable(write_suite, tmp_path: Path) -> None:
    ids = [c.case_id for c in _plan(write_suite, tmp_path)]
    assert ids == [
        "t::a::load",
        "t::a::throughput[prompt_tokens=8-ignore_eos=True]",
        "t::a::throughput[prompt_tokens=16-ignore_eos=True]",
        "t::b::load",
        "t::b::throughput[prompt_tokens=8-ignore_eos=True]",
        "t::b::throughput[prompt_tokens=16-ignore_eos=True]",
        "t::b::reload",
    ]
    assert ids == [c.case_id for c in _plan(write_suite, tmp_path)]


def test_params_defaults_overrides_and_gates(write_suite, tmp_path: Path) -> None:
    cases = _plan(write_suite, tmp_path)
    load, thr = cases[0], cases[1]
    assert load.params == {"reloads": 0} and load.repeats == 2 and load.timeout_s == 30
    assert load.memory_threshold == thr.memory_threshold == 0.5
    assert thr.params == {"prompt_tokens": 8, "gen_tokens": 4, "ignore_eos": True, "depth": None}
    assert thr.point == {"prompt_tokens": 8, "ignore_eos": True}
    assert thr.repeats == 5 and thr.warmup == 0
    assert {g.metric for g in thr.gates} == {
        "throughput.decode_tps",
        "memory.mlx_peak_bytes",
        "throughput.ttft_s",
    }
    assert {g.metric for g in load.gates} == {"memory.mlx_peak_bytes"}
    assert thr.marks == ("throughput", "fake", "small")


def test_expectations_match_model_and_scenario(write_suite, tmp_path: Path) -> None:
    cases = _plan(write_suite, tmp_path)
    marked = {c.case_id: c.expectation for c in cases if c.expectation}
    assert set(marked) == {
        c.case_id for c in cases if c.model.key == "b" and c.scenario == "throughput"
    }
    exp = next(iter(marked.values()))
    assert exp is not None and exp.kind is ExpectKind.XFAIL and exp.link


def test_uncached_hub_model_becomes_a_skip_with_reason(
    write_suite, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    suite = write_suite(
        "schema_version: 1\nmodels:\n  - hub: org/not-here\nscenarios:\n  - scenario: load\n"
    )
    (case,) = plan(load_suite(suite))
    assert case.model.path is None
    assert case.expectation is not None and case.expectation.kind is ExpectKind.SKIP
    assert "not in the local Hugging Face cache" in case.expectation.reason


def test_group_by_first_seen_keeps_unkeyed_items_in_place() -> None:
    items = ["a1", "x", "b1", "a2", "b2", "y"]
    out = group_by_first_seen(items, lambda s: None if s in "xy" else s[0])
    assert out == ["a1", "a2", "x", "b1", "b2", "y"]


def test_a_scenario_entry_takes_model_globs(write_suite, tmp_path: Path) -> None:
    from harness.backends.fake import write_fake_model

    paths = {n: write_fake_model(tmp_path / n) for n in ("zoo-a", "zoo-b", "real")}
    models = "".join(f"  - {{name: {n}, path: {p}, backend: fake}}\n" for n, p in paths.items())
    text = (
        f"schema_version: 1\nmodels:\n{models}scenarios:\n  - scenario: load\n"
        "  - {scenario: load, id: reload, models: ['zoo-*'], params: {reloads: 1}}\n"
        "  - {scenario: load, id: none, models: ['gone-*']}\n"  # a glob may match nothing
    )
    ids = [c.case_id for c in plan(load_suite(write_suite(text)))]
    assert [i for i in ids if i.endswith("::reload")] == ["t::zoo-a::reload", "t::zoo-b::reload"]
    assert not [i for i in ids if i.endswith("::none")]


def test_the_side_by_side_reference_is_kept_with_the_run(write_suite, tmp_path: Path) -> None:
    """``side_by_side: {reference: a}`` is recorded with the suite (the report reads it from the
    record), and reads back as written; a suite without one records none."""
    from harness.backends.fake import write_fake_model
    from harness.results.store import RunWriter, load_run
    from harness.runner.machine import machine
    from harness.spec.plan import suite_info

    a = write_fake_model(tmp_path / "a")
    b = write_fake_model(tmp_path / "b")
    text = SUITE.format(a=a, b=b)
    infos = []
    for name, extra in (("with", "side_by_side: {reference: a}\n"), ("without", "")):
        loaded = load_suite(write_suite(text + extra, name=f"{name}.suite.yaml"))
        infos.append(suite_info(loaded, plan(loaded)))
    assert [i.reference for i in infos] == ["a", None]
    writer = RunWriter(tmp_path / "run" / "run.jsonl")
    writer.start(
        run_id="r",
        started_at="2026-01-01T00:00:00+00:00",
        machine=machine("x"),
        packages={},
        git_sha=None,
        suites=infos,
    )
    assert load_run(tmp_path / "run").suites == tuple(infos)
