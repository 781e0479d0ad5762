"""The vision section: image rows beside the same model's text throughput, failures escaped."""

from __future__ import annotations

from report_fixtures import EVIL, case, make_run, metric

from harness.core.types import Status, Unit
from harness.report import render_html, render_markdown
from harness.report.vision import build


def image_case(model: str, images: int, px: int, status: Status = Status.PASSED, **kw):  # type: ignore[no-untyped-def]
    metrics = (
        [
            metric("vision_throughput.preprocess_s", Unit.SECONDS, 0.002, 0.003),
            metric("vision_throughput.ttft_s", Unit.SECONDS, 0.008, 0.009),
            metric("vision_throughput.decode_tps", Unit.TOKENS_PER_SECOND, 900.0, 950.0),
            metric("vision_throughput.image_tokens", Unit.TOKENS, 16.0 * images),
            metric("vision_throughput.prompt_tokens", Unit.TOKENS, 52.0 + 16 * images),
        ]
        if status is Status.PASSED
        else []
    )
    point = {"images": images, "image_px": px}
    return case(model, "vision_throughput", status, point=point, metrics=metrics, **kw)


def text_case(model: str):  # type: ignore[no-untyped-def]
    metrics = [
        metric("throughput.ttft_s", Unit.SECONDS, 0.004, 0.005),
        metric("throughput.decode_tps", Unit.TOKENS_PER_SECOND, 1200.0, 1300.0),
    ]
    return case(model, "throughput", metrics=metrics)


def test_no_image_cases_no_section() -> None:
    assert build(make_run([text_case("zoo-qwen2-vl")])) is None


def test_rows_text_first_then_images_and_failures_apart() -> None:
    run = make_run(
        [
            image_case("vlm", 2, 448),
            text_case("vlm"),
            image_case("vlm", 1, 224),
            text_case("text-only-model"),  # no image cases: not in this section
            image_case("llava", 1, 224, Status.XFAILED, reason="known: padding"),
        ]
    )
    section = build(run)
    assert section is not None
    rows = [[c.text for c in row] for row in section.table.rows]
    assert [r[0] for r in rows] == ["vlm", "vlm", "vlm"]
    assert [r[1] for r in rows] == ["throughput", "vision_throughput", "vision_throughput"]
    headers = [c.label for c in section.table.columns]
    assert "images (tokens)" in headers and "preprocess (ms)" in headers
    assert rows[1][headers.index("images (tokens)")] == "16"
    assert rows[2][headers.index("images (tokens)")] == "32"
    assert [(r[0].text, r[2].text, r[3].text) for r in section.not_passed.rows] == [
        ("llava", "xfailed", "known: padding")
    ]


def test_hostile_reason_is_escaped() -> None:
    run = make_run([image_case(EVIL, 1, 224, Status.FAILED, reason=EVIL)])
    html = render_html(run)
    md = render_markdown(run)
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    vision = md.split("## Vision", 1)[1].split("\n## ", 1)[0]
    assert "Image cases that did not pass" in vision
    assert not any(line.startswith("second line") for line in vision.splitlines())
