"""Charts: each drawn only when its data exists, from numbers alone (a hostile run's SVG equals
its inert twin's), checked against the SVG allowlist, with its data table in the HTML; and, where
Chromium is installed, a screenshot of the report that shows them in colour."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from headless_chromium import Chromium, find_chromium
from hostile_run import hostile_runs
from report_fixtures import EVIL, case, make_run, metric, realistic_run

from harness.core.types import Unit
from harness.report import render, render_html
from harness.report.chart_svg import PALETTE, UnsafeChart, check_svg
from harness.report.charts import build_charts

SVG = '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink">{}</svg>'


@pytest.mark.parametrize(
    "body",
    [
        "<script>alert(1)</script>",
        '<g onload="alert(1)"/>',
        '<use xlink:href="http://example.com/x.svg#a"/>',
        '<foreignObject><div xmlns="http://www.w3.org/1999/xhtml">x</div></foreignObject>',
        '<path style="fill: url(http://example.com/p)"/>',
        '<image href="http://example.com/x.png"/>',
    ],
)
def test_the_allowlist_refuses_markup_a_chart_never_needs(body: str) -> None:
    with pytest.raises(UnsafeChart):
        check_svg(SVG.format(body))


def test_the_allowlist_keeps_what_matplotlib_draws() -> None:
    check_svg(SVG.format('<defs><clipPath id="p1"><rect/></clipPath></defs>'))
    check_svg(SVG.format('<g clip-path="url(#p1)"><use xlink:href="#m1"/><text>1</text></g>'))


def _keys(run_charts: list) -> list[str]:  # type: ignore[type-arg]
    return [c.key for c in run_charts]


def _throughput(model: str, prompt: int, decode: float, share: float | None = None):  # type: ignore[no-untyped-def]
    metrics = [metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, decode, decode + 1)]
    if share is not None:
        metrics.append(metric("throughput.decode_hw_share", Unit.RATIO, share))
    return case(model, "throughput", point={"prompt_tokens": prompt}, metrics=metrics)


@pytest.mark.parametrize(
    ("cases", "keys"),
    [
        ([], []),
        ([_throughput("m", 128, 50.0)], []),  # one prompt length: a row, not a curve
        ([_throughput("m", 128, 50.0), _throughput("m", 512, 40.0)], ["decode-vs-prompt_tokens"]),
        ([_throughput("m", 128, 50.0, 0.4)], []),  # one dot is a table row, not a chart
        ([_throughput("m", 128, 50.0, 0.4), _throughput("n", 128, 40.0, 0.3)], ["roofline-share"]),
        ([_throughput("m", 128, 50.0, 1.07), _throughput("n", 128, 50.0, 0.4)], []),  # one valid
        (
            [
                _throughput("m", 128, 50.0, 1.07),  # above 100%: the ceiling was wrong
                _throughput("n", 128, 50.0, 0.4),
                _throughput("o", 128, 45.0, 0.35),
            ],
            ["roofline-share"],
        ),
        (
            [
                case(
                    "m",
                    "prompt_cache",
                    metrics=[
                        metric("prompt_cache.speedup_x", Unit.RATIO, 3.0),
                        metric("prompt_cache.tokens_reused", Unit.TOKENS, 800.0),
                        metric("prompt_cache.tokens_recomputed", Unit.TOKENS, 200.0),
                    ],
                )
            ],
            [],  # one dot beside the ideal curve: the table says it
        ),
        (
            [
                replace(
                    case(
                        "m",
                        "serving",
                        metrics=[metric("serving.c2.ttft_p50_s", Unit.SECONDS, 0.03)],
                    ),
                    artifacts={"points": [{"key": "c2", "kind": "concurrency", "value": 2}]},
                )
            ],
            [],  # one load point
        ),
    ],
    ids=[
        "nothing",
        "one-length",
        "two-lengths",
        "one-dot",
        "roofline",
        "ceiling-invalid-leaves-one",
        "one-invalid",
        "cache-one-dot",
        "serving-one-point",
    ],
)
def test_a_chart_appears_only_when_its_data_exists(cases: list, keys: list[str]) -> None:  # type: ignore[type-arg]
    assert _keys(build_charts(make_run(cases))) == keys


def test_charts_are_drawn_from_numbers_only(tmp_path: Path) -> None:
    """The SVG of a run full of payloads equals its inert twin's; the legend shows the text."""
    hostile = hostile_runs([EVIL, "<script>alert(2)</script>"], tmp_path / "h")[1]
    twin = hostile_runs(["inert1", "inert2"], tmp_path / "t")[1]
    drawn, inert = build_charts(hostile), build_charts(twin)
    assert len(drawn) >= 5
    assert [c.svg for c in drawn] == [c.svg for c in inert]
    assert [item.label for item in drawn[0].legend] == [EVIL, "<script>alert(2)</script>"]
    assert all("<script" not in c.svg and "alert" not in c.svg for c in drawn)


def test_the_html_holds_each_chart_with_its_data_table() -> None:
    html = render_html(realistic_run())
    figures = re.findall(r'<figure class="chart" id="chart-([^"]+)">(.*?)</figure>', html, re.S)
    assert [key for key, _ in figures] == ["decode-vs-prompt_tokens", "prefill-vs-prompt_tokens"]
    for _, body in figures:
        assert (
            re.search(r'<svg [^>]*class="chart-svg"', body)
            and "<details><summary>Data (9 points)" in body
        )
    assert "&lt;script&gt;" not in "".join(body for _, body in figures)  # no model text in SVG


def test_a_run_without_chart_data_has_no_charts_section() -> None:
    run = make_run([case("m", "load", metrics=[metric("load.load_s", Unit.SECONDS, 0.4)])])
    assert 'id="charts"' not in render_html(run)


def _palette_pixels(png: Path) -> int:
    """Pixels of exactly the first three series colours (matplotlib's Pillow reads the PNG)."""
    import numpy as np
    from PIL import Image

    with Image.open(png) as image:
        pixels = np.asarray(image.convert("RGB"))
    found = 0
    for color in PALETTE[:3]:
        rgb = [int(color[i : i + 2], 16) for i in (1, 3, 5)]
        found += int(np.all(pixels == rgb, axis=-1).sum())
    return found


def test_a_screenshot_of_the_report_shows_the_charts(tmp_path: Path) -> None:
    binary = find_chromium()
    if binary is None:
        pytest.skip("chromium not found: `make system-deps` installs it")
    paths = render(realistic_run(), tmp_path / "report")
    assert '<section id="charts">' in paths.html.read_text()
    shot = Chromium(binary).screenshot(paths.html.as_uri(), tmp_path / "charts.png")
    assert _palette_pixels(shot) > 500  # the series' lines and dots, not a blank page


def test_a_case_whose_ceiling_is_invalid_is_left_out_of_the_roofline_chart() -> None:
    run = make_run(
        [
            _throughput("over", 128, 50.0, 1.07),
            _throughput("under", 128, 50.0, 0.4),
            _throughput("below", 512, 45.0, 0.35),
        ]
    )
    (chart,) = [c for c in build_charts(run) if c.key == "roofline-share"]
    assert [item.label for item in chart.legend] == ["under", "below"]
    assert "hardware" in chart.caption
