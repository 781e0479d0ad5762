"""Number, label and escaping rules, as tables of input -> expected string."""

from __future__ import annotations

import math

import pytest

from harness.core.types import Status, Unit
from harness.report.escape import md_escape, one_line, plain, safe_link
from harness.report.formatting import (
    MISSING,
    choose_scale,
    format_stat,
    format_value,
    params_label,
    status_label,
    worst_status,
)

MIB = 1024**2
GIB = 1024**3


@pytest.mark.parametrize(
    ("value", "unit", "expected"),
    [
        (412.345, Unit.TOKENS_PER_SECOND, "412.3 tok/s"),
        (0.04, Unit.TOKENS_PER_SECOND, "0.0 tok/s"),
        (12345.67, Unit.TOKENS_PER_SECOND, "12.3 k tok/s"),
        (24640.0, Unit.TOKENS_PER_SECOND, "24.6 k tok/s"),
        (0.0125, Unit.SECONDS, "12.5 ms"),
        (0.00342, Unit.SECONDS, "3.42 ms"),
        (0.2417, Unit.SECONDS, "242 ms"),
        (0.9999, Unit.SECONDS, "1000 ms"),
        (1.0, Unit.SECONDS, "1.00 s"),
        (12.345, Unit.SECONDS, "12.35 s"),
        (600.0, Unit.SECONDS, "600.0 s"),
        (512 * MIB, Unit.BYTES, "512.0 MiB"),
        (1.5 * GIB, Unit.BYTES, "1.50 GiB"),
        (300 * 1024, Unit.BYTES, "300.0 KiB"),
        (512, Unit.BYTES, "512 B"),
        (128, Unit.TOKENS, "128 tokens"),
        (2.345, Unit.RATIO, "2.35x"),
        (3, Unit.COUNT, "3"),
        (0.25, Unit.COUNT, "0.25"),
        (math.nan, Unit.SECONDS, MISSING),
        (math.inf, Unit.TOKENS_PER_SECOND, MISSING),
        (None, Unit.BYTES, MISSING),
    ],
)
def test_format_value(value: float | None, unit: Unit, expected: str) -> None:
    assert format_value(value, unit) == expected


@pytest.mark.parametrize(
    ("unit", "values", "median", "stddev", "n", "expected"),
    [
        (Unit.TOKENS_PER_SECOND, [60.0], 60.52, 0.71, 5, "60.5 ± 0.7"),
        (Unit.TOKENS_PER_SECOND, [60.0], 60.52, 0.0, 5, "60.5 ± 0.0"),
        (Unit.TOKENS_PER_SECOND, [60.0], 60.52, 0.71, 1, "60.5"),
        (Unit.SECONDS, [0.0162], 0.0162, 0.00036, 5, "16.2 ± 0.4"),
        (Unit.SECONDS, [0.15, 3.5], 0.153, 0.0023, 5, "0.15 ± 0.002"),  # column in s
        (Unit.SECONDS, [0.001, 1.4], 0.00104, 0.0002, 5, "1.04 ± 0.20"),  # ms: never 0.00 s
        (Unit.BYTES, [700 * MIB], 700 * MIB, 2 * MIB, 3, "700.0 ± 2.0"),
        (Unit.SECONDS, [1.0], math.nan, math.nan, 0, MISSING),
    ],
)
def test_format_stat(
    unit: Unit, values: list[float], median: float, stddev: float, n: int, expected: str
) -> None:
    assert format_stat(median, stddev, n, choose_scale(unit, values)) == expected


@pytest.mark.parametrize(
    ("unit", "values", "label"),
    [
        (Unit.SECONDS, [0.01, 0.5], "ms"),
        (Unit.SECONDS, [0.01, 1.5], "ms"),  # 10 ms would read 0.01 s
        (Unit.SECONDS, [0.1, 1.5], "s"),
        (Unit.TOKENS_PER_SECOND, [20.0, 24640.0], "tok/s"),
        (Unit.TOKENS_PER_SECOND, [12000.0, 24640.0], "k tok/s"),
        (Unit.SECONDS, [math.nan], "ms"),
        (Unit.BYTES, [10 * MIB, 2 * GIB], "GiB"),
        (Unit.BYTES, [10 * MIB, math.nan], "MiB"),
        (Unit.TOKENS_PER_SECOND, [], "tok/s"),
    ],
)
def test_column_scale_is_shared(unit: Unit, values: list[float], label: str) -> None:
    assert choose_scale(unit, values).label == label


