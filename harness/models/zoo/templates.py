"""Chat templates of the families in the zoo, each with that family's tool-call markup."""

from __future__ import annotations

# ChatML with Hermes-style tool calls (Qwen 2/2.5/3, SmolLM, many llama fine-tunes).
# mlx-lm infers its ``json_tools`` parser from ``<tool_call>`` and ``tool_call.name``.
CHATML_TOOLS = (
    "{%- if tools %}<|im_start|>system\nYou may call functions. Available tools:\n"
    "{%- for tool in tools %}\n{{ tool | tojson }}{%- endfor %}\n"
    "Return a call as <tool_call>{\"name\": <name>, \"arguments\": <args>}</tool_call><|im_end|>\n"
    "{%- endif %}"
    "{%- for message in messages %}"
    "{%- if message.tool_calls %}<|im_start|>assistant\n"
    "{%- for tool_call in message.tool_calls %}"
    "{%- if tool_call.function %}{%- set tool_call = tool_call.function %}{%- endif %}"
    "<tool_call>\n{\"name\": \"{{ tool_call.name }}\", \"arguments\": "
    "{{ tool_call.arguments | tojson }}}\n</tool_call>{%- endfor %}<|im_end|>\n"
    "{%- else %}<|im_start|>{{ message.role }}\n{{ message.content }}<|im_end|>\n{%- endif %}"
    "{%- endfor %}"
    "{%- if add_generation_prompt %}<|im_start|>assistant\n{%- endif %}"
)

CHATML_SPECIAL_TOKENS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>", "</tool_call>")
