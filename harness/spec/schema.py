"""The suite schema (pydantic, unknown keys forbidden). ``mlx-harness schema`` prints it."""

from __future__ import annotations

import datetime as dt
from enum import Enum
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from harness.core.value_errors import value_error
from harness.probe.types import Capability
from harness.probe.types import Library as ProbeBackend
from harness.results.fail_on import FailOn
from harness.scenarios.second_model import SecondModel as DraftRef
from harness.spec.fields import ONE_OR_MANY, ByteCount, Globs, Ints, enum_schema, known_name
from harness.spec.marker_names import tag_problem
from harness.spec.pin_sets import PinSet, unique_names
from harness.spec.repeats import Repeats
from harness.spec.versions import version_problem

SUITE_SCHEMA_VERSION = 1


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


def _marker_tag(tag: str) -> str:
    problem = tag_problem(tag)
    if problem is not None:
        raise value_error(*problem)
    return tag


# a tag is also a pytest marker (``-m TAG``), so it must be a name pytest takes
MarkerTag = Annotated[str, AfterValidator(_marker_tag)]


class Defaults(Strict):
    repeats: Repeats = Field(3, description="measured repetitions per case: a number or auto")
    warmup: int = Field(1, ge=0, description="warm-up runs per case, kept apart from samples")
    timeout_s: float = Field(600.0, gt=0, description="wall-clock limit per case (and per load)")
    cooldown_s: float = Field(
        0.0,
        ge=0,
        le=3600,
        description="seconds to sleep before each case, so a hot machine cools (counts "
        "towards timeout_s)",
    )
    wait_for_quiet_s: float = Field(
        0.0,
        ge=0,
        le=3600,
        description="the most seconds to wait before each case for other processes to take "
        "under 25% of the CPU for a second (counts towards timeout_s); a case measured busy "
        "anyway is flagged, and one whose gate missed there is measured once more after a "
        "wait as long (60 s when 0)",
    )
    memory_threshold: float = Field(
        0.70,
        gt=0,
        le=1,
        description="share of the machine's memory a model may take before the policy blocks "
        "(vision models) or warns (others); 0.70 as in the field",
    )


class SelectSource(str, Enum):
    """Where a selector looks for models."""

    EMBEDDED = "embedded"  # the harness's embedded models (mlx-harness models list), if prepared
    HF_CACHE = "hf_cache"  # the local Hugging Face cache (HF_HUB_CACHE / HF_HOME), main snapshot
    DIRS = "dirs"  # model directories under the selector's roots


class Selector(Strict):
    """Models chosen from what is available, by what their files declare (the probe).

    Every filter given must hold; lists inside one filter are alternatives, except
    ``capability`` and ``tags``, which need all of theirs.
    """

    source: list[SelectSource] | None = Field(
        None,
        description="where to look; default: embedded and hf_cache, plus dirs when roots are given",
    )
    roots: list[str] = Field(
        default_factory=list,
        description="directories holding model directories (relative to the file); source dirs",
    )
    name: Globs = Field(
        default_factory=list, description="globs on the model's name (zoo/*, mlx-community/*)"
    )
    exclude: Globs = Field(default_factory=list, description="globs on names to leave out")
    family: Globs = Field(
        default_factory=list, description="globs on config.json model_type (llama, qwen*)"
    )
    capability: Annotated[
        list[Annotated[Capability, known_name(Capability, "capability")]],
        ONE_OR_MANY,
        enum_schema(Capability),
    ] = Field(
        default_factory=list, description="capabilities the model must all have (chat, tools...)"
    )
    backend: Annotated[
        list[Annotated[ProbeBackend, known_name(ProbeBackend, "backend")]],
        ONE_OR_MANY,
        enum_schema(ProbeBackend),
    ] = Field(
        default_factory=list, description="the library that loads it: mlx_lm, mlx_vlm, mlx_audio"
    )
    bits: Ints = Field(
        default_factory=list,
        description="bits per weight: quantization bits, else the stored float width (16, 32)",
    )
    max_weights: ByteCount | None = Field(None, description="largest weights size, e.g. 1 GB")
    fits_memory: bool = Field(
        False, description="only models whose memory estimate fits this machine's budget"
    )
    tags: list[str] = Field(
        default_factory=list, description="tags the model must all carry (embedded: zoo, real...)"
    )

    @field_validator("bits")
    @classmethod
    def _positive_bits(cls, value: list[int]) -> list[int]:
        if any(b < 1 for b in value):
            raise value_error("bits must be at least 1", "e.g. bits: 4, or bits: [4, 8]")
        return value

    @model_validator(mode="after")
    def _roots_and_dirs(self) -> Selector:
        if self.source is not None:
            if self.roots and SelectSource.DIRS not in self.source:
                raise value_error("'roots' given but 'source' has no 'dirs'", "add dirs to source")
            if SelectSource.DIRS in self.source and not self.roots:
                raise value_error(
                    "source 'dirs' needs 'roots:'", "add roots: [DIR, ...] (relative to the file)"
                )
        return self

    @property
    def sources(self) -> tuple[SelectSource, ...]:
        if self.source is not None:
            return tuple(dict.fromkeys(self.source))
        default = (SelectSource.EMBEDDED, SelectSource.HF_CACHE)
        return (*default, SelectSource.DIRS) if self.roots else default


