"""The scenario contract: every built-in is a whole typed Scenario, model needs and backend needs
stay apart, and a model without a capability is narrowed to a skip that names it."""

from __future__ import annotations

import pytest

from harness.backends.base import BackendCapability, LoadInfo
from harness.backends.fake import FakeModel
from harness.probe.types import Capability
from harness.scenarios import SCENARIOS
from harness.scenarios.api_contracts import ApiContractsParams
from harness.scenarios.base import BaseScenario, Params, Scenario, ScenarioContext, lacks
from harness.scenarios.batch_generate import BatchGenerateParams
from harness.scenarios.benchmark import BenchmarkParams
from harness.scenarios.cancellation import CancellationParams
from harness.scenarios.context_limit import ContextLimitParams
from harness.scenarios.distributed import DistributedParams
from harness.scenarios.greedy_text import GreedyTextParams
from harness.scenarios.http_prompt_cache import HttpPromptCacheParams
from harness.scenarios.http_speculative import HttpSpeculativeParams
from harness.scenarios.http_throughput import HttpThroughputParams
from harness.scenarios.kv_sweep import KVSweepParams
from harness.scenarios.load import LoadParams
from harness.scenarios.prompt_cache import PromptCacheParams
from harness.scenarios.prompt_cache_lru import LruParams
from harness.scenarios.quality import QualityParams
from harness.scenarios.quant_sweep import QuantSweepParams
from harness.scenarios.reasoning import ReasoningParams
from harness.scenarios.saturation import SaturationParams
from harness.scenarios.serving import ServingParams
from harness.scenarios.session import SessionParams
from harness.scenarios.soak import SoakParams
from harness.scenarios.speculative import SpeculativeParams
from harness.scenarios.speech_to_text import SpeechToTextParams
from harness.scenarios.stall import StallParams
from harness.scenarios.structured_output import StructuredOutputParams
from harness.scenarios.template_contracts import TemplateContractsParams
from harness.scenarios.text_to_speech import TextToSpeechParams
from harness.scenarios.throughput import ThroughputParams
from harness.scenarios.tool_calls import ToolCallsParams
from harness.scenarios.toolcalls_corpus import CorpusParams
from harness.scenarios.trace_replay import TraceReplayParams
from harness.scenarios.vision_prompt_cache import VisionPromptCacheParams
from harness.scenarios.vision_throughput import VisionThroughputParams
from tests.scenarios.minimal_scenario import MinimalScenario

TEXT = BackendCapability.TEXT_GENERATION
CACHE = BackendCapability.PROMPT_CACHE
TOOLS = BackendCapability.TOOL_PARSING

