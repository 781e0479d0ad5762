"""The regressions suite replays real upstream bugs: every bug case has a buggy and a fixed pin
set, a ledger line with its link that xfails it on the buggy release only, and the nightly
upstream job runs it. Reading the suite only: the replays themselves run nightly."""

from __future__ import annotations

from fnmatch import fnmatch
from pathlib import Path

import yaml

from harness.core.types import ExpectKind
from harness.spec.ledger import expectation_for
from harness.spec.loader import load_suite

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "suites" / "regressions.suite.yaml"
NIGHTLY = ROOT / ".github" / "workflows" / "nightly.yml"


# What each pin set installs (mlx chosen for a pin set that pins mlx-lm alone), and the cases
# that must xfail there: its own bug's case, and any other bug case whose bug that release has
# too. Every other cell passes. docs/regressions.md shows the same matrix, as run.
INSTALLED = {
    "bug-batchkv-buggy": (
        {"mlx-lm": "0.31.0", "mlx": "0.31.0"},
        # both `concurrent` on lfm2; no gemma4 parser before 0.31.2
        {"bug_batch_kv", "bug_rotating_merge", "bug_arrays_join", "bug_gemma4_parse"}
        | {"bug_gemma4_hyphen"},
    ),
    "bug-batchkv-fixed": (
        {"mlx-lm": "0.31.1", "mlx": "0.31.0"},
        {"bug_rotating_merge", "bug_gemma4_parse", "bug_gemma4_hyphen"},
    ),
    "bug-rotmerge-buggy": (
        {"mlx-lm": "0.31.1", "mlx": "0.31.0"},
        {"bug_rotating_merge", "bug_gemma4_parse", "bug_gemma4_hyphen"},
    ),
    "bug-rotmerge-fixed": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_tool_drop",
            "bug_arrays_join",
            "bug_kv_join",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    # CPU: 0.31.2 answers (the thread-stream bug is Metal's); its tool-call flush drops calls
    "bug-stream-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.2"},
        {
            "bug_tool_drop",
            "bug_arrays_join",
            "bug_kv_join",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    "bug-stream-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-toolfinish-buggy": (
        {"mlx-lm": "0.30.4", "mlx": "0.30.3"},
        {"bug_tool_finish", "bug_coder_infer", "bug_gemma4_parse", "bug_tool_drop"}
        | {"bug_gemma4_hyphen", "bug_parallel_calls"},
    ),
    # before 0.30.7: no mistral parser (#874), no gemma4 parser
    "bug-toolfinish-fixed": (
        {"mlx-lm": "0.30.5", "mlx": "0.30.3"},
        {"bug_coder_infer", "bug_gemma4_parse", "bug_tool_drop", "bug_gemma4_hyphen"},
    ),
    "bug-tooldrop-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-tooldrop-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.31.2"}, set()),
    "bug-arraysjoin-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_arrays_join",
            "bug_tool_drop",
            "bug_kv_join",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    "bug-arraysjoin-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-coderinfer-buggy": (
        {"mlx-lm": "0.30.5", "mlx": "0.30.3"},
        {"bug_coder_infer", "bug_gemma4_parse", "bug_tool_drop", "bug_gemma4_hyphen"},
    ),
    "bug-coderinfer-fixed": (
        {"mlx-lm": "0.30.6", "mlx": "0.30.5"},
        {"bug_gemma4_parse", "bug_tool_drop", "bug_gemma4_hyphen"},
    ),
    "bug-gemma4parse-buggy": (
        {"mlx-lm": "0.31.1", "mlx": "0.31.0"},
        {"bug_rotating_merge", "bug_gemma4_parse", "bug_gemma4_hyphen"},
    ),
    "bug-gemma4parse-fixed": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_tool_drop",
            "bug_arrays_join",
            "bug_kv_join",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    # two requests joining a prompt in prefill together (#1141): 0.31.2 only
    "bug-kvjoin-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_kv_join",
            "bug_arrays_join",
            "bug_tool_drop",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    "bug-kvjoin-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    # a hyphenated tool name in a Gemma 4 call (#1150): 0.31.2 only (none parsed before)
    "bug-gemma4hyphen-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_gemma4_hyphen",
            "bug_tool_drop",
            "bug_arrays_join",
            "bug_kv_join",
            "bug_parallel_calls",
        },
    ),
    "bug-gemma4hyphen-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    # Mistral's empty end marker (#1151): 0.31.2; its fix, 0.31.3, drops the call (#1307)
    "bug-mistralend-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {
            "bug_tool_drop",
            "bug_arrays_join",
            "bug_kv_join",
            "bug_gemma4_hyphen",
            "bug_parallel_calls",
        },
    ),
    "bug-mistralend-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    # two calls back to back (#1170): 0.31.2 joins them
    "bug-parallel-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.1"},
        {"bug_parallel_calls", "bug_tool_drop", "bug_arrays_join", "bug_kv_join"}
        | {"bug_gemma4_hyphen"},
    ),
    "bug-parallel-fixed": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    # a penalized request after a plain one decoded without its penalty (#1225): 0.31.2-0.31.3
    "bug-penalty-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-penalty-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.31.2"}, set()),
    # a call inside the think block the prompt opened (#1160): every release before 0.32.0
    "bug-thinktool-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-thinktool-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.31.2"}, set()),
    # a <tool_call> in pieces whose ">" the model writes with its newline (#1335): to 0.31.3
    "bug-splitmarker-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-splitmarker-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.31.2"}, set()),
    # a non-streamed message with no text sent without its content key (#1738): 0.31.2-0.31.3
    "bug-contentkey-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-contentkey-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.31.2"}, set()),
    # a request sampled with XTC kills the generation thread (#1257): every release to 0.31.3
    "bug-xtc-buggy": ({"mlx-lm": "0.31.3", "mlx": "0.31.2"}, {"bug_tool_drop"}),
    "bug-xtc-fixed": ({"mlx-lm": "0.32.0", "mlx": "0.32.4"}, set()),
    # an invalid parameter answered by a closed connection, no 400: every release to 0.32.0
    "bug-invalidparams-buggy": ({"mlx-lm": "0.32.0", "mlx": "0.32.4"}, set()),
    "bug-invalidparams-fixed": ({"mlx-lm": "0.32.1", "mlx": "0.32.4"}, set()),
}
# a cached prompt past a sliding window reused by the next request (#1035): 0.31.0-0.31.1; the
# same releases (and so the same other cells) as the Gemma 4 parser's pair
INSTALLED["bug-cachemerge-buggy"] = INSTALLED["bug-gemma4parse-buggy"]
INSTALLED["bug-cachemerge-fixed"] = INSTALLED["bug-gemma4parse-fixed"]
# batched logprobs formatted with the last request's arguments (#1072): 0.30.6-0.31.1 (0.30.5:
# no chat logprobs.content, #829; 0.30.4: NameError, #800); the same releases again
INSTALLED["bug-logprobs-buggy"] = INSTALLED["bug-gemma4parse-buggy"]
INSTALLED["bug-logprobs-fixed"] = INSTALLED["bug-gemma4parse-fixed"]
# two Mistral calls in one turn read as one (#1448): 0.30.7-0.31.1 (0.31.1's cells those of the
# Gemma 4 parser's buggy release); fixed in 0.32.0
INSTALLED["bug-mistralpair-buggy"] = INSTALLED["bug-gemma4parse-buggy"]
INSTALLED["bug-mistralpair-fixed"] = INSTALLED["bug-xtc-fixed"]  # mlx 0.32.4 chosen
# On macOS (Metal) the thread-stream bug shows: every served case of that release fails.
METAL = {
    "bug-stream-buggy": (
        {"mlx-lm": "0.31.2", "mlx": "0.31.2", "mlx-metal": "0.31.2"},
        {"bug_batch_kv", "bug_rotating_merge", "bug_thread_stream", "bug_tool_finish"}
        | {"bug_tool_drop", "bug_arrays_join", "bug_coder_infer", "bug_gemma4_parse"}
        | {"bug_kv_join", "bug_gemma4_hyphen", "bug_parallel_calls", "bug_cache_merge"}
        | {"bug_logprobs_batch"},
    ),
    "bug-stream-fixed": (
        {"mlx-lm": "0.31.3", "mlx": "0.31.2", "mlx-metal": "0.31.2"},
        {"bug_tool_drop"},
    ),
}
# every release from 0.31.2 to 0.31.3 leaves the stale processor slot (#1225) and sends a
# message with no text without its content key (#1738); every release before 0.32.0 keeps a
# call made inside an open think block as reasoning (#1160)
for _installed, _failing in [*INSTALLED.values(), *METAL.values()]:
    if _installed["mlx-lm"] in ("0.31.2", "0.31.3"):
        _failing.add("bug_penalty_dropped")
        _failing.add("bug_content_key")
    if not _installed["mlx-lm"].startswith("0.32."):
        _failing.add("bug_think_tool")
        _failing.add("bug_xtc")  # XTC's special tokens an int and a list (#1257)
    if tuple(int(p) for p in _installed["mlx-lm"].split(".")) < (0, 32, 1):
        _failing.add("bug_invalid_params")  # validate_model_parameters() with no try (#1527)
    # no release before 0.32.0 parses a <tool_call> written in pieces, ">\n" merged: 0.31.2-0.31.3
    # miss the marker's token ids (#1335), the ones before turn tool calling off (#984)
    if tuple(int(p) for p in _installed["mlx-lm"].split(".")) < (0, 32, 0):
        _failing.add("bug_split_marker")
        # two Mistral calls back to back: no parser before 0.30.7 (#874), read as one and
        # raised on in 0.30.7-0.31.1 (#1448), left in the content by 0.31.2 (#1151), dropped
        # by 0.31.3 (#1307)
        _failing.add("bug_mistral_pair")
    # a sliding-window cache reused past its window breaks BatchRotatingKVCache.merge (#1035)
    if _installed["mlx-lm"] in ("0.31.0", "0.31.1"):
        _failing.add("bug_cache_merge")
    # every release before 0.31.2 breaks batched logprobs (#1072, #829's shape, #800's crash)
    if tuple(int(p) for p in _installed["mlx-lm"].split(".")) < (0, 31, 2):
        _failing.add("bug_logprobs_batch")


