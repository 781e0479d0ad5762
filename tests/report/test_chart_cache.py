"""The chart cache: a chart drawn once is read back by a later render (matplotlib not called),
another chart's numbers or the drawing code make another key, a file that fails the SVG
allowlist or does not read is drawn again, and a cache that cannot be written is no cache."""

from __future__ import annotations

import functools
import os
from pathlib import Path

import pytest
from markupsafe import Markup

from harness.report import chart_cache, chart_svg
from harness.report.chart_cache import PER_FOLDER, drawn
from harness.report.chart_svg import Axes, Series, strip_svg, xy_svg

AXES = Axes("prompt tokens", "tokens/s")


def _xy(*ys: float) -> functools.partial[Markup]:
    xs = tuple(float(x) for x in range(len(ys)))
    return functools.partial(xy_svg, [Series("#2563eb", xs, ys)], AXES, salt="k")


def _draws(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The drawers matplotlib runs from now on (their names)."""
    calls: list[str] = []
    original = chart_svg._svg

    def counted(figure: object) -> Markup:
        calls.append("drawn")
        return original(figure)  # type: ignore[arg-type]

    monkeypatch.setattr(chart_svg, "_svg", counted)
    return calls


def _files(root: Path) -> list[Path]:
    return sorted((root / chart_cache.FOLDER).glob("*/*.svg"))


def test_a_chart_drawn_once_is_read_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _draws(monkeypatch)
    first = drawn(_xy(1.0, 2.0, 4.0), tmp_path)
    again = drawn(_xy(1.0, 2.0, 4.0), tmp_path)  # a new call with the same numbers
    assert calls == ["drawn"] and first == again and isinstance(again, Markup)
    assert first == _xy(1.0, 2.0, 4.0)()  # what drawing gives
    assert len(_files(tmp_path)) == 1


@pytest.mark.parametrize(
    ("one", "other"),
    [
        (_xy(1.0, 2.0, 4.0), _xy(1.0, 2.0, 4.5)),  # one number
        (
            _xy(1.0, 2.0),
            functools.partial(xy_svg, [Series("#dc2626", (0.0, 1.0), (1.0, 2.0))], AXES, salt="k"),
        ),
        (
            _xy(1.0, 2.0),
            functools.partial(
                xy_svg, [Series("#2563eb", (0.0, 1.0), (1.0, 2.0))], AXES, salt="other"
            ),
        ),
        (
            functools.partial(strip_svg, [1.0, 2.0], [1.5, 2.5], "s", salt="a"),
            functools.partial(strip_svg, [1.0, 2.0], [1.5, 2.5], "ms", salt="a"),
        ),
    ],
    ids=["a number", "a colour", "the salt", "the unit"],
)
def test_another_chart_is_another_key(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    one: functools.partial[Markup],
    other: functools.partial[Markup],
) -> None:
    calls = _draws(monkeypatch)
    assert drawn(one, tmp_path) == one()
    assert drawn(other, tmp_path) == other()
    assert len(calls) == 4  # the two drawn through the cache and the two drawn directly
    assert len(_files(tmp_path)) == 2


def test_changed_drawing_code_draws_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = _draws(monkeypatch)
    drawn(_xy(1.0, 2.0), tmp_path)
    code = tmp_path / "chart_svg.py"
    code.write_text(Path(chart_svg.__file__).read_text() + "\n# changed\n")
    monkeypatch.setattr(chart_svg, "__file__", str(code))
    drawn(_xy(1.0, 2.0), tmp_path)
    assert calls == ["drawn", "drawn"]


@pytest.mark.parametrize(
    "content",
    [
        b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
        b'<svg xmlns="http://www.w3.org/2000/svg"><rect onload="x()"/></svg>',
        b"<svg xmlns=",  # cut
        b"\xff\xfe not utf-8",
    ],
    ids=["a script", "an event attribute", "cut", "not text"],
)
def test_a_file_that_fails_the_allowlist_is_drawn_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: bytes
) -> None:
    expected = drawn(_xy(3.0, 1.0), tmp_path)
    (kept,) = _files(tmp_path)
    kept.write_bytes(content)
    calls = _draws(monkeypatch)
    assert drawn(_xy(3.0, 1.0), tmp_path) == expected
    assert calls == ["drawn"] and kept.read_text() == str(expected)  # replaced


def test_a_cache_that_cannot_be_written_is_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    calls = _draws(monkeypatch)
    assert drawn(_xy(1.0, 2.0), blocked) == drawn(_xy(1.0, 2.0), blocked) == _xy(1.0, 2.0)()
    assert len(calls) == 3


def test_other_callables_are_drawn_as_they_are(tmp_path: Path) -> None:
    svg = Markup("<svg></svg>")
    assert drawn(lambda: svg, tmp_path) is svg
    assert drawn(functools.partial(lambda: svg), tmp_path) is svg
    assert not (tmp_path / chart_cache.FOLDER).exists()


def test_each_folder_keeps_its_most_recently_used(tmp_path: Path) -> None:
    folder = tmp_path / "f"
    folder.mkdir()
    for n in range(PER_FOLDER + 5):
        path = folder / f"{n:02d}.svg"
        path.write_text("x")
        os.utime(path, (n, n))
    chart_cache._prune(folder)
    kept = sorted(p.name for p in folder.iterdir())
    assert kept == [f"{n:02d}.svg" for n in range(5, PER_FOLDER + 5)]