class ServeEngine(str, Enum):
    """A server the harness starts itself for a model (``serve:``)."""

    MLX_LM = "mlx_lm"  # mlx_lm.server
    MLX_VLM = "mlx_vlm"  # mlx_vlm.server
    LLAMA_SERVER = "llama_server"  # llama.cpp's llama-server, on the model's GGUF
    MLX_AUDIO = "mlx_audio"  # mlx_audio.server (speech: transcriptions and speech)


DRAFT_ENGINES = frozenset({ServeEngine.MLX_LM, ServeEngine.LLAMA_SERVER})


class Serve(Strict):
    """Start a server for the model on a free loopback port and run its cases over HTTP."""

    engine: Annotated[ServeEngine, known_name(ServeEngine, "engine")] = Field(
        description="mlx_lm, mlx_vlm, llama_server or mlx_audio"
    )
    args: list[str] = Field(
        default_factory=list, description="extra command-line arguments for the server"
    )
    env: dict[str, str] = Field(
        default_factory=dict, description="extra environment variables for the server"
    )
    startup_timeout_s: float = Field(300.0, gt=0, description="time allowed to become healthy")
    draft: DraftRef | None = Field(
        None,
        description="a draft model for speculative decoding (mlx_lm, llama_server): "
        "`embedded: NAME` or `path: DIR`; mlx_lm gets --draft-model DIR, llama_server -md "
        "FILE.gguf --spec-type draft-simple",
    )
    draft_tokens: int | None = Field(
        None,
        ge=1,
        le=64,
        description="tokens the draft proposes a round (mlx_lm --num-draft-tokens, "
        "llama_server --spec-draft-n-max); unset: the engine's default",
    )
    chat_template: str | None = Field(
        None,
        description="mlx_lm: serve with this chat template (--chat-template TEXT): a shipped "
        "name (suites/data/toolcalls/templates, e.g. smollm2_tools) or a path to a .jinja file",
    )
    request_model: str | None = Field(
        None,
        description="the `model` name requests carry (unset: the served folder); "
        "`default_model` is mlx_lm.server's name for the model it was started with, which "
        "releases before 0.27 need (they refuse a request naming an absolute path)",
    )

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return {"engine": value} if isinstance(value, str) else value

    @model_validator(mode="after")
    def _draft_engine(self) -> Serve:
        if self.draft is not None and self.engine not in DRAFT_ENGINES:
            raise value_error(
                f"serve engine {self.engine.value} takes no draft",
                "a draft model works with mlx_lm and llama_server",
            )
        if self.draft_tokens is not None and self.draft is None:
            raise value_error("'draft_tokens' needs a 'draft'", "name the draft model")
        if self.chat_template is not None:
            from harness.toolcalls.shipped import template_path

            if self.engine is not ServeEngine.MLX_LM:
                raise value_error(
                    f"serve engine {self.engine.value} takes no chat_template",
                    "chat_template works with mlx_lm (--chat-template)",
                )
            template_path(self.chat_template)  # ValueError (one line) when unknown
        return self

    def template_args(self) -> tuple[str, ...]:
        """``--chat-template TEXT`` for ``chat_template`` (none when unset)."""
        if self.chat_template is None:
            return ()
        from harness.toolcalls.shipped import template_path

        return ("--chat-template", template_path(self.chat_template).read_text(encoding="utf-8"))


