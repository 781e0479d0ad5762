"""The engines section: in-process and served rows side by side, greedy answers compared pair
by pair, and model text escaped."""

from __future__ import annotations

import dataclasses

from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import ModelIdentity, Unit
from harness.report import render_html, render_markdown
from harness.report.engines import agreement_table, build, common_prefix

LOCAL = ModelIdentity("smol", "/m", "mlx_lm")
SERVED = ModelIdentity("smol@mlx_lm", "/m", "http", server="mlx_lm.server 0.32.2")
LLAMA = ModelIdentity("smol@llama", "/m", "http", server="llama-server version: 1 (x)")


def greedy(model: str, *outputs: str):  # type: ignore[no-untyped-def]
    result = case(model, "greedy_text", metrics=[metric("greedy_text.e2e_s", Unit.SECONDS, 0.1)])
    return dataclasses.replace(
        result, artifacts={"prompts": ["p"] * len(outputs), "outputs": list(outputs)}
    )


def speed(model: str, scenario: str, decode: float):  # type: ignore[no-untyped-def]
    prefix = "throughput" if scenario == "throughput" else "http_throughput"
    metrics = [
        metric(f"{prefix}.decode_tps", Unit.TOKENS_PER_SECOND, decode, decode + 1),
        metric(f"{prefix}.ttft_s", Unit.SECONDS, 0.2, 0.3),
    ]
    return case(model, scenario, metrics=metrics, point={"prompt_tokens": 128})


def test_no_served_model_no_section() -> None:
    assert build(make_run([speed("smol", "throughput", 14)], models={"smol": LOCAL})) is None


def test_engines_side_by_side_and_agreement() -> None:
    run = make_run(
        [
            speed("smol", "throughput", 14),
            speed("smol@mlx_lm", "http_throughput", 13),
            speed("smol@llama", "http_throughput", 90),
            greedy("smol", "Paris.", "Red, blue", "x"),
            greedy("smol@mlx_lm", "Paris.", "Red, blue", "x"),
            greedy("smol@llama", "Paris.", "Red, green", "x"),
        ],
        models={"smol": LOCAL, "smol@mlx_lm": SERVED, "smol@llama": LLAMA},
    )
    section = build(run)
    assert section is not None
    engines = {r[0].text: r[1].text for r in section.engines.rows}
    assert engines == {
        "smol": "in process: mlx_lm 0.28.0",
        "smol@mlx_lm": "mlx_lm.server 0.32.2",
        "smol@llama": "llama-server version: 1 (x)",
    }
    assert [r[0].text for r in section.speed.rows] == ["smol", "smol@llama", "smol@mlx_lm"]
    agreement = {(r[0].text, r[1].text): (r[2].text, r[3].text) for r in section.agreement.rows}
    assert agreement == {
        ("smol", "smol@llama"): ("2/3", "char 5: 'blue' vs 'green'"),
        ("smol", "smol@mlx_lm"): ("3/3", "—"),
        ("smol@llama", "smol@mlx_lm"): ("2/3", "char 5: 'green' vs 'blue'"),
    }


def test_common_prefix() -> None:
    assert [common_prefix(a, b) for a, b in [("abc", "abd"), ("ab", "abc"), ("", "x")]] == [2, 2, 0]
    assert not agreement_table({"only": ["a"]}).rows


def test_hostile_answers_are_escaped() -> None:
    run = make_run(
        [greedy("smol", "ok"), greedy("smol@mlx_lm", EVIL)],
        models={"smol": LOCAL, "smol@mlx_lm": SERVED},
    )
    html = render_html(run)
    assert "<script>alert(1)" not in html
    engines = render_markdown(run).split("## Engines", 1)[1].split("\n## ", 1)[0]
    assert not any(line.startswith("second line") for line in engines.splitlines())


MIB = 2**20
WORKER = metric("memory.process_peak_rss_bytes", Unit.BYTES, 80 * MIB, view="process_peak_rss")


def http_row(model: str, artifacts: dict[str, object], *extra):  # type: ignore[no-untyped-def]
    result = speed(model, "http_throughput", 90)
    metrics = (*result.metrics, WORKER, *extra)
    return dataclasses.replace(result, metrics=metrics, artifacts=artifacts)


SERVER_PEAK = metric("http_throughput.server_peak_bytes", Unit.BYTES, 513 * MIB)

# (name, row artifacts, extra metrics, memory text, memory note, tokens counted by)
MEMORY_ROWS = [
    (
        "found_server",
        {"counted_by": "tokenizer", "server_memory": "peak of server pid 7"},
        (SERVER_PEAK,),
        "513.0",
        None,
        "model's tokenizer",
    ),
    (
        "remote_server",
        {"counted_by": "chunks", "server_memory": "n/a: remote server (h): not from here"},
        (),
        "n/a",
        "remote server (h): not from here",
        "1 a chunk",
    ),
    (
        "older_record",
        {"counted_by": "tokenizer"},
        (),
        "n/a",
        "not recorded (a run made before the server's memory was read)",
        "model's tokenizer",
    ),
]


def test_http_memory_is_the_servers_or_na_never_the_workers() -> None:
    rows = [http_row(f"smol@{r[0]}", r[1], *r[2]) for r in MEMORY_ROWS]
    local = dataclasses.replace(
        speed("smol", "throughput", 14), metrics=(*speed("smol", "throughput", 14).metrics, WORKER)
    )
    models = {r.model: LLAMA for r in rows} | {"smol": LOCAL}
    section = build(make_run([local, *rows], models=models))
    assert section is not None
    labels = [c.label for c in section.speed.columns]
    memory_at, counted_at = labels.index("memory (MiB)"), labels.index("tokens counted by")
    got = {
        r[0].text: (r[memory_at].text, r[memory_at].note, r[counted_at].text)
        for r in section.speed.rows
    }
    assert got["smol"] == ("80.0", None, "token ids")  # in process: the worker is the engine
    for name, _, _, text, note, counted in MEMORY_ROWS:
        assert got[f"smol@{name}"] == (text, note, counted), name
    assert "80.0" not in {got[f"smol@{r[0]}"][0] for r in MEMORY_ROWS}


def test_server_timings_stand_beside_the_clients() -> None:
    extra = [
        metric("http_throughput.server_prefill_tps", Unit.TOKENS_PER_SECOND, 330, 340),
        metric("http_throughput.server_decode_tps", Unit.TOKENS_PER_SECOND, 100, 104),
        metric("http_throughput.decode_vs_server", Unit.RATIO, 0.9, 0.92),
        metric("http_throughput.ttft_overhead_s", Unit.SECONDS, 0.004, 0.005),
    ]
    row = http_row("smol@llama", {"counted_by": "tokenizer"}, *extra)
    section = build(make_run([row], models={"smol@llama": LLAMA}))
    assert section is not None
    labels = [c.label for c in section.speed.columns]
    for wanted in ("server prefill", "server decode", "decode / server", "TTFT overhead"):
        assert any(label.startswith(wanted) for label in labels), wanted
    markdown = render_markdown(make_run([row], models={"smol@llama": LLAMA}))
    engines = markdown.split("## Engines", 1)[1].split("\n## ", 1)[0]
    assert "tokens counted by" in engines and "model's tokenizer" in engines
