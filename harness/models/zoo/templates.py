"""Chat templates of the families in the zoo, each with that family's tool-call markup.

The templates live as ``chat_templates/*.jinja`` files, written the way the real models ship
them (same whitespace control, same tool-call markup), so the tokenizer wrapper of mlx-lm infers
the same tool parser from them as it does from the real checkpoint (``_infer_tool_parser`` in
``mlx_lm/tokenizer_utils.py``). Next to each template: the special tokens its markup needs.
"""

from __future__ import annotations

from pathlib import Path

TEMPLATE_DIR = Path(__file__).parent / "chat_templates"


def load_template(name: str) -> str:
    """The chat template ``chat_templates/<name>.jinja``, without the file's final newline."""
    text = (TEMPLATE_DIR / f"{name}.jinja").read_text(encoding="utf-8")
    return text[:-1] if text.endswith("\n") else text


# ChatML with Hermes-style tool calls (Hermes fine-tunes of Llama, SmolLM3, ...): the Qwen 2.5
# template without its default system prompt. mlx-lm infers ``json_tools`` from ``<tool_call>``
# and ``tool_call.name``.
CHATML_TOOLS = load_template("chatml_hermes")
CHATML_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<tool_call>",
    "</tool_call>",
)

# Qwen2.5-Instruct: ChatML, default system prompt, Hermes ``<tool_call>`` JSON -> json_tools.
QWEN2_5 = load_template("qwen2_5")
QWEN2_5_SPECIAL_TOKENS = CHATML_SPECIAL_TOKENS

# Qwen3: ChatML with ``<think>`` blocks and the same Hermes JSON tool calls -> json_tools.
QWEN3 = load_template("qwen3")
# Qwen3.5/3.6 (and Kimi K2.5): the Qwen3 template whose generation prompt opens the think block
# (``<think>\n``) unless thinking is turned off, so an answer starts in reasoning.
QWEN3_THINK_OPEN = QWEN3.replace(
    "        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- endif %}",
    "        {{- '<think>\\n\\n</think>\\n\\n' }}\n    {%- else %}\n        {{- '<think>\\n' }}\n"
    "    {%- endif %}",
)
QWEN3_SPECIAL_TOKENS = (
    *CHATML_SPECIAL_TOKENS,
    "<tool_response>",
    "</tool_response>",
    "<think>",
    "</think>",
)

# Qwen3-Coder (a qwen3_moe model): XML calls ``<tool_call>\n<function=NAME>\n<parameter=...>``
# -> qwen3_coder.
QWEN3_CODER = load_template("qwen3_coder")
QWEN3_CODER_SPECIAL_TOKENS = QWEN3_SPECIAL_TOKENS

# Mistral-7B-Instruct-v0.3: ``[AVAILABLE_TOOLS]`` in the prompt, the model answers
# ``[TOOL_CALLS] [{"name": ..., "arguments": ...}]`` -> mistral. Token order as in v0.3.
MISTRAL_V3 = load_template("mistral_v3")
MISTRAL_V3_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[TOOL_CALLS]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
)

# Mistral-Small-3.2 / Devstral / Ministral (tekken tokenizers): ``[SYSTEM_PROMPT]`` and
# ``[AVAILABLE_TOOLS]`` first, calls written ``[TOOL_CALLS]name[ARGS]{...}`` with no end marker
# (the end of turn closes them) -> mistral. The zoo's mistral caller uses it (mlx-lm #1307 drops
# such calls).
MISTRAL_SMALL = load_template("mistral_small")
MISTRAL_SMALL_SPECIAL_TOKENS = (
    "<unk>",
    "<s>",
    "</s>",
    "[INST]",
    "[/INST]",
    "[AVAILABLE_TOOLS]",
    "[/AVAILABLE_TOOLS]",
    "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]",
    "[TOOL_CALLS]",
    "[SYSTEM_PROMPT]",
    "[/SYSTEM_PROMPT]",
    "[ARGS]",
)

# Phi-4-mini-instruct (model_type phi3): tools go in the system message between ``<|tool|>`` and
# ``<|/tool|>``; the model answers ``<|tool_call|>[...]<|/tool_call|>``. mlx-lm knows none of
# these markers, so no parser is inferred (Phi-3-mini's template has no tool support at all).
PHI4_MINI = load_template("phi4_mini")
PHI4_MINI_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|system|>",
    "<|user|>",
    "<|assistant|>",
    "<|end|>",
    "<|tool|>",
    "<|/tool|>",
    "<|tool_call|>",
    "<|/tool_call|>",
    "<|tool_response|>",
)

# Gemma 3: no tool markup in the template. Gemma's convention is prompt-level: tools described in
# the user turn, calls written as a ```tool_code fenced Python call; mlx-lm has no parser for it.
GEMMA3 = load_template("gemma3")
GEMMA3_SPECIAL_TOKENS = ("<pad>", "<eos>", "<bos>", "<unk>", "<start_of_turn>", "<end_of_turn>")

# LFM2: tools listed between ``<|tool_list_start|>`` and ``<|tool_list_end|>``; calls are Python
# lists ``<|tool_call_start|>[f(x=1)]<|tool_call_end|>`` -> pythonic. Token order as in LFM2.
LFM2 = load_template("lfm2")
LFM2_SPECIAL_TOKENS = (
    "<|pad|>",
    "<|startoftext|>",
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|tool_list_start|>",
    "<|tool_list_end|>",
    "<|tool_call_start|>",
    "<|tool_call_end|>",
    "<|tool_response_start|>",
    "<|tool_response_end|>",
)

# LFM2 with its assistant calls rendered: the LFM2 template above writes an assistant turn's
# content only; this one writes ``tool_calls`` in LFM2's pythonic markup,
# ``<|tool_call_start|>[get_weather(city="Paris")]<|tool_call_end|>`` (the Python list of calls
# Llama 3.2/4 write, between the markers mlx-lm needs to infer ``pythonic``), so a caller can be
# trained on it. The zoo's pythonic caller uses it.
LFM2_TOOLS = load_template("lfm2_tools")

# Gemma 4, compact: the real template's turns (``<|turn>user ... <turn|>``, the model's role
# ``model``), tool declarations (``<|tool>declaration:NAME{...}<tool|>``) and calls
# ``<|tool_call>call:NAME{key:<|"|>value<|"|>}<tool_call|>`` (``<|"|>`` quotes strings) ->
# gemma4. No thinking channel. The zoo's gemma4 caller uses it.
GEMMA4 = load_template("gemma4")
GEMMA4_SPECIAL_TOKENS = (
    "<pad>",
    "<eos>",
    "<bos>",
    "<unk>",
    "<|turn>",
    "<turn|>",
    "<|tool>",
    "<tool|>",
    "<|tool_call>",
    "<tool_call|>",
    "<|tool_response>",
    "<tool_response|>",
    '<|"|>',
)

# Qwen2-VL-Instruct (chat_template.json): ChatML, ``<|vision_start|><|image_pad|>...``; no tools.
QWEN2_VL = load_template("qwen2_vl")
QWEN2_VL_SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

# llava-1.5-hf (chat_template.json): ``USER: <image>\n... ASSISTANT:``; Llama 2 tokenizer with
# ``<image>`` and ``<pad>`` appended after the vocabulary. No tools.
LLAVA_1_5 = load_template("llava_1_5")
LLAVA_1_5_SPECIAL_TOKENS = ("<unk>", "<s>", "</s>")
LLAVA_1_5_APPENDED_TOKENS = ("<image>", "<pad>")