def test_each_bug_has_a_buggy_and_a_fixed_release_and_its_ledger_line() -> None:
    loaded = load_suite(SUITE)
    suite = loaded.suite
    pins = {p.name: p.pins for p in suite.pin_sets}
    assert set(pins) == set(INSTALLED)
    for name, (installed, _) in INSTALLED.items():
        for package in ("mlx-lm", "mlx"):
            pinned = f"{package}=={installed[package]}"
            assert pinned in pins[name] or package == "mlx", (name, pinned)
    cases = {s.id: s for s in suite.scenarios}
    assert all(case is not None and case.startswith("bug_") for case in cases)
    bugs = [e for e in suite.expect if e.versions and e.status == "xfail"]
    # one line per bug case, and more for a case a release cannot run at all (no parser yet)
    globs = [g for e in bugs for g in e.scenario]
    assert all(any(fnmatch(c, g) for g in globs) for c in cases) and len(bugs) >= len(cases) >= 3
    for entry in bugs:
        assert entry.link and entry.link.startswith("https://github.com/ml-explore/mlx-lm/")
        assert "mlx-lm" in entry.versions
        assert entry.status == "xfail" and entry.strict  # a replay that lost its bug: XPASS
    for name, (installed, failing) in [*INSTALLED.items(), *METAL.items()]:
        for case, listed in cases.items():
            (model,) = listed.models or ["*"]
            expected = expectation_for(
                loaded.expect,
                model=model,
                scenario=listed.scenario,
                family=None,
                backend="http",
                installed=installed,
                entry_id=case,
            )
            # before 0.31 the join cases' servers lack their options: a known skip
            old = installed["mlx-lm"].startswith("0.30.")
            skips = old and case in ("bug_arrays_join", "bug_kv_join")
            xfails = expected is not None and expected.kind is ExpectKind.XFAIL
            assert xfails is (case in failing), (name, case)
            assert (expected is not None and expected.kind is ExpectKind.SKIP) is skips
            if xfails:
                assert expected is not None and expected.link, (name, case)
    for case in cases:  # red on some buggy release
        sets = [*INSTALLED.items(), *METAL.items()]
        assert [n for n, (_, failing) in sets if n.endswith("-buggy") and case in failing], case