@pytest.mark.parametrize(
    ("point", "params", "expected"),
    [
        ({"prompt_tokens": 128}, {"gen_tokens": 32, "prompt_tokens": 128}, "pp128 tg32"),
        ({"gen_tokens": 64}, {}, "tg64"),
        ({"prompt_tokens": 512, "batch": 4}, {"temp": 0.0}, "pp512 batch=4"),
        ({}, {"temp": 0.0}, MISSING),
        ({}, {"gen_tokens": 16}, "tg16"),
    ],
)
def test_params_label(point: dict[str, object], params: dict[str, object], expected: str) -> None:
    assert params_label(point, params) == expected


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (Status.PASSED, "✅ passed"),
        (Status.FAILED, "❌ failed"),
        (Status.CRASHED, "💥 crashed"),
        (Status.TIMED_OUT, "⏱ timed_out"),
        (Status.SKIPPED, "⏭ skipped"),
        (Status.XFAILED, "⚠ xfailed"),
        (Status.XPASSED, "❗ xpassed"),
        (Status.ERRORED, "⛔ errored"),
    ],
)
def test_status_label(status: Status, expected: str) -> None:
    assert status_label(status) == expected


@pytest.mark.parametrize(
    ("statuses", "worst"),
    [
        ([Status.PASSED, Status.PASSED], Status.PASSED),
        ([Status.PASSED, Status.SKIPPED], Status.SKIPPED),
        ([Status.XFAILED, Status.FAILED], Status.FAILED),
        ([Status.FAILED, Status.CRASHED, Status.TIMED_OUT], Status.CRASHED),
        ([Status.ERRORED, Status.TIMED_OUT], Status.TIMED_OUT),
        ([], Status.PASSED),
    ],
)
def test_worst_status(statuses: list[Status], worst: Status) -> None:
    assert worst_status(statuses) == worst


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain text", "plain text"),
        ("a | b", r"a \| b"),
        ("`code`", r"\`code\`"),
        ("<script>alert(1)</script>", "&lt;script>alert(1)&lt;/script>"),
        ("line1\nline2\r\nline3", "line1<br>line2<br>line3"),
        ("![img](http://x/y.png)", r"!\[img\](http://x/y.png)"),
        ("back\\slash", "back\\\\slash"),
        ("bell\x07esc\x1b[31m", r"bell\\x07esc\\x1b\[31m"),  # shown, never dropped
        ("rtl\u202eoverride\u2066", r"rtl\\u202eoverride\\u2066"),
        ("ImagesKwargs.__init__() got", r"ImagesKwargs.\_\_init\_\_() got"),
        ("throughput.decode_tps", "throughput.decode_tps"),  # inside a word: never emphasis
        ("*bold* and ~~gone~~", r"\*bold\* and \~\~gone\~\~"),
    ],
)
def test_md_escape(text: str, expected: str) -> None:
    assert md_escape(text) == expected


@pytest.mark.parametrize(
    ("url", "kept"),
    [
        ("https://github.com/ml-explore/mlx-lm/issues/1", True),
        ("http://example.com/a?b=c", True),
        ("javascript:alert(1)", False),
        ("data:text/html,<script>", False),
        ("https://", False),
        ("https://x.com/a b", False),
        ("", False),
        (None, False),
    ],
)
def test_safe_link(url: str | None, kept: bool) -> None:
    assert (safe_link(url) is not None) is kept


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("\n\nfirst line\nsecond", 100, "first line"),
        ("a    b\tc", 100, "a b c"),
        ("x" * 20, 10, "x" * 9 + "…"),
        (None, 10, ""),
    ],
)
def test_one_line(text: str | None, limit: int, expected: str) -> None:
    assert one_line(text, limit) == expected


def test_plain_shows_terminal_escapes() -> None:
    assert plain("\x1b[31mred\x1b[0m\nnext", 40) == "\\x1b[31mred\\x1b[0m next"