def _check_url(url: str) -> None:
    """A ``url:`` is the server's base: the harness adds ``/v1/...`` itself."""
    from urllib.parse import urlsplit

    path = urlsplit(url).path.rstrip("/")
    if path.endswith("/v1"):
        base = url.rstrip("/")[: -len("/v1")]
        raise value_error(
            f"url '{url}' ends in /v1: the harness adds /v1/chat/completions and the like "
            "itself, so every request would go to /v1/v1/...",
            f"write url: {base}",
        )


class ModelEntry(Strict):
    """A model: exactly one of ``path`` (local directory), ``hub`` (id) or ``embedded`` (name),
    or ``select`` (every available model that passes its filters). ``serve:`` runs its cases
    through a server the harness starts; ``url:`` names a running OpenAI-compatible server
    (alone, or with a local source for the tokenizer and the probe)."""

    name: str | None = Field(None, description="alias used in ids, expect and reports")
    path: str | None = Field(None, description="local model directory (relative to the suite)")
    hub: str | None = Field(None, description="Hugging Face id, resolved from the local cache")
    embedded: str | None = Field(None, description="embedded model, e.g. zoo/llama")
    select: Selector | None = Field(
        None, description="choose models from what is available; each is named by its source"
    )
    revision: str | None = Field(None, description="hub revision (branch, tag or commit)")
    backend: str = Field("mlx_lm", description="backend that loads it")
    serve: Serve | None = Field(
        None,
        description="serve it over HTTP: an engine name (mlx_lm, mlx_vlm, llama_server, "
        "mlx_audio) or "
        "{engine, args, startup_timeout_s}; the backend is then http",
    )
    url: str | None = Field(
        None,
        pattern=r"^https?://",
        description="base URL of a running OpenAI-compatible server (without /v1); the backend "
        "is then http",
    )
    api_key_env: str | None = Field(
        None,
        pattern=r"^[A-Za-z_][A-Za-z0-9_]*$",
        description="environment variable holding the url: server's API key",
    )
    served_model: str | None = Field(
        None, description="the model name requests to the url: server carry"
    )
    tags: list[MarkerTag] = Field(
        default_factory=list,
        description="pytest markers for its cases (-m TAG): letters, digits and _",
    )

    @model_validator(mode="after")
    def _one_source(self) -> ModelEntry:
        given = [k for k in ("path", "hub", "embedded", "select") if getattr(self, k)]
        self._check_server(given)
        if self.url is not None and not given:
            return self
        if len(given) != 1:
            raise value_error(
                "a model needs exactly one of 'path', 'hub', 'embedded' or 'select'"
                + (f" (got {', '.join(given)})" if given else ""),
                "keep one of them" if given else "e.g. embedded: zoo/llama",
            )
        if self.select is not None:
            extra = [k for k in ("name", "revision", "backend") if k in self.model_fields_set]
            if extra:
                hint = (
                    "filter with select.backend instead"
                    if extra[0] == "backend"
                    else "selected models are named by where they come from; remove it"
                )
                raise value_error(f"'{extra[0]}' cannot be used with 'select'", hint)
        return self

    def _check_server(self, given: list[str]) -> None:
        if self.serve is not None and self.url is not None:
            raise value_error(
                "'serve' and 'url' cannot both be given",
                "serve: starts a server, url: names a running one; keep one",
            )
        served = self.serve is not None or self.url is not None
        if served and "select" in given:
            raise value_error("'serve'/'url' cannot be used with 'select'", "name one model")
        if served and "backend" in self.model_fields_set and self.backend != "http":
            raise value_error(
                f"backend '{self.backend}' with 'serve'/'url': served models use backend http",
                "remove 'backend'",
            )
        if self.url is not None:
            _check_url(self.url)
        if self.url is None:
            for key in ("api_key_env", "served_model"):
                if getattr(self, key) is not None:
                    raise value_error(f"'{key}' needs 'url'", "add url: or remove it")

    @property
    def backend_name(self) -> str:
        """``http`` for a served model, else ``backend``."""
        return "http" if self.serve is not None or self.url is not None else self.backend

    @property
    def location(self) -> str:
        return str(self.path or self.hub or self.embedded or self.url)

    @property
    def key(self) -> str:
        if self.name:
            return self.name
        if self.path:
            return self.location.rstrip("/").split("/")[-1]
        if self.serve is not None:
            return f"{self.location}@{self.serve.engine.value}"
        return self.location