def test_the_nightly_upstream_job_runs_the_regressions_and_publishes_them() -> None:
    job = yaml.safe_load(NIGHTLY.read_text())["jobs"]["upstream-drift"]
    steps = {step.get("id") or step.get("name") or step.get("uses"): step for step in job["steps"]}
    step = steps["regressions"]
    assert "mlx-harness run suites/regressions.suite.yaml --pin-set all" in step["run"]
    assert "continue-on-error" not in step  # a replay that lost its bug turns the job red
    assert "regressions" in steps["Publish the matrix"]["run"]


def test_the_join_replays_serve_prompts_in_steps_and_kv_join_starts_cold() -> None:
    """A request joins a prompt in prefill only when its prefill spans the server's scheduling
    rounds: both join cases serve a model with small prefill steps. #1141 needs joiners with no
    keys yet: the KV-join case's server keeps no prompt cache (with one, every chat prompt
    reuses the template's first tokens of a trimmed entry, and no joiner is empty)."""
    suite = load_suite(SUITE).suite
    models = {m.name: m for m in suite.models}
    cases = {s.id: s for s in suite.scenarios}
    for case in ("bug_arrays_join", "bug_kv_join"):
        (name,) = cases[case].models or []
        serve = models[name].serve
        assert serve is not None and "--prefill-step-size" in serve.args, case
        step = int(serve.args[serve.args.index("--prefill-step-size") + 1])
        assert step <= 8, case
        assert cases[case].params["checks"] == ["concurrent"], case
    (kv_model,) = cases["bug_kv_join"].models or []
    args = models[kv_model].serve.args  # type: ignore[union-attr]
    assert args[args.index("--prompt-cache-size") + 1] == "0"


