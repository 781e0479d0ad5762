"""template_contracts over planted templates (jinja2, a fake tokenizer of one id per word)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import jinja2
import pytest

from harness.backends.base import BackendError
from harness.scenarios.template_contracts import CHECKS, CheckVerdict, cannot_render

BOS = 7
PLAIN = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
DOUBLE = "<s>" + PLAIN
NO_SYSTEM = "{% for m in messages if m.role != 'system' %}<{{ m.role }}>{{ m.content }}{% endfor %}"
FOLD = (
    "{% for m in messages if m.role != 'system' %}<{{ m.role }}>"
    "{% if loop.first and messages[0].role == 'system' %}{{ messages[0].content }}\n\n"
    "{% endif %}{{ m.content }}{% endfor %}"
)
REJECT_SYSTEM = "{% if messages[0].role == 'system' %}{{ raise('no system') }}{% endif %}" + PLAIN
ALTERNATE = (
    "{% for m in messages %}{% if loop.index0 > 0 and m.role == messages[loop.index0 - 1].role %}"
    "{{ raise('roles must alternate') }}{% endif %}<{{ m.role }}>{{ m.content }}{% endfor %}"
)
TOOLS = "{% if tools %}{{ tools[0].function.name }}{% endif %}" + PLAIN
THINK = "{% if enable_thinking %}<think>{% endif %}" + PLAIN


def _raise(message: str) -> None:
    raise jinja2.TemplateError(message)


class Planted:
    """A chat model whose template is ``template``; ``strict`` rejects unknown keywords, as
    some processors do; ``engine_bos`` adds BOS to the chat tokens again."""

    def __init__(self, template: str, *, strict: bool = False, engine_bos: bool = False) -> None:
        env = jinja2.Environment()
        env.globals["raise"] = _raise
        self.template = env.from_string(template)
        self.strict = strict
        self.engine_bos = engine_bos
        self.bos_token_id: int | None = BOS

    def chat_template_text(self) -> str:
        return "planted"

    def render_chat(self, messages: Sequence[Mapping[str, Any]], **kw: Any) -> str:
        if self.strict and kw:
            raise BackendError(f"chat template: TypeError: unexpected keyword {sorted(kw)[0]}")
        try:
            return self.template.render(messages=list(messages), **kw)
        except jinja2.TemplateError as exc:
            raise BackendError(f"chat template: TemplateError: {exc}") from exc

    def _ids(self, text: str) -> list[int]:
        return [BOS if word == "<s>" else 1 for word in text.replace("<s>", " <s> ").split()]

    def encode_prompt(self, text: str) -> list[int]:
        return [BOS, *self._ids(text)]

    def chat_tokens(self, messages: Sequence[Mapping[str, Any]], **_: Any) -> list[int]:
        ids = self._ids(self.render_chat(messages))
        return [BOS, *ids] if self.engine_bos else ids


def _check(name: str, model: Planted) -> tuple[CheckVerdict, str]:
    check = {c.__name__: c for c in CHECKS}[name]
    result = check(model)  # type: ignore[operator]
    assert "\n" not in result.evidence and result.evidence
    return result.verdict, result.outcome


@pytest.mark.parametrize(
    ("check", "model", "verdict", "outcome"),
    [
        ("double_bos", Planted(PLAIN), CheckVerdict.PASS, "single"),
        ("double_bos", Planted(DOUBLE), CheckVerdict.WARN, "text_path_double"),
        ("double_bos", Planted(DOUBLE, engine_bos=True), CheckVerdict.FAIL, "engine_double"),
        ("system_role", Planted(PLAIN), CheckVerdict.PASS, "supported"),
        ("system_role", Planted(FOLD), CheckVerdict.PASS, "folded"),
        ("system_role", Planted(REJECT_SYSTEM), CheckVerdict.PASS, "rejected"),
        ("system_role", Planted(NO_SYSTEM), CheckVerdict.FAIL, "dropped"),
        ("alternation", Planted(PLAIN), CheckVerdict.PASS, "not_enforced"),
        ("alternation", Planted(ALTERNATE), CheckVerdict.PASS, "enforced"),
        ("tools_kwarg", Planted(TOOLS), CheckVerdict.PASS, "rendered"),
        ("tools_kwarg", Planted(PLAIN), CheckVerdict.WARN, "ignored"),
        ("tools_kwarg", Planted(TOOLS, strict=True), CheckVerdict.WARN, "rejected"),
        ("thinking_kwarg", Planted(THINK), CheckVerdict.PASS, "honoured"),
        ("thinking_kwarg", Planted(PLAIN), CheckVerdict.PASS, "ignored"),
        ("thinking_kwarg", Planted(THINK, strict=True), CheckVerdict.WARN, "rejected"),
    ],
)
def test_checks(check: str, model: Planted, verdict: CheckVerdict, outcome: str) -> None:
    assert _check(check, model) == (verdict, outcome)


def test_no_bos_is_not_applicable() -> None:
    model = Planted(DOUBLE)
    model.bos_token_id = None
    assert _check("double_bos", model) == (CheckVerdict.NOT_APPLICABLE, "no_bos")


BROKEN = "{{ raise('Chat messages should be dicts, but got ' ~ messages[0].content) }}"


def test_a_renderer_that_fails_on_every_turn_is_broken_not_strict() -> None:
    """mlx-vlm under transformers 5.24 raised on every render; each check alone read the error
    as the template's refusal (alternation 'enforced', system 'rejected'). The scenario first
    renders one plain user turn and fails on the renderer's own error."""
    broken = Planted(BROKEN)
    assert _check("alternation", broken) == (CheckVerdict.PASS, "enforced")  # the trap
    line = cannot_render(broken)
    assert line is not None and "\n" not in line
    assert line.startswith("the template cannot render one plain user turn")
    assert "Chat messages should be dicts" in line
    for good in (PLAIN, ALTERNATE, REJECT_SYSTEM, FOLD):
        assert cannot_render(Planted(good)) is None
