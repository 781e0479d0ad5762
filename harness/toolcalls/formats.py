"""Tool-call formats: which implementations parse each, the model's thinking markers, its markup.

A format is named after its mlx-lm tool parser module where mlx-lm has one, otherwise after the
model family (``gemma3_tool_code``, ``function_xml``, and the formats only mlx-vlm parses).
"""

from __future__ import annotations

import importlib.util
import pkgutil
from dataclasses import dataclass

from harness.toolcalls.model import ParserOwner

THINK = ("<think>", "</think>")


@dataclass(frozen=True)
class Dialect:
    """What the model's tokenizer tells mlx-lm besides the parser (see tokenizer_utils.py)."""

    think: tuple[str, str] | None = None  # _infer_thinking: (start, end) found in the vocab
    structural_markers: tuple[str, ...] = ()  # _infer_structural_markers (XTML vocabularies)
    response_format: str | None = None  # mlx_lm.chat_templates module with a RESPONSE_FORMAT


@dataclass(frozen=True)
class Format:
    name: str
    family: str
    markup: tuple[str, ...]  # text that belongs to call markup and must never reach the content
    dialect: Dialect = Dialect()
    mlx_lm: str | None = None  # mlx_lm.tool_parsers.<module>
    mlx_vlm: str | None = None  # mlx_vlm.tools.parsers.<module>
    harness: str | None = None  # harness.toolcalls.<module> (reference parser)
    # harness.toolcalls.<module> that reads a model's own tokens in this markup, whatever
    # release is installed (:mod:`harness.toolcalls.own_reading`); not one of the
    # implementations the corpus judges
    reader: str | None = None

    @property
    def own_reader(self) -> str | None:
        """The harness module that reads calls in this markup (None: none here)."""
        return self.reader or self.harness


@dataclass(frozen=True)
class Implementation:
    backend: ParserOwner
    module: str
    format: Format

    @property
    def id(self) -> str:
        return f"{self.backend.value}.{self.module}"


_TC = ("<tool_call>", "</tool_call>")
_GLM = (*_TC, "<arg_key>", "</arg_key>", "<arg_value>", "</arg_value>")
_XTML = ("<|open|>response<|sep|>", "<|close|>response<|sep|>", "<|close|>message<|sep|>")

