"""Scenarios: one folder each (``harness/scenarios/<name>/``), registered by name (built-ins
here, plug-ins by entry point). The modules beside the folders are the shared ones (the
protocol, artifacts, prompts, ...); a folder uses its own modules and the shared ones, never
another folder's (tests/scenarios/test_folders.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness.core.registry import Registry
from harness.scenarios.base import missing_parts

if TYPE_CHECKING:
    from harness.scenarios.base import Scenario

# Packages here that are shared, not scenarios: the streamed-request load engine.
SHARED_PACKAGES: tuple[str, ...] = ("streams",)

BUILT_IN: dict[str, str] = {  # a built-in scenario: its folder's SCENARIO
    "load": "harness.scenarios.load:SCENARIO",
    "throughput": "harness.scenarios.throughput:SCENARIO",
    "prompt_cache": "harness.scenarios.prompt_cache:SCENARIO",
    "prompt_cache_lru": "harness.scenarios.prompt_cache_lru:SCENARIO",
    "tool_calls": "harness.scenarios.tool_calls:SCENARIO",
    "toolcalls_corpus": "harness.scenarios.toolcalls_corpus:SCENARIO",
    "quality": "harness.scenarios.quality:SCENARIO",
    "kv_sweep": "harness.scenarios.kv_sweep:SCENARIO",
    "speech_to_text": "harness.scenarios.speech_to_text:SCENARIO",
    "text_to_speech": "harness.scenarios.text_to_speech:SCENARIO",
    "vision_throughput": "harness.scenarios.vision_throughput:SCENARIO",
    "vision_prompt_cache": "harness.scenarios.vision_prompt_cache:SCENARIO",
    "template_contracts": "harness.scenarios.template_contracts:SCENARIO",
    "api_contracts": "harness.scenarios.api_contracts:SCENARIO",
    "http_throughput": "harness.scenarios.http_throughput:SCENARIO",
    "greedy_text": "harness.scenarios.greedy_text:SCENARIO",
    "speculative": "harness.scenarios.speculative:SCENARIO",
    "session": "harness.scenarios.session:SCENARIO",
    "structured_output": "harness.scenarios.structured_output:SCENARIO",
    "http_prompt_cache": "harness.scenarios.http_prompt_cache:SCENARIO",
    "serving": "harness.scenarios.serving:SCENARIO",
    "saturation": "harness.scenarios.saturation:SCENARIO",
    "stall": "harness.scenarios.stall:SCENARIO",
    "context_limit": "harness.scenarios.context_limit:SCENARIO",
    "http_speculative": "harness.scenarios.http_speculative:SCENARIO",
    "benchmark": "harness.scenarios.benchmark:SCENARIO",
    "batch_generate": "harness.scenarios.batch_generate:SCENARIO",
    "trace_replay": "harness.scenarios.trace_replay:SCENARIO",
    "cancellation": "harness.scenarios.cancellation:SCENARIO",
    "soak": "harness.scenarios.soak:SCENARIO",
    "quant_sweep": "harness.scenarios.quant_sweep:SCENARIO",
    "reasoning": "harness.scenarios.reasoning:SCENARIO",
    "distributed": "harness.scenarios.distributed:SCENARIO",
}

SCENARIOS: Registry[Scenario[Any]] = Registry(
    "scenario",
    BUILT_IN,
    group="mlx_harness.scenarios",
    missing=missing_parts,
    fix="subclass harness.api.BaseScenario, which declares the optional ones",
)