# (scenario, params model, model needs (probe), backend needs (declared))
CONTRACTS: list[tuple[str, type[Params], set[Capability], set[BackendCapability]]] = [
    ("load", LoadParams, set(), set()),
    ("throughput", ThroughputParams, {Capability.TEXT}, {TEXT}),
    ("prompt_cache", PromptCacheParams, {Capability.TEXT}, {TEXT, CACHE}),
    ("prompt_cache_lru", LruParams, {Capability.TEXT}, {TEXT, CACHE}),
    ("tool_calls", ToolCallsParams, {Capability.CHAT}, {TEXT, TOOLS}),
    ("toolcalls_corpus", CorpusParams, set(), set()),
    ("quality", QualityParams, {Capability.TEXT}, {TEXT}),
    ("speculative", SpeculativeParams, {Capability.TEXT},
     {TEXT, BackendCapability.DRAFT_DECODING}),
    ("batch_generate", BatchGenerateParams, {Capability.TEXT},
     {TEXT, BackendCapability.BATCH_GENERATION}),
    ("quant_sweep", QuantSweepParams, {Capability.TEXT},
     {TEXT, BackendCapability.WEIGHT_QUANTIZATION}),
    ("distributed", DistributedParams, {Capability.TEXT}, {TEXT}),
    # in process (constrained decoding) or served (HTTP): either will do, checked when it runs
    ("structured_output", StructuredOutputParams, set(), set()),
    # in process (a prompt cache) or served (HTTP): either will do, checked when it runs
    ("session", SessionParams, set(), set()),
    # in process (text generation) or served (HTTP): either will do, checked when it runs
    ("context_limit", ContextLimitParams, set(), set()),
    # in process (text generation) or served (HTTP): either will do, checked when it runs
    ("reasoning", ReasoningParams, set(), set()),
    ("http_speculative", HttpSpeculativeParams, set(), {BackendCapability.HTTP}),
    # a quantized cache is an optional protocol of the model (KVQuantizedRuns), checked when run
    ("kv_sweep", KVSweepParams, {Capability.TEXT}, {TEXT}),
    ("speech_to_text", SpeechToTextParams, {Capability.AUDIO_IN}, {BackendCapability.AUDIO_IN}),
    ("text_to_speech", TextToSpeechParams, {Capability.TTS}, {BackendCapability.AUDIO_OUT}),
    ("vision_throughput", VisionThroughputParams, {Capability.VISION}, {BackendCapability.IMAGES}),
    ("serving", ServingParams, set(), {BackendCapability.HTTP}),
    ("trace_replay", TraceReplayParams, set(), {BackendCapability.HTTP}),
    ("saturation", SaturationParams, set(), {BackendCapability.HTTP}),
    ("stall", StallParams, set(), {BackendCapability.HTTP}),
    ("cancellation", CancellationParams, set(), {BackendCapability.HTTP}),
    ("soak", SoakParams, set(), {BackendCapability.HTTP}),
    ("api_contracts", ApiContractsParams, set(), {BackendCapability.HTTP}),
    ("http_throughput", HttpThroughputParams, set(), {BackendCapability.HTTP}),
    ("http_prompt_cache", HttpPromptCacheParams, set(), {BackendCapability.HTTP}),
    # in process (text generation) or served (HTTP): either will do, checked when it runs
    ("greedy_text", GreedyTextParams, set(), set()),
    ("vision_prompt_cache", VisionPromptCacheParams, {Capability.VISION},
     {BackendCapability.IMAGES, CACHE}),
    ("template_contracts", TemplateContractsParams, {Capability.CHAT}, {TEXT}),
    # a pytest-benchmark test's timings, recorded by the bridge: nothing runs in a worker
    ("benchmark", BenchmarkParams, set(), set()),
]  # fmt: skip


def test_the_table_covers_every_builtin() -> None:
    assert {row[0] for row in CONTRACTS} == set(SCENARIOS.names())


@pytest.mark.parametrize(("name", "params", "needs", "backend_needs"), CONTRACTS)
def test_builtin_scenarios_are_whole_typed_scenarios(
    name: str,
    params: type[Params],
    needs: set[Capability],
    backend_needs: set[BackendCapability],
) -> None:
    scenario = SCENARIOS.get(name)
    assert isinstance(scenario, Scenario) and isinstance(scenario, BaseScenario)
    assert scenario.name == name and scenario.params_model is params
    assert scenario.needs == needs and all(type(c) is Capability for c in scenario.needs)
    assert scenario.backend_needs == backend_needs
    assert all(type(c) is BackendCapability for c in scenario.backend_needs)


_Minimal = MinimalScenario


def test_the_base_class_gives_the_defaults() -> None:
    minimal = _Minimal()
    assert isinstance(minimal, Scenario)
    assert minimal.needs == frozenset() and minimal.backend_needs == frozenset()
    assert minimal.repeats_apply and minimal.workload(LoadParams()) is None


def _ctx(model: object) -> ScenarioContext:
    info = LoadInfo(0.0, 0, "none")
    return ScenarioContext(model, info, 1, 0, lambda: (model, info), backend="toy")


# (scenario, params, the capability a fake model (text generation only) lacks, or a plain object)
NARROWED = [
    ("prompt_cache", PromptCacheParams(prompt_tokens=16), FakeModel({}), "prompt cache"),
    ("prompt_cache_lru", LruParams(), FakeModel({}), "prompt cache"),
    ("tool_calls", ToolCallsParams(), FakeModel({}), "tool parsing"),
    ("throughput", ThroughputParams(), object(), "text generation"),
]


@pytest.mark.parametrize(("name", "params", "model", "label"), NARROWED)
def test_a_model_without_the_capability_is_a_skip_naming_it(
    name: str, params: Params, model: object, label: str
) -> None:
    output = SCENARIOS.get(name).run(_ctx(model), params)
    assert output.skip_reason == f"capability_missing: backend toy has no {label}"
    assert output.metrics == () and not output.failures


def test_lacks_names_the_backend_of_the_context() -> None:
    output = lacks(_ctx(object()), BackendCapability.AUDIO_OUT)
    assert output.skip_reason == "capability_missing: backend toy has no audio output"