FORMATS: tuple[Format, ...] = (
    Format(
        "json_tools",
        "Qwen2.5/Qwen3, Hermes",
        _TC,
        Dialect(THINK),
        "json_tools",
        "json_tools",
        reader="ref_hermes_json",
    ),
    Format(
        "qwen3_coder",
        "Qwen3-Coder, Qwen3.5",
        (*_TC, "<function=", "</function>", "<parameter=", "</parameter>"),
        Dialect(THINK),
        "qwen3_coder",
        "qwen3_coder",
        reader="ref_function_xml",
    ),
    Format("glm47", "GLM-4.5/4.6/4.7", _GLM, Dialect(THINK), "glm47", "glm47"),
    Format("laguna", "Poolside Laguna (GLM-4.7 markup)", _GLM, Dialect(THINK), "laguna", "glm47"),
    Format(
        "function_gemma",
        "FunctionGemma",
        ("<start_function_call>", "<end_function_call>", "<escape>"),
        Dialect(),
        "function_gemma",
    ),
    Format(
        "gemma4",
        "Gemma 4",
        ("<|tool_call>", "<tool_call|>", '<|"|>'),
        Dialect(("<|channel>thought", "<channel|>")),
        "gemma4",
        "gemma4",
        reader="ref_gemma4",
    ),
    Format(
        "kimi_k2",
        "Kimi K2",
        (
            "<|tool_calls_section_begin|>",
            "<|tool_calls_section_end|>",
            "<|tool_call_begin|>",
            "<|tool_call_end|>",
            "<|tool_call_argument_begin|>",
        ),
        Dialect(THINK),
        "kimi_k2",
        "kimi_k2",
    ),
    Format(
        "kimi_k3",
        "Kimi K3 (XTML)",
        ("<|open|>tools<|sep|>", "<|close|>tools<|sep|>", "<|open|>call", "<|open|>argument"),
        Dialect(("<|open|>think<|sep|>", "<|close|>think<|sep|>"), _XTML),
        "kimi_k3",
    ),
    Format(
        "longcat",
        "LongCat-Flash",
        ("<longcat_tool_call>", "</longcat_tool_call>", "<longcat_arg_key>", "<longcat_arg_value>"),
        Dialect(("<longcat_think>", "</longcat_think>")),
        "longcat",
        "longcat",
    ),
    Format(
        "minicpm5",
        "MiniCPM5",
        ("<function name=", "</function>", "<param name=", "</param>"),
        Dialect(THINK),
        "minicpm5",
        "minicpm5",
    ),
    Format(
        "minimax_m2",
        "MiniMax-M2",
        ("<minimax:tool_call>", "</minimax:tool_call>", "<invoke name=", "<parameter name="),
        Dialect(THINK),
        "minimax_m2",
        "minimax_m2",
    ),
    Format(
        "mistral",
        "Mistral, Devstral, Magistral",
        ("[TOOL_CALLS]", "[ARGS]"),
        Dialect(),
        "mistral",
        "mistral",
        reader="ref_mistral",
    ),
    Format(
        "muse_spark",
        "Muse Spark (ATEM)",
        ("<atem:function_calls>", "</atem:function_calls>", "<atem:invoke", "<atem:parameter"),
        Dialect(response_format="muse_spark"),
        "muse_spark",
        "atem",
    ),
    Format(
        "pythonic",
        "LFM2, Llama 3.2 pythonic",
        ("<|tool_call_start|>", "<|tool_call_end|>"),
        Dialect(THINK),
        "pythonic",
        "pythonic",
        reader="ref_pythonic",
    ),
    Format(
        "harmony",
        "gpt-oss (harmony)",
        ("<|channel|>commentary to=", "<|call|>", "<|constrain|>"),
        mlx_vlm="harmony",
    ),
    Format("minimax_m3", "MiniMax M3", ("]<]minimax[>[",), mlx_vlm="minimax_m3"),
    Format(
        "cohere2_moe",
        "Cohere Command A",
        ("<|START_ACTION|>", "<|END_ACTION|>"),
        mlx_vlm="cohere2_moe",
    ),
    Format(
        "gemma3_tool_code",
        "Gemma 3 (```tool_code``` blocks)",
        ("```tool_code",),
        harness="ref_gemma3_tool_code",
    ),
    Format(
        "function_xml",
        "Qwen3-Coder XML as llama.cpp accepts it (closing tags optional)",
        ("<function=", "</function>", "<parameter=", "</parameter>", *_TC),
        Dialect(THINK),
        harness="ref_function_xml",
    ),
)


def format_names() -> tuple[str, ...]:
    return tuple(f.name for f in FORMATS)


def get_format(name: str) -> Format | None:
    return next((f for f in FORMATS if f.name == name), None)


def _installed(package: str, module: str) -> bool:
    try:
        return importlib.util.find_spec(f"{package}.{module}") is not None
    except ModuleNotFoundError:
        return False


def implementations(fmt: Format) -> tuple[Implementation, ...]:
    """The installed implementations of a format, mlx-lm first."""
    found = []
    if fmt.mlx_lm and _installed("mlx_lm.tool_parsers", fmt.mlx_lm):
        found.append(Implementation(ParserOwner.MLX_LM, fmt.mlx_lm, fmt))
    if fmt.mlx_vlm and _installed("mlx_vlm.tools.parsers", fmt.mlx_vlm):
        found.append(Implementation(ParserOwner.MLX_VLM, fmt.mlx_vlm, fmt))
    if fmt.harness:
        found.append(Implementation(ParserOwner.HARNESS, fmt.harness, fmt))
    return tuple(found)


def resolve(name: str) -> tuple[Implementation, ...]:
    """``json_tools`` -> every installed implementation; ``mlx_vlm.json_tools`` -> just that one."""
    backend_name, _, module = name.partition(".")
    if module:
        wanted = [i for f in FORMATS for i in implementations(f) if i.id == name]
        return tuple(wanted[:1])
    fmt = get_format(backend_name)
    return implementations(fmt) if fmt is not None else ()


def installed_mlx_lm_parsers() -> tuple[str, ...]:
    """Module names in the installed ``mlx_lm.tool_parsers`` package."""
    try:
        import mlx_lm.tool_parsers as package
    except ImportError:
        return ()
    return tuple(sorted(m.name for m in pkgutil.iter_modules(package.__path__)))