class ScenarioEntry(Strict):
    scenario: str = Field(description="registered scenario name, e.g. throughput")
    id: str | None = Field(
        None,
        pattern=r"^[A-Za-z0-9_.-]+$",
        description="name used in case ids instead of the scenario name (needed when one "
        "scenario is listed twice for a model)",
    )
    params: dict[str, Any] = Field(
        default_factory=dict, description="scenario parameters (see mlx-harness scenarios)"
    )
    sweep: dict[str, list[Any]] = Field(
        default_factory=dict, description="parameters to sweep; one case per combination"
    )
    models: list[str] | None = Field(
        None, description="restrict to these model names (or globs: zoo/*)"
    )
    repeats: Repeats | None = Field(None, description="measured repetitions (default: defaults)")
    warmup: int | None = Field(None, ge=0, description="warm-up runs (default: defaults)")
    timeout_s: float | None = Field(
        None, gt=0, description="wall-clock limit per case, seconds (default: defaults)"
    )
    gates: dict[str, str] = Field(
        default_factory=dict,
        description='metric -> gate for these cases, e.g. throughput.decode_tps: ">= 5"',
    )

    @field_validator("sweep")
    @classmethod
    def _non_empty(cls, value: dict[str, list[Any]]) -> dict[str, list[Any]]:
        for key, values in value.items():
            if not values:
                raise ValueError(f"sweep '{key}' needs at least one value")
        return value


class ExpectEntry(Strict):
    """A known outcome: strict xfail (an upstream fix shows as XPASS) or skip.

    An entry matches a case when all of model, scenario, family and backend match; the first
    matching entry wins. Shared ledgers (suites/known_broken.yaml) come in through ``include:``.
    """

    model: str = Field("*", description="model name or glob")
    scenario: Globs = Field(
        default_factory=lambda: ["*"],
        description="scenario name or glob, or a list of them; a suite entry's id: matches too",
    )
    family: str | None = Field(
        None, description="glob on the model's family (config.json model_type), e.g. llava"
    )
    backend: str | None = Field(None, description="glob on the backend that loads the model")
    versions: dict[str, str] = Field(
        default_factory=dict,
        description="installed package versions it applies to (PEP 440 specifiers), e.g. "
        '{transformers: ">=5.24", mlx-vlm: "<=0.7.10"}: all must match; a package that is '
        "not installed never matches",
    )
    status: Literal["xfail", "skip"]
    reason: str
    checks: list[str] = Field(
        default_factory=list,
        description="xfail only these named checks of a scenario that records a verdict per "
        "check (api_contracts): the case xfails when they are all that failed, fails when "
        "another check fails too, and XPASSes when they all pass",
    )
    link: str | None = None
    recheck: dt.date | None = Field(None, description="date to re-check this entry")
    strict: bool = True

    @field_validator("versions")
    @classmethod
    def _specifiers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, spec in value.items():
            problem = version_problem(name, spec)
            if problem is not None:
                raise value_error(*problem)
        return value

    @model_validator(mode="after")
    def _checks_xfail(self) -> ExpectEntry:
        if self.checks and self.status != "xfail":
            raise value_error(
                "'checks' is for an xfail entry", "use status: xfail, or drop 'checks'"
            )
        return self