def test_the_hyphen_replay_asks_with_the_names_its_caller_was_trained_on() -> None:
    """#1150 shows only on a call to a hyphenated tool name: the case asks with hyphenated
    names, and its caller is the one trained on them (a snake_case caller would not call)."""
    from harness.models.zoo.families_caller import CALLER_FAMILIES

    suite = load_suite(SUITE).suite
    models = {m.name: m for m in suite.models}
    cases = {s.id: s for s in suite.scenarios}
    case = cases["bug_gemma4_hyphen"]
    assert case.params["tool_names"] == "hyphen"
    (name,) = case.models or []
    embedded = str(models[name].embedded)
    assert CALLER_FAMILIES[embedded.removeprefix("zoo/")].tool_names == "hyphen"
    for other, listed in cases.items():  # every other caller case asks as its caller learned
        if other != "bug_gemma4_hyphen":
            assert listed.params.get("tool_names", "snake") == "snake", other
    # #1170 and #1448 need two calls in one turn: a pair caller, asked for two
    for case_id, parser in (("bug_parallel_calls", "json_tools"), ("bug_mistral_pair", "mistral")):
        pair = cases[case_id]
        assert pair.params["tool_call_count"] == 2
        (name,) = pair.models or []
        family = CALLER_FAMILIES[str(models[name].embedded).removeprefix("zoo/")]
        assert family.calls_per_turn == 2 and family.expected_parser == parser, case_id


def test_the_split_marker_replay_serves_the_caller_with_qwen2s_pre_tokenizer() -> None:
    """#1335 shows only when ``<tool_call>`` is no token and the model writes its ``>`` with the
    newline after it: the case serves the caller whose tokenizer does (Qwen2's pre-tokenizer,
    no marker tokens); tests/models/zoo/test_tokenizer.py checks the token shapes."""
    from harness.models.zoo.families_caller import CALLER_FAMILIES

    suite = load_suite(SUITE).suite
    models = {m.name: m for m in suite.models}
    case = {s.id: s for s in suite.scenarios}["bug_split_marker"]
    (name,) = case.models or []
    family = CALLER_FAMILIES[str(models[name].embedded).removeprefix("zoo/")]
    assert family.pre_tokenizer == "qwen2" and family.expected_parser == "json_tools"
    assert "<tool_call>" not in (*family.special_tokens, *family.appended_special_tokens)
