"""The report templates' bytecode cache: compiled once, reused by a later environment with the
same settings, never across settings that change the code, and never a lost report."""

from __future__ import annotations

from pathlib import Path

import jinja2
import pytest

from harness.report.template_cache import TemplateCache, template_cache

SOURCE = "{{ x }}|{% for i in items %}{{ i }}{% endfor %}"


def _env(cache: jinja2.BytecodeCache | None, *, autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.DictLoader({"t.j2": SOURCE}), autoescape=autoescape, bytecode_cache=cache
    )


def _compiles(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the templates jinja2 compiles from source from now on."""
    compiled: list[str] = []
    original = jinja2.Environment._compile

    def counted(self: jinja2.Environment, source: str, filename: str) -> object:
        compiled.append(filename)
        return original(self, source, filename)

    monkeypatch.setattr(jinja2.Environment, "_compile", counted)
    return compiled


def test_a_later_environment_reuses_the_compiled_template(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    compiled = _compiles(monkeypatch)
    first = _env(template_cache(tmp_path), autoescape=True).get_template("t.j2")
    again = _env(template_cache(tmp_path), autoescape=True).get_template("t.j2")
    assert len(compiled) == 1  # the second came from the cache
    values = {"x": "<b>", "items": [1, 2]}
    assert first.render(**values) == again.render(**values) == "&lt;b&gt;|12"


@pytest.mark.parametrize("first_autoescape", [True, False])
def test_autoescape_is_part_of_the_key(tmp_path: Path, first_autoescape: bool) -> None:
    """An HTML partial compiled with autoescape is never served to an environment without it
    (nor the reverse): jinja2's own key (name and file) would serve it."""
    cache = template_cache(tmp_path)
    first = _env(cache, autoescape=first_autoescape).get_template("t.j2").render(x="<b>", items=[])
    other = _env(cache, autoescape=not first_autoescape).get_template("t.j2")
    shown = other.render(x="<b>", items=[])
    assert {first, shown} == {"&lt;b&gt;|", "<b>|"}


def test_a_cache_that_cannot_be_written_is_no_cache(tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert template_cache(blocked) is None  # the folder cannot be made under a file
    gone = TemplateCache(str(tmp_path / "missing"))  # writing into it fails: compiled each time
    for _ in range(2):
        assert _env(gone, autoescape=True).get_template("t.j2").render(x="&", items=[]) == "&amp;|"


def test_a_cut_cache_file_is_compiled_again(tmp_path: Path) -> None:
    cache = template_cache(tmp_path)
    assert cache is not None
    _env(cache, autoescape=True).get_template("t.j2")
    (stored,) = Path(cache.directory).iterdir()
    stored.write_bytes(stored.read_bytes()[:20])
    rendered = _env(cache, autoescape=True).get_template("t.j2").render(x="<", items=[3])
    assert rendered == "&lt;|3"