class SideBySide(Strict):
    """How the report's **Models side by side** sets this suite's models: by default only
    variants of one model (quantisations: the same architecture and size) are compared;
    ``reference`` names the model every other one is compared with instead."""

    reference: str = Field(
        min_length=1,
        description="the model (its name in models:) every other model of this suite is "
        "compared with in the report's Models side by side",
    )


class IncludeFile(Strict):
    """A file named in ``include:``: shared model lists and known-broken entries."""

    schema_version: int = SUITE_SCHEMA_VERSION
    models: list[ModelEntry] = Field(default_factory=list)
    expect: list[ExpectEntry] = Field(default_factory=list)


class Suite(Strict):
    schema_version: Literal[1] = Field(description="suite format version")
    name: str | None = Field(None, description="defaults to the file name")
    description: str | None = None
    include: list[str] = Field(default_factory=list, description="files with models/expect")
    allow_download: bool = Field(False, description="allow hub downloads (offline by default)")
    defaults: Defaults = Field(default_factory=Defaults)  # type: ignore[arg-type]
    models: list[ModelEntry] = Field(default_factory=list)
    scenarios: list[ScenarioEntry]
    expect: list[ExpectEntry] = Field(default_factory=list)
    gates: dict[str, str] = Field(
        default_factory=dict, description='metric -> gate, e.g. throughput.decode_tps: ">= 5"'
    )
    pin_sets: list[PinSet] = Field(
        default_factory=list,
        description="package pin sets to run under (mlx-harness run SUITE --pin-set NAME)",
    )
    fail_on: list[FailOn | Literal["none"]] | None = Field(
        None,
        description="what besides failed cases fails a run of this suite (the exit rules' "
        "kinds; --fail-on overrides); default: nothing-ran, input-skip, unjudged-gates, "
        "not-comparable, new-failure",
    )
    side_by_side: SideBySide | None = Field(
        None,
        description="the report's Models side by side: {reference: MODEL} compares every "
        "model of this suite with that one (default: only variants of one model)",
    )
    baseline: str | None = Field(
        None,
        min_length=1,
        description="the run to compare with when --baseline is not given: a run folder or "
        "run.jsonl (relative to this file), or 'last': the latest earlier run of this suite in "
        "the report folder; a named run that is missing fails the run before it starts",
    )

    @field_validator("pin_sets")
    @classmethod
    def _unique_pin_sets(cls, value: list[PinSet]) -> list[PinSet]:
        unique_names(value)
        return value


def json_schema() -> dict[str, Any]:
    """JSON Schema of a suite file, for editors."""
    from harness.scenarios import SCENARIOS
    from harness.spec.scenario_params import scenario_variants

    schema = Suite.model_json_schema()
    defs, rules = scenario_variants()
    clash = [k for k in defs if schema["$defs"].get(k, defs[k]) != defs[k]]
    if clash:  # a params model named like a suite part: rename one of them
        raise RuntimeError(f"schema definitions named twice: {', '.join(clash)}")
    schema["$defs"].update(defs)
    entry = schema["$defs"]["ScenarioEntry"]
    entry["properties"]["scenario"]["enum"] = SCENARIOS.names()
    entry["allOf"] = rules  # params and sweep: the named scenario's, unknown keys rejected
    serve = schema["$defs"]["ModelEntry"]["properties"]["serve"]
    serve["anyOf"].insert(1, {"$ref": "#/$defs/ServeEngine"})  # the shorthand serve: mlx_lm
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["title"] = "mlx-harness suite"
    return schema
